# Test and benchmark dependencies are optional: without them the tests or the
# benchmarks are skipped with a message, and memloupe itself still builds.
#   MEMLOUPE_WITH_TESTS  GoogleTest found and MEMLOUPE_TESTS on
#   MEMLOUPE_WITH_BENCH  Google Benchmark found and MEMLOUPE_BENCH on
set(MEMLOUPE_WITH_TESTS OFF)
if(MEMLOUPE_TESTS)
  find_package(GTest QUIET)
  if(GTest_FOUND)
    set(MEMLOUPE_WITH_TESTS ON)
  else()
    message(STATUS "GoogleTest not found: the tests are skipped (Debian: libgtest-dev)")
  endif()
endif()
if(MEMLOUPE_WITH_TESTS)
  enable_testing()
endif()

set(MEMLOUPE_WITH_BENCH OFF)
if(MEMLOUPE_BENCH)
  find_package(benchmark QUIET)
  if(benchmark_FOUND)
    set(MEMLOUPE_WITH_BENCH ON)
  else()
    message(STATUS "Google Benchmark not found: the benchmarks are skipped (Debian: libbenchmark-dev)")
  endif()
endif()
