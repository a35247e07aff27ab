// The vision encoders' own kernels (model/graph/vision_encoder.cpp): the 2D rope, position
// embeddings added to the patch grid, average pooling, GELU-quick and clamping. Reference:
// model/reference/vision.h (ref::vision_rope, ref::add_vision_positions, ref::avg_pool) and
// elementwise.h (ref::gelu_quick, ref::clamp).
#pragma once
#include "buffer.h"
#include "stream.h"

namespace vkllm::ops {

// x (n_tokens, n_heads, head_dim) f32 in place, tokens token_stride floats apart (0: packed);
// positions (2, n_tokens) int32, the first position of every token then the second. neox_halves:
// false is qwen's layout, true gemma4v's (push_vision.h VisionRopePush). head_dim % 4 == 0.
struct VisionRopeParams {
  uint32_t n_tokens = 0, n_heads = 0, head_dim = 0, token_stride = 0;
  float base = 10000.0f;
  bool neox_halves = false;
};
void vision_rope(Stream& s, BufferView positions, BufferView x, const VisionRopeParams& p);

// x (n_tokens, n) += each token's position embedding from table (f32); positions (2, n_tokens)
// int32, rows then columns of the tokens' patches. Learned: table (rows·px, n), row row·px + col;
// Resized: table (side², n) resized to the patch grid bilinearly with aligned corners, sx and sy
// the scale factors (ref::resize_positions); AxisTables: table (2·n_pos, n), column table first.
enum class VisionPositions : uint32_t { Learned = 0, Resized = 1, AxisTables = 2 };
struct VisionPositionsParams {
  uint32_t n_tokens = 0, n = 0;
  VisionPositions mode = VisionPositions::Learned;
  uint32_t px = 0, side = 0, n_pos = 0;
  float sx = 1, sy = 1;
};
void vision_positions(Stream& s, BufferView table, BufferView positions, BufferView x, const VisionPositionsParams& p);

// y (py/k, px/k, n) = averages of x (py, px, n) over k x k blocks.
void avg_pool(Stream& s, BufferView x, BufferView y, uint32_t px, uint32_t py, uint32_t n, uint32_t k);

// y = x · sigmoid(1.702 x), elementwise.
void gelu_quick(Stream& s, BufferView x, BufferView y, uint32_t n);
// y = clamp(x, lo, hi), elementwise.
void clamp(Stream& s, BufferView x, BufferView y, uint32_t n, float lo, float hi);

}  // namespace vkllm::ops
