#version 450
#extension GL_GOOGLE_include_directive : require
// Second pass of split-K flash attention: one workgroup per (token, head) row merges the
// partial (m, l, acc) of every split into O = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s,
// M = max_s m_s (base-2 domain, as in flash_attn.glsl). A split that saw no key wrote m = NEG,
// l = 0 and weighs 0; a row with no visible key at all gets 0.
//   partial: O (n_splits, n_q, n_heads, dv) then (m, l) (n_splits, n_q, n_heads, 2) f32
//   o: (n_q, n_heads, dv) f32, row stride p.o_row_stride
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Partial { float part[]; };
layout(std430, binding = 1) writeonly buffer O { float o[]; };
layout(push_constant) uniform PushBlock { AttentionMergePush p; };

const float NEG = -1.0e30;  // as in attention_common.glsl

void main() {
  uint row = group_index();  // token * n_heads + head
  uint rows = p.n_q * p.n_heads;
  if (row >= rows) return;
  uint ml_base = p.n_splits * rows * p.dv;
  float m_max = NEG;
  for (uint s = 0; s < p.n_splits; ++s) m_max = max(m_max, part[ml_base + (s * rows + row) * 2]);
  float l = 0.0;
  for (uint s = 0; s < p.n_splits; ++s) {
    float m = part[ml_base + (s * rows + row) * 2];
    if (m != NEG) l += exp2(m - m_max) * part[ml_base + (s * rows + row) * 2 + 1];
  }
  uint token = row / p.n_heads, head = row % p.n_heads;
  for (uint j = gl_LocalInvocationIndex; j < p.dv; j += WG) {
    float acc = 0.0;
    for (uint s = 0; s < p.n_splits; ++s) {
      float m = part[ml_base + (s * rows + row) * 2];
      if (m != NEG) acc += exp2(m - m_max) * part[(s * rows + row) * p.dv + j];
    }
    o[token * p.o_row_stride + head * p.dv + j] = l > 0.0 ? acc / l : 0.0;
  }
}
