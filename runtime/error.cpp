// Out of line so that ENSURE expands to a branch and a call.
#include "error.h"

namespace vkllm {

void throw_error(const std::string& msg) { throw Error(msg); }

}  // namespace vkllm
