// Prompts with images cut as mtmd cuts them (media_prompt.h).
#include "engine/media_prompt.h"

#include <fmt/format.h>
#include <algorithm>

#include "error.h"

namespace vkllm {

std::vector<PromptPart> split_image_prompt(const Tokenizer& tok, const ProjectorConfig& c, std::string_view prompt,
                                           size_t n_images, bool add_special) {
  std::vector<PromptPart> parts;
  auto text = [&](std::string_view s) {
    std::vector<int32_t> ids = tok.encode(s, false, true);
    if (ids.empty()) return;
    if (parts.empty() || parts.back().image >= 0) parts.push_back({});
    parts.back().tokens.insert(parts.back().tokens.end(), ids.begin(), ids.end());
  };
  size_t at = 0, images = 0;
  for (size_t m; (m = prompt.find(kMediaMarker, at)) != std::string_view::npos; at = m + kMediaMarker.size()) {
    text(prompt.substr(at, m - at));
    text(c.image_begin());
    parts.push_back({.image = int(images++)});
    text(c.image_end());
  }
  text(prompt.substr(at));
  ENSURE(images == n_images, fmt::format("the prompt has {} image marker{} for {} image{}", images,
                                         images == 1 ? "" : "s", n_images, n_images == 1 ? "" : "s"));
  if (add_special && tok.add_bos() && tok.bos() >= 0) {
    if (parts.empty() || parts.front().image >= 0) parts.insert(parts.begin(), PromptPart{});
    parts.front().tokens.insert(parts.front().tokens.begin(), tok.bos());
  }
  return parts;
}

uint32_t prompt_tokens(std::span<const PromptPart> parts, std::span<const VisionInput> images) {
  uint64_t n = 0;
  for (const PromptPart& p : parts) n += p.image >= 0 ? images[size_t(p.image)].grid.tokens() : p.tokens.size();
  return uint32_t(std::min<uint64_t>(n, UINT32_MAX));
}

}  // namespace vkllm
