#version 450
#extension GL_GOOGLE_include_directive : require
// Llama 4's attention temperature (mistral3): each token's queries, in place, times
// 1 + beta * ln(floor(pos / length) + 1), pos the token's position (1 below `length`).
//   positions: (n_tokens) int32   x: (n_tokens, width) f32, tokens token_stride floats apart
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Pos { int pos[]; };
layout(std430, binding = 1) buffer X { float x[]; };
layout(push_constant) uniform PushBlock { TemperaturePush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.n_tokens * p.width) return;
  uint t = i / p.width;
  float f = 1.0 + p.beta * log(float(uint(pos[t]) / p.period) + 1.0);
  x[t * p.token_stride + i % p.width] *= f;
}
