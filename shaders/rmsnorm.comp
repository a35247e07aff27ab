#version 450
#extension GL_GOOGLE_include_directive : require
// RMSNorm, one workgroup per row: y = x / sqrt(mean(x^2) + eps) * w (w = 1 with p.no_weight),
// or with ADD y += that (a block's post norm and its residual add in one pass).
//   x: (rows, dim) f32   w: (dim) f32   y: (rows, dim) f32, may alias x (not with ADD)
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;  // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(constant_id = 2) const bool ADD = false;
layout(local_size_x_id = 0) in;
shared float red[WG];
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { NormPush p; };

void main() {
  uint row = group_index();
  if (row >= p.rows) return;  // uniform across the workgroup
  uint base = row * p.dim;
  float ss = 0.0;
  for (uint i = gl_LocalInvocationIndex; i < p.dim; i += WG) ss += x[base + i] * x[base + i];
  float scale = inversesqrt(workgroup_sum(ss) / float(p.dim) + p.eps);
  for (uint i = gl_LocalInvocationIndex; i < p.dim; i += WG) {
    float v = x[base + i] * scale * (p.no_weight != 0 ? 1.0 : w[i]);
    y[base + i] = ADD ? y[base + i] + v : v;
  }
}
