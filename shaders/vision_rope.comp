#version 450
#extension GL_GOOGLE_include_directive : require
// The vision encoders' 2D rope, in place (push_vision.h VisionRopePush): each pair of a head turns
// by one of the token's two grid positions, qwen's layout (pairs (i, i + d/2), rows then columns)
// or gemma4v's (NEOX within each half, columns then rows). One thread per pair.
#include "grid.glsl"
#include "push.h"
#include "rope_sincos.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Pos { int pos[]; };  // (2, n_tokens): a, then b
layout(std430, binding = 1) buffer X { float x[]; };
layout(push_constant) uniform PushBlock { VisionRopePush p; };

void main() {
  uint i = thread_index(WG);
  uint pairs = p.head_dim / 2u, q = p.head_dim / 4u;
  if (i >= p.n_tokens * p.n_heads * pairs) return;
  uint t = i / (p.n_heads * pairs), h = (i / pairs) % p.n_heads, pair = i % pairs;
  uint half_ = pair / q, j = pair % q;
  uint a = p.neox_halves != 0u ? half_ * 2u * q + j : half_ * q + j;
  uint b = a + (p.neox_halves != 0u ? q : 2u * q);
  float position = float(pos[half_ * p.n_tokens + t]);
  float s, c;
  sin_cos(position * exp2(-4.0 * float(j) / float(p.head_dim) * p.log2_base), s, c);
  uint base = t * p.token_stride + h * p.head_dim;
  float x0 = x[base + a], x1 = x[base + b];
  x[base + a] = x0 * c - x1 * s;
  x[base + b] = x0 * s + x1 * c;
}
