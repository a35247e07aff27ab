#version 450
#extension GL_GOOGLE_include_directive : require
// Greedy sampling without reading logits back: per row, the index of the largest value.
//   x: (rows, cols) f32   idx: (rows) int32
// Ties go to the lowest index, so the result is deterministic for any workgroup or subgroup size.
// NaN never wins; a row with no number at all gives -1.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;  // a power of two
layout(local_size_x_id = 0) in;
shared float red_v[WG];
shared uint red_i[WG];

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer I { int idx[]; };
layout(push_constant) uniform PushBlock { SelectPush p; };

const uint NONE = 0xffffffffu;

// (v, i) beats (bv, bi): larger value, or the same value at a lower index. NaN compares false.
bool better(float v, uint i, float bv, uint bi) { return v > bv || (v == bv && i < bi); }

void main() {
  uint row = group_index();
  if (row >= p.rows) return;  // uniform across the workgroup
  uint base = row * p.cols, t = gl_LocalInvocationIndex;
  float bv = uintBitsToFloat(0xff800000u);  // -inf, with no index: any number, -inf too, beats it
  uint bi = NONE;
  for (uint i = t; i < p.cols; i += WG) {
    float v = x[base + i];
    if (better(v, i, bv, bi)) bv = v, bi = i;
  }
  red_v[t] = bv, red_i[t] = bi;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (t < s && better(red_v[t + s], red_i[t + s], red_v[t], red_i[t]))
      red_v[t] = red_v[t + s], red_i[t] = red_i[t + s];
    barrier();
  }
  if (t == 0) idx[row] = red_i[0] == NONE ? -1 : int(red_i[0]);
}
