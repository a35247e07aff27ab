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
// recorded graph replays unchanged for the next token. The step buffer holds one StepParams per
// sequence of the step, in batch order (a single-sequence forward has one); kernels bind it as
//   layout(std430, binding = N) readonly buffer StepBuf { StepParams seqs[]; };
// A sequence's tokens are consecutive in the batch (after those of the sequences before it) and
// sit at positions pos0 .. pos0 + n_tokens - 1; after they are stored its KV-cache slot holds
// n_kv = pos0 + n_tokens entries. Entries with n_tokens = 0 are unused (the engine fills the
// buffer before each submit; docs/decisions.md "Batches of sequences").
struct StepParams {
  uint pos0;
  uint n_tokens;
  uint n_kv;
  uint slot;  // the sequence's KV-cache slot: its keys are rows slot * max_kv .. of each KV head
};

#include "push_attention.h"
#include "push_copy.h"
#include "push_elementwise.h"
#include "push_linear.h"
#include "push_matmul.h"
#include "push_moe.h"
#include "push_position.h"
#include "push_vision.h"

#ifdef __cplusplus
}  // namespace vkllm::push
#endif
#endif
