// What the operating system says about host memory (Vulkan-free, in vkllm_core).
#pragma once
#include <cstdint>
#include <optional>

namespace vkllm {

// Memory the system can give without swapping (Linux's MemAvailable), or nothing where it does
// not say.
std::optional<uint64_t> available_host_memory();

}  // namespace vkllm
