#version 450
#extension GL_GOOGLE_include_directive : require
// Rotary position embedding (docs/formats.md §3.1, 3.4, 3.5): rotates the first rot_dim elements of every
// head of every token by angles set by the token's position; the rest of the head is copied.
//   x: rows (token t, head h) at t * token_stride + h * head_stride, head_dim elements each, and
//      for a second tensor (k beside q) heads n_heads.. at offset2 + t * token_stride2 + ...
//   pos: (n_tokens) int32   ff: (rot_dim / 2) f32 frequency factors, bound only when HAS_FF
//   (the ops:: entry binds pos in its place otherwise)   y: laid out as x, may alias x
// One thread per pair. Pair i of NORM rope is (2i, 2i+1), of NEOX rope (i, i + rot_dim/2):
//   (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos) * mscale.
// Sectioned rope (Qwen3.5's M-RoPE): pairs of the 4th section turn with position 0, or each section with
// its own positions (section_stride > 0: image tokens' rows and columns).
// Accuracy: the angle pos * freq_i reaches thousands of radians, so each step avoids the f32
// pitfalls that cost more than the final rounding of the angle: freq_i comes from squaring the
// host's base^(-2/rot_dim) (not exp2 of a large argument), the angle is reduced by a three-part
// pi/2, and sin/cos are polynomials on [-pi/4, pi/4] (the same result on every vendor).
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const bool HAS_FF = false;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Pos { int pos[]; };
layout(std430, binding = 2) readonly buffer FF { float ff[]; };
layout(std430, binding = 3) buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { RopePush p; };

#define RP p
#include "rope_math.glsl"

void main() {
  uint g = thread_index(WG);
  uint half_head = p.head_dim / 2;
  if (g >= p.n_rows * half_head) return;
  uint row = g / half_head, j = g % half_head;
  uint heads = p.n_heads + p.n_heads2, t = row / heads, h = row % heads;
  uint base = h < p.n_heads ? t * p.token_stride + h * p.head_stride
                            : p.offset2 + t * p.token_stride2 + (h - p.n_heads) * p.head_stride;
  if (j >= p.rot_half) {  // beyond rot_dim: copied, two elements per thread
    uint d = 2u * j;
    y[base + d] = x[base + d];
    y[base + d + 1u] = x[base + d + 1u];
    return;
  }
  uint d0 = p.neox != 0u ? j : 2u * j;
  uint d1 = p.neox != 0u ? j + p.rot_half : 2u * j + 1u;
  float s, c;
  rope_angle(j, rope_position(j, t), s, c);
  float x0 = x[base + d0], x1 = x[base + d1];
  y[base + d0] = x0 * c - x1 * s;
  y[base + d1] = x0 * s + x1 * c;
}
