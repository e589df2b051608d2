# The HTML report (html_*, assets/) and the exports (export_*), included from
# CMakeLists.txt in this folder.
find_package(ZLIB REQUIRED)

target_sources(memloupe_report PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/export_folded.cc
  ${CMAKE_CURRENT_LIST_DIR}/export_gzip.cc
  ${CMAKE_CURRENT_LIST_DIR}/export_massif.cc
  ${CMAKE_CURRENT_LIST_DIR}/export_pprof.cc
  ${CMAKE_CURRENT_LIST_DIR}/export_proto.cc
  ${CMAKE_CURRENT_LIST_DIR}/frame_names.cc
  ${CMAKE_CURRENT_LIST_DIR}/html_data.cc
  ${CMAKE_CURRENT_LIST_DIR}/html_json.cc
  ${CMAKE_CURRENT_LIST_DIR}/html_report.cc
  ${CMAKE_CURRENT_LIST_DIR}/profile_from_model.cc
  ${CMAKE_CURRENT_BINARY_DIR}/generated/html_assets.cc
)

# The script's parts, in the order they are joined (see assets/util.js).
set(_report_js_parts util data timeline flame sites page retention)
set(_report_assets
  ${CMAKE_CURRENT_LIST_DIR}/assets/report.html
  ${CMAKE_CURRENT_LIST_DIR}/assets/report.css)
foreach(part ${_report_js_parts})
  list(APPEND _report_assets ${CMAKE_CURRENT_LIST_DIR}/assets/${part}.js)
endforeach()
string(REPLACE ";" "," _report_js_list "${_report_js_parts}")
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/generated/html_assets.cc
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/generated
  COMMAND ${CMAKE_COMMAND}
    -DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/generated/html_assets.cc
    -DHTML=${CMAKE_CURRENT_LIST_DIR}/assets/report.html
    -DCSS=${CMAKE_CURRENT_LIST_DIR}/assets/report.css
    -DJS_DIR=${CMAKE_CURRENT_LIST_DIR}/assets
    -DJS_PARTS=${_report_js_list}
    -P ${CMAKE_CURRENT_LIST_DIR}/embed_assets.cmake
  DEPENDS ${_report_assets} ${CMAKE_CURRENT_LIST_DIR}/embed_assets.cmake
  COMMENT "Embedding the HTML report's assets")
target_link_libraries(memloupe_report PRIVATE ZLIB::ZLIB fmt::fmt)

memloupe_test(memloupe_report_export_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/export_proto_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/export_folded_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/export_massif_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/frame_names_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/html_data_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/html_report_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/profile_from_model_test.cc
  LIBS memloupe_report memloupe_test_profile memloupe_test_support
  LABELS report)
