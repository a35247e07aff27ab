#version 450
#extension GL_GOOGLE_include_directive : require
// GELU, tanh approximation (as GGML and GPT-2 use): y = 0.5 x (1 + tanh(z)),
// z = sqrt(2/pi) (x + 0.044715 x^3). Computed as x * sigmoid(2z), the same function, because
// 1 + tanh(z) cancels for negative x and some tanh implementations return NaN for large |z|.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { UnaryPush p; };

const float SQRT_2_OVER_PI = 0.79788456080286536;

void main() {
  uint i = thread_index(WG);
  if (i >= p.n) return;
  float v = x[i];
  float z = SQRT_2_OVER_PI * v * (1.0 + 0.044715 * v * v);
  y[i] = v / (1.0 + exp(-2.0 * z));
}
