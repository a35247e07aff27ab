#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// First kernel of the chunked gated delta rule (ops::delta_rule with chunked set): what a chunk
// of C tokens of one sequence needs that does not depend on the state, for each value head. With
// g_t the log-decay and beta_t the gate of token t (as in delta_rule.comp), gam_t = g_0 + .. +
// g_t (cumulative within the chunk) and starting state S0, the recurrence unrolls to
//   u_t = beta_t (v_t - e^gam_t S0 k_t) - sum_{r<t} A[t][r] u_r,  A[t][r] = beta_t e^(gam_t - gam_r) k_t.k_r
//   o_t = (e^gam_t S0 q_t + sum_{r<=t} e^(gam_t - gam_r) (k_r.q_t) u_r) / sqrt(S)
//   S_end = e^gam_last S0 + sum_r e^(gam_last - gam_r) u_r k_r^T
// (u_t is the d of token t; delta_rule_chunk.comp runs these per block of value rows). Here:
//   W[t][r] = ((I + A)^-1)[t][r] beta_r  (r <= t): u = W (v - e^gam S0 k), the triangular solve
//   Qk[t][r] = e^(gam_t - gam_r) (k_r.q_t) / sqrt(S)  (r <= t)
//   gam[t]
// stored per (chunk, value head) in scratch at ((chunk * h_v + h) * (2 C^2 + C)): W (C x C), Qk
// (C x C), gam (C); entries r > t, and rows t past the chunk's length, are 0.
// Work split: workgroup (x, y) = (chunk, value head); the chunks of every sequence are numbered in
// batch order (find_seq's chunk0). The inverse of the unit lower-triangular I + A is solved column
// by column (thread r owns column r; columns are independent), into the upper triangle of the
// shared matrix that holds A in its lower one.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint S = 128;  // head size, a multiple of 4
layout(constant_id = 2) const uint C = 64;   // tokens per chunk
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer QKV { float qkv[]; };
layout(std430, binding = 1) readonly buffer Alpha { float alpha[]; };
layout(std430, binding = 2) readonly buffer Beta { float b[]; };
layout(std430, binding = 3) readonly buffer DtBias { float dt_bias[]; };
layout(std430, binding = 4) readonly buffer A { float a[]; };
layout(std430, binding = 5) readonly buffer Step { StepParams seqs[]; };
layout(std430, binding = 6) writeonly buffer Scratch { float scratch[]; };
layout(push_constant) uniform PushBlock { DeltaRulePush p; };

#include "delta_rule.glsl"

const uint CS = C + 1;  // row stride of m_s
shared float m_s[C * CS];  // A[t][r] at [t][r] for r < t; X = (I + A)^-1: X[t][r] at [r][t] for r < t
shared float gam[C], bet[C];

// Dot product of two rows of S floats of qkv.
float dot_rows(uint x, uint y) {
  float s = 0.0;
  [[dont_unroll]] for (uint i = 0; i < S; i += 4)
    [[unroll]] for (uint e = 0; e < 4; ++e) s += qkv[x + i + e] * qkv[y + i + e];
  return s;
}

void main() {
  uint tid = gl_LocalInvocationIndex, chunk = gl_WorkGroupID.x, h = gl_WorkGroupID.y;
  if (chunk >= p.max_chunks) return;
  // This chunk's sequence: the first whose chunks reach past it (uniform across the workgroup).
  uint token0 = 0, len = 0, left = chunk;
  for (uint s = 0; s < p.n_seqs && len == 0; ++s) {
    uint n = seq_tokens(seqs[s], token0), nc = (n + C - 1) / C;
    if (left < nc)
      token0 += left * C, len = min(C, n - left * C);
    else
      left -= nc, token0 += seqs[s].n_tokens;
  }
  if (len == 0) return;
  uint hk = h % p.h_k, base = (chunk * p.h_v + h) * (2 * C * C + C);

  for (uint t = tid; t < C; t += WG) {
    uint ab = (token0 + t) * p.h_v + h;
    gam[t] = t < len ? softplus(alpha[ab] + dt_bias[h]) * a[h] : 0.0;
    bet[t] = t < len ? sigmoid(b[ab]) : 0.0;
  }
  barrier();
  if (tid == 0)
    for (uint t = 1; t < len; ++t) gam[t] += gam[t - 1];
  barrier();

  // A (shared) and Qk (scratch), pairs (t, r) with r <= t < len; the rest of Qk is 0.
  [[dont_unroll]] for (uint idx = tid; idx < C * C; idx += WG) {
    uint t = idx / C, r = idx % C;
    float qk = 0.0;
    if (r <= t && t < len) {
      uint kr = (token0 + r) * p.qk_stride + p.k_offset + hk * S;
      uint qt = (token0 + t) * p.qk_stride + p.q_offset + hk * S;
      uint kt = (token0 + t) * p.qk_stride + p.k_offset + hk * S;
      float e = exp(gam[t] - gam[r]);
      qk = e * dot_rows(qt, kr) * p.scale;
      if (r < t) m_s[t * CS + r] = bet[t] * e * dot_rows(kt, kr);
    }
    scratch[base + C * C + idx] = qk;
  }
  barrier();

  // Column r of X = (I + A)^-1: X[r][r] = 1, X[t][r] = -A[t][r] - sum_{r<m<t} A[t][m] X[m][r].
  for (uint r = tid; r < len; r += WG)
    for (uint t = r + 1; t < len; ++t) {
      float x = -m_s[t * CS + r];
      for (uint m = r + 1; m < t; ++m) x -= m_s[t * CS + m] * m_s[r * CS + m];
      m_s[r * CS + t] = x;
    }
  barrier();

  for (uint idx = tid; idx < C * C; idx += WG) {
    uint t = idx / C, r = idx % C;
    float x = r == t ? 1.0 : m_s[r * CS + t];
    scratch[base + idx] = r <= t && t < len ? x * bet[r] : 0.0;
  }
  for (uint t = tid; t < C; t += WG) scratch[base + 2 * C * C + t] = gam[t];
}
