# Test and benchmark dependencies are optional: without them the tests or the
# benchmarks are skipped with a message, and memloupe itself still builds.
#   MEMLOUPE_WITH_TESTS  GoogleTest found and MEMLOUPE_TESTS on
#   MEMLOUPE_WITH_BENCH  Google Benchmark found and MEMLOUPE_BENCH on

# Sets `result` ON when option `wanted` is on and `package` is found; says
# what is skipped otherwise.
macro(memloupe_optional_package result wanted package skipped)
  set(${result} OFF)
  if(${wanted})
    find_package(${package} QUIET)
    if(${package}_FOUND)
      set(${result} ON)
    else()
      message(STATUS "${skipped}")
    endif()
  endif()
endmacro()

memloupe_optional_package(MEMLOUPE_WITH_TESTS MEMLOUPE_TESTS GTest
  "GoogleTest not found: the tests are skipped (Debian: libgtest-dev)")
if(MEMLOUPE_WITH_TESTS)
  enable_testing()
endif()
memloupe_optional_package(MEMLOUPE_WITH_BENCH MEMLOUPE_BENCH benchmark
  "Google Benchmark not found: the benchmarks are skipped (Debian: libbenchmark-dev)")
