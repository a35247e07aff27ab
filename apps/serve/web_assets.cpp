// Looks up the demo page's embedded files (the table itself is generated: embed_web.cmake).
#include "serve/web_assets.h"

namespace vkllm::serve {

const WebAsset* find_web_asset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const WebAsset& a : web_assets())
    if (a.path == path) return &a;
  return nullptr;
}

}  // namespace vkllm::serve
