#version 450
#extension GL_GOOGLE_include_directive : require
// Squared ReLU, max(x, 0)^2 (llama.cpp's LLM_FFN_RELU_SQR: relu, then sqr), elementwise.
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
  float v = max(x[i], 0.0);
  y[i] = v * v;
}
