// Base64 (RFC 4648) for the server: embeddings out as base64 floats, images in as data: URLs and
// Ollama's base64 strings.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace vkllm::serve {

std::string base64_encode(std::string_view bytes);
// The standard or the URL-safe alphabet, padding optional, whitespace skipped; none for anything
// else.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace vkllm::serve
