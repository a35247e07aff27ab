#version 450
#extension GL_GOOGLE_include_directive : require
// y = cap * tanh(x / cap) elementwise over n floats (logit soft-capping, gemma2). y may alias x.
#include "grid.glsl"
#include "push.h"
#include "tanh.glsl"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { ScalePush p; };

void main() {
  uint i = thread_index(WG);
  if (i < p.n) y[i] = p.s * tanh_accurate(x[i] / p.s);
}
