#version 450
#extension GL_GOOGLE_include_directive : require
// Clamp to [lo, hi], elementwise (gemma4v's clippable linears clamp their inputs and outputs).
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { ClampPush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.n) return;
  y[i] = min(max(x[i], p.lo), p.hi);
}
