#version 450
#extension GL_GOOGLE_include_directive : require
// GELU-quick, x · sigmoid(1.702 x) (CLIP's quick_gelu; llama.cpp's ggml_gelu_quick), elementwise.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { UnaryPush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.n) return;
  float v = x[i];
  y[i] = v / (1.0 + exp(-1.702 * v));  // exp overflows to inf for v < -52: v / inf = -0, the limit
}
