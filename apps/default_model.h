// The default model (models/default.gguf), embedded in the vkllm binary at build time.
#pragma once
#include <cstddef>
#include <span>

namespace vkllm::cli {

std::span<const std::byte> default_model_bytes();

}  // namespace vkllm::cli
