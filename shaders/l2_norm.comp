#version 450
#extension GL_GOOGLE_include_directive : require
// L2 norm, one workgroup per row: y = x / sqrt(sum x^2 + eps) (ref::l2_norm), over the q and k
// heads of the conv output (rows of `width` inside strided token rows).
//   row r = (token t, head h) at offset + t * token_stride + h * width of x and y; y may alias x
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;  // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(local_size_x_id = 0) in;
shared float red[WG];
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { L2NormPush p; };

void main() {
  uint row = group_index();
  if (row >= p.rows) return;  // uniform across the workgroup
  uint base = p.offset + (row / p.heads) * p.token_stride + (row % p.heads) * p.width;
  float ss = 0.0;
  for (uint i = gl_LocalInvocationIndex; i < p.width; i += WG) ss += x[base + i] * x[base + i];
  float scale = inversesqrt(workgroup_sum(ss) + p.eps);
  for (uint i = gl_LocalInvocationIndex; i < p.width; i += WG) y[base + i] = x[base + i] * scale;
}
