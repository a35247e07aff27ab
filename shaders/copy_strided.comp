#version 450
#extension GL_GOOGLE_include_directive : require
// Strided copy of f32 slices: rows × cols slices of len values each, between any two layouts
// (element offsets and strides in the push constants, so views need no offset alignment).
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float dst[]; };
layout(push_constant) uniform PushBlock { CopyPush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.rows * p.cols * p.len) return;
  uint e = i % p.len, slice = i / p.len;
  uint c = slice % p.cols, r = slice / p.cols;
  dst[r * p.dst_row_stride + c * p.dst_col_stride + p.dst_offset + e] =
      src[r * p.src_row_stride + c * p.src_col_stride + p.src_offset + e];
}
