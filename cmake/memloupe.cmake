# memloupe_test(NAME SOURCES a.cc b.cc LIBS lib1 lib2 [LABELS l])
# One GoogleTest executable, registered with ctest test by test. Without
# GoogleTest (cmake/optional_deps.cmake) the target is still declared, so the
# folders' own settings on it apply, but it is never built nor registered.
include(GoogleTest)
function(memloupe_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT MEMLOUPE_WITH_TESTS)
    add_executable(${name} EXCLUDE_FROM_ALL ${T_SOURCES})
    return()
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    MEMLOUPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    MEMLOUPE_BINARY_DIR="${PROJECT_BINARY_DIR}")
  # MEMLOUPE_CACHE_DIR: the inflated debug files' cache (symbolize/inflated_cache.h)
  # under the build tree, never in the home of whoever runs the tests.
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${T_LABELS}"
    ENVIRONMENT "MEMLOUPE_CACHE_DIR=${PROJECT_BINARY_DIR}/test-cache")
endfunction()
