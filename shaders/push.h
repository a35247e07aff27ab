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

// Values that change every step live in a small storage buffer, not in push constants, so that a
// recorded graph replays unchanged for the next token. Kernels that need them bind it as
//   layout(std430, binding = N) readonly buffer StepBuf { StepParams step; };
// This step's tokens sit at positions pos0 .. pos0 + n_tokens - 1; after they are stored the KV
// cache holds n_kv = pos0 + n_tokens entries (the engine fills it before each submit).
struct StepParams {
  uint pos0;
  uint n_tokens;
  uint n_kv;
  uint reserved;
};

#include "push_attention.h"
#include "push_copy.h"
#include "push_elementwise.h"
#include "push_matmul.h"
#include "push_moe.h"
#include "push_position.h"

#ifdef __cplusplus
}  // namespace vkllm::push
#endif
#endif
