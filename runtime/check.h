// Vulkan failures: every VkResult goes through VK_CHECK, which throws with the failing expression
// and its place. Active in release builds. Only apps' main() catches. Error and ENSURE: error.h.
#pragma once
#include <vulkan/vulkan.h>

#include "error.h"

namespace vkllm {

const char* to_string(VkResult r);

// A Vulkan call that failed; keeps the result so callers can tell OOM from the rest.
class VulkanError : public Error {
 public:
  VulkanError(VkResult result, const char* expr, const char* file, int line);
  VkResult result() const { return result_; }

 private:
  VkResult result_;
};

class DeviceLost : public VulkanError {
 public:
  using VulkanError::VulkanError;
};

[[noreturn]] void throw_vk(VkResult result, const char* expr, const char* file, int line);

}  // namespace vkllm

#define VK_CHECK(expr)                                                                                  \
  do {                                                                                                  \
    VkResult vk_check_result_ = (expr);                                                                 \
    if (vk_check_result_ != VK_SUCCESS) ::vkllm::throw_vk(vk_check_result_, #expr, __FILE__, __LINE__); \
  } while (0)
