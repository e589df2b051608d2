# Build step (cmake -P): turns the report's assets into C++ arrays, so the
# memloupe binary carries them and the HTML report needs no other file. The
# script's parts (JS_PARTS, comma-separated names in JS_DIR) are joined in order.
#   cmake -DOUTPUT=html_assets.cc -DHTML=report.html -DCSS=report.css
#         -DJS_DIR=assets -DJS_PARTS=util,data,page -P embed_assets.cmake
string(REPLACE "," ";" parts "${JS_PARTS}")
set(script "")
foreach(part IN LISTS parts)
  file(READ "${JS_DIR}/${part}.js" body)
  string(APPEND script "${body}\n")
endforeach()
get_filename_component(JS "${OUTPUT}.js" ABSOLUTE)
file(WRITE "${JS}" "${script}")

set(text "// Generated from src/report/assets by embed_assets.cmake; do not edit.\n")
string(APPEND text "#include \"report/html_assets.h\"\n\nnamespace memloupe::report {\n")
foreach(pair "kReportHtml;${HTML}" "kReportCss;${CSS}" "kReportJs;${JS}")
  list(GET pair 0 name)
  list(GET pair 1 path)
  file(READ "${path}" hex HEX)
  string(LENGTH "${hex}" digits)
  math(EXPR size "${digits} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," body "${hex}")
  # A line break every 20 bytes keeps the generated file readable by tools.
  string(REGEX REPLACE "(('\\\\x..',){20})" "\\1\n" body "${body}")
  string(APPEND text "static const char ${name}Bytes[] = {\n${body}0};\n")
  string(APPEND text "const std::string_view ${name}(${name}Bytes, ${size});\n\n")
endforeach()
string(APPEND text "}  // namespace memloupe::report\n")
file(WRITE "${OUTPUT}.tmp" "${text}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
