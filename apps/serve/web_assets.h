// The demo page's files (apps/serve/web/), embedded in the binary at build time by
// embed_web.cmake: vkllm serve answers GET / and GET /<file> from this table, never from disk.
#pragma once
#include <span>
#include <string_view>

namespace vkllm::serve {

struct WebAsset {
  std::string_view path;          // "/index.html", "/app.js", ...
  std::string_view content_type;  // from the file's extension
  std::string_view body;
};

// Every embedded file, in name order.
std::span<const WebAsset> web_assets();

// The file a GET of `path` answers with ("/" is "/index.html"); null when there is none.
const WebAsset* find_web_asset(std::string_view path);

}  // namespace vkllm::serve
