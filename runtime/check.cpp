// Formatting of Vulkan and invariant failures.
#include "check.h"

#include <fmt/format.h>

namespace vkllm {

const char* to_string(VkResult r) {
  switch (r) {
#define CASE(x) \
  case x:       \
    return #x;
    CASE(VK_SUCCESS)
    CASE(VK_NOT_READY)
    CASE(VK_TIMEOUT)
    CASE(VK_INCOMPLETE)
    CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    CASE(VK_ERROR_INITIALIZATION_FAILED)
    CASE(VK_ERROR_DEVICE_LOST)
    CASE(VK_ERROR_MEMORY_MAP_FAILED)
    CASE(VK_ERROR_LAYER_NOT_PRESENT)
    CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    CASE(VK_ERROR_TOO_MANY_OBJECTS)
    CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    CASE(VK_ERROR_FRAGMENTED_POOL)
    CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    CASE(VK_ERROR_FRAGMENTATION)
    CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    CASE(VK_PIPELINE_COMPILE_REQUIRED)
    CASE(VK_ERROR_UNKNOWN)
#undef CASE
    default:
      return "VK_RESULT_UNKNOWN";
  }
}

static std::string describe(VkResult r, const char* expr, const char* file, int line) {
  std::string what = fmt::format("{} failed: {} ({}:{})", expr, to_string(r), file, line);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY) what = "out of GPU memory: " + what;
  if (r == VK_ERROR_DEVICE_LOST)
    what += "; the GPU reset the device, often a driver watchdog timeout on a long dispatch";
  return what;
}

VulkanError::VulkanError(VkResult result, const char* expr, const char* file, int line)
    : Error(describe(result, expr, file, line)), result_(result) {}

void throw_vk(VkResult result, const char* expr, const char* file, int line) {
  if (result == VK_ERROR_DEVICE_LOST) throw DeviceLost(result, expr, file, line);
  throw VulkanError(result, expr, file, line);
}

}  // namespace vkllm
