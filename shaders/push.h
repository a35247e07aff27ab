// Push-constant blocks, declared once for GLSL and C++, grouped by area in push_<area>.h.
// Rules: only 4-byte scalars (uint, int, float), so std430 and C++ agree byte for byte; at most
// 128 bytes (Stream::dispatch asserts). In GLSL:
//   layout(push_constant) uniform PushBlock { RmsnormPush p; };
#ifndef VKLLM_PUSH_H
#define VKLLM_PUSH_H

#ifdef __cplusplus
#include <cstdint>
namespace vkllm::push {
using uint = std::uint32_t;
#endif

#include "push_elementwise.h"

#ifdef __cplusplus
}  // namespace vkllm::push
#endif
#endif
