#version 450
#extension GL_GOOGLE_include_directive : require
// LayerNorm, one workgroup per row: y = (x - mean) / sqrt(var + eps) * w (+ b), biased variance.
//   x: (rows, dim) f32   w: (dim) f32   b: (dim) f32, absent when HAS_BIAS is false (the ops::
//   entry then binds w in its place)   y: (rows, dim) f32, may alias x
// The variance is a second pass over (x - mean)^2, not E[x^2] - mean^2, which cancels badly
// when |mean| >> std.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;  // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(constant_id = 2) const bool HAS_BIAS = true;
layout(local_size_x_id = 0) in;
shared float red[WG];
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };
layout(std430, binding = 3) buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { NormPush p; };

void main() {
  uint row = group_index();
  if (row >= p.rows) return;  // uniform across the workgroup
  uint base = row * p.dim;
  float s = 0.0;
  for (uint i = gl_LocalInvocationIndex; i < p.dim; i += WG) s += x[base + i];
  float mean = workgroup_sum(s) / float(p.dim);
  float ss = 0.0;
  for (uint i = gl_LocalInvocationIndex; i < p.dim; i += WG) {
    float d = x[base + i] - mean;
    ss += d * d;
  }
  float inv_std = inversesqrt(workgroup_sum(ss) / float(p.dim) + p.eps);
  for (uint i = gl_LocalInvocationIndex; i < p.dim; i += WG) {
    float v = (x[base + i] - mean) * inv_std * w[i];
    y[base + i] = HAS_BIAS ? v + b[i] : v;
  }
}
