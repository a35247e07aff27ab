#version 450
#extension GL_GOOGLE_include_directive : require
// Sigmoid gate: y = x * sigmoid(g) = x / (1 + exp(-g)), elementwise over n floats (ref::sigmoid_mul),
// the output gate of the full-attention layers of Qwen3.5/3.6; y may alias x.
// exp(-g) overflows to inf for g < -88: x / inf = 0, the right limit.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer G { float g[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { UnaryPush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.n) return;
  y[i] = x[i] / (1.0 + exp(-g[i]));
}
