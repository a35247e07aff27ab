// Error and ENSURE: the one-line failures a user can act on (bad input, missing feature, out of
// memory). Vulkan-free, so every layer may use it; Vulkan's own failures are in check.h.
#pragma once
#include <stdexcept>
#include <string>

namespace vkllm {

// what() is the one line apps print after "error: ".
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_error(const std::string& msg);

}  // namespace vkllm

// ENSURE(cond, message): message (anything convertible to std::string) is the one line
// the user reads, so it says what is wrong and with what. (Not named CHECK: Catch2 owns it.)
#define ENSURE(cond, msg)                   \
  do {                                      \
    if (!(cond)) ::vkllm::throw_error(msg); \
  } while (0)
