// Errors: every VkResult and every invariant goes through VK_CHECK / CHECK, which throw with
// the failing expression and its place. Active in release builds. Only apps' main() catches.
#pragma once
#include <stdexcept>
#include <string>
#include <vulkan/vulkan.h>

namespace vkllm {

const char* to_string(VkResult r);

// A failure a user can act on (bad input, missing feature, out of memory). what() is the
// one line apps print after "error: ".
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
[[noreturn]] void throw_error(const std::string& msg);

}  // namespace vkllm

#define VK_CHECK(expr)                                                  \
  do {                                                                  \
    VkResult vk_check_result_ = (expr);                                 \
    if (vk_check_result_ != VK_SUCCESS)                                 \
      ::vkllm::throw_vk(vk_check_result_, #expr, __FILE__, __LINE__);   \
  } while (0)

// ENSURE(cond, message): message (anything convertible to std::string) is the one line
// the user reads, so it says what is wrong and with what. (Not named CHECK: Catch2 owns it.)
#define ENSURE(cond, msg)                           \
  do {                                              \
    if (!(cond)) ::vkllm::throw_error(msg);         \
  } while (0)
