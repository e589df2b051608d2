# The retention views (retention_*, text_retention*), included from
# CMakeLists.txt in this folder.
target_link_libraries(memloupe_report PUBLIC memloupe_retention)
target_sources(memloupe_report PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/retention_html.cc
  ${CMAKE_CURRENT_LIST_DIR}/retention_json.cc
  ${CMAKE_CURRENT_LIST_DIR}/retention_names.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_retention.cc
  ${CMAKE_CURRENT_LIST_DIR}/text_retention_tree.cc
)

memloupe_test(memloupe_report_retention_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/retention_html_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/text_retention_test.cc
  LIBS memloupe_report memloupe_test_profile memloupe_test_support
  LABELS report retention)
