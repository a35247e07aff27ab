# Turns the demo page's files (apps/serve/web/*) into a C++ source: one byte array per file and
# the table serve::web_assets() returns, each file with the content type of its extension.
#   cmake -DWEB_DIR=<dir> -DNAMES=a.html,b.js, -DOUT=<file.cpp> -P embed_web.cmake
string(REPLACE "," ";" files "${NAMES}")
set(arrays "")
set(rows "")
set(i 0)
foreach(name ${files})
  if(IS_DIRECTORY ${WEB_DIR}/${name})
    message(FATAL_ERROR "embed_web: ${name}: subfolders are not embedded; keep the page's files flat")
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9_.-]+$")
    message(FATAL_ERROR "embed_web: ${name}: a file name must be letters, digits, '.', '_' or '-'")
  endif()
  get_filename_component(ext ${name} LAST_EXT)
  string(TOLOWER "${ext}" ext)
  if(ext STREQUAL ".html")
    set(type "text/html; charset=utf-8")
  elseif(ext STREQUAL ".css")
    set(type "text/css; charset=utf-8")
  elseif(ext STREQUAL ".js")
    set(type "text/javascript; charset=utf-8")
  elseif(ext STREQUAL ".svg")
    set(type "image/svg+xml")
  elseif(ext STREQUAL ".png")
    set(type "image/png")
  elseif(ext STREQUAL ".json")
    set(type "application/json")
  else()
    message(FATAL_ERROR "embed_web: ${name}: no content type known for '${ext}' (add it to embed_web.cmake)")
  endif()
  file(READ ${WEB_DIR}/${name} hex HEX)
  string(LENGTH "${hex}" n)
  math(EXPR bytes "${n} / 2")
  if(bytes EQUAL 0)
    message(FATAL_ERROR "embed_web: ${name} is empty")
  endif()
  string(REGEX REPLACE "(..)" "0x\\1," body "${hex}")
  string(APPEND arrays "// ${name}\nconst unsigned char file_${i}[${bytes}] = {\n${body}};\n")
  string(APPEND rows "    {\"/${name}\", \"${type}\", as_text(file_${i}, ${bytes})},\n")
  math(EXPR i "${i} + 1")
endforeach()
if(i EQUAL 0)
  message(FATAL_ERROR "embed_web: no files in ${WEB_DIR}")
endif()
file(WRITE ${OUT}.tmp "// Generated from apps/serve/web/ by apps/serve/embed_web.cmake; do not edit.
#include \"serve/web_assets.h\"

namespace vkllm::serve {

namespace {

std::string_view as_text(const unsigned char* p, size_t n) { return {reinterpret_cast<const char*>(p), n}; }

${arrays}
const WebAsset table[] = {
${rows}};

}  // namespace

std::span<const WebAsset> web_assets() { return table; }

}  // namespace vkllm::serve
")
# Only a changed file is rewritten, so an unchanged page recompiles nothing.
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
