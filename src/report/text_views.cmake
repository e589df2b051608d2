# The terminal views (text_*), included from CMakeLists.txt in this folder.
target_sources(memloupe_report PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/text_chart.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_describe.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_diff.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_format.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_leaks.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_lifetimes.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_mapped.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_sites.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_summary.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_table.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_timeline.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_top.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_types.cc
)

memloupe_test(memloupe_report_text_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/text_format_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/text_table_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/text_views_test.cc
  LIBS memloupe_report memloupe_test_support
  LABELS report)
