#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax over rows, one workgroup per row: y = exp(s x - max(s x)) / sum(exp(s x - max(s x))),
// s = scale (1/temperature when sampling, 1/sqrt(d) for attention scores). Three passes over the
// row (max, sum, write) so rows of any length (a 128256-entry vocabulary) need no shared storage.
//   x: (rows, cols) f32   y: (rows, cols) f32, may alias x
// -inf entries get probability 0; a row that is all -inf gives NaN (as the math does).
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;  // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(local_size_x_id = 0) in;
shared float red[WG];
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { SoftmaxPush p; };

void main() {
  uint row = group_index();
  if (row >= p.rows) return;  // uniform across the workgroup
  uint base = row * p.cols;
  float m = uintBitsToFloat(0xff800000u);  // -inf
  for (uint i = gl_LocalInvocationIndex; i < p.cols; i += WG) m = max(m, p.scale * x[base + i]);
  m = workgroup_max(m);
  float s = 0.0;
  for (uint i = gl_LocalInvocationIndex; i < p.cols; i += WG) s += exp(p.scale * x[base + i] - m);
  float inv = 1.0 / workgroup_sum(s);
  for (uint i = gl_LocalInvocationIndex; i < p.cols; i += WG) y[base + i] = exp(p.scale * x[base + i] - m) * inv;
}
