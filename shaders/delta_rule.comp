#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// The gated delta rule token by token (ref::delta_rule), for decode and any number of tokens.
// Per (sequence, value head h) the state is an S x S matrix M (row j a value index, column i a
// key index) at state[((slot * h_v + h) * S + j) * S + i]; value head h reads key head h % h_k.
// Per token, with g = softplus(alpha + dt_bias[h]) * a[h], beta = sigmoid(b), decay = e^g:
//   d[j] = beta (v[j] - decay M[j].k),  M[j] = decay M[j] + d[j] k,
//   o[j] = M[j].q / sqrt(S) = (decay M_old[j].q + d[j] (k.q)) / sqrt(S)
// so one reduction per token gives M_old[j].k, M_old[j].q and k.q together.
// Work split: workgroup (x, y, z) = (block of R = WG / T rows, value head, sequence). T threads
// share a row, thread c owning columns c, c + T, c + 2T, ... (NC = S / T of them, in registers);
// their partial sums meet in shared memory (a tree over the T threads of each row).
//   qkv: token t's q heads at q_offset + t * qk_stride, k heads at k_offset + ..., v heads at
//        v_offset + ... (heads of S floats, packed)
//   alpha, b: (n_tokens, h_v)   dt_bias, a: (h_v)   step: StepParams per sequence
//   state: (slots, h_v, S, S), read (unless pos0 = 0: zeros) and written   o: (n_tokens, h_v, S)
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint S = 128;  // head size (keys and values)
layout(constant_id = 2) const uint T = 16;   // threads per row: a power of two dividing S and WG
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer QKV { float qkv[]; };
layout(std430, binding = 1) readonly buffer Alpha { float alpha[]; };
layout(std430, binding = 2) readonly buffer Beta { float b[]; };
layout(std430, binding = 3) readonly buffer DtBias { float dt_bias[]; };
layout(std430, binding = 4) readonly buffer A { float a[]; };
layout(std430, binding = 5) readonly buffer Step { StepParams seqs[]; };
layout(std430, binding = 6) buffer State { float state[]; };
layout(std430, binding = 7) writeonly buffer Out { float o[]; };
layout(push_constant) uniform PushBlock { DeltaRulePush p; };

#include "delta_rule.glsl"

const uint R = WG / T, NC = S / T;
shared vec3 red[WG];  // (M.k, M.q, k.q) partial sums

void main() {
  uint tid = gl_LocalInvocationIndex, jl = tid / T, c = tid % T;
  uint j = gl_WorkGroupID.x * R + jl, h = gl_WorkGroupID.y;
  Seq sq = find_seq(gl_WorkGroupID.z, 1);
  if (sq.n == 0) return;  // uniform across the workgroup
  bool live = j < S;      // rows past S (a last partial block) only join the barriers
  uint hk = h % p.h_k, st = ((sq.slot * p.h_v + h) * S + (live ? j : 0)) * S;
  float m[NC], kk[NC];
  [[unroll]] for (uint e = 0; e < NC; ++e) m[e] = sq.pos0 == 0 || !live ? 0.0 : state[st + c + e * T];

  for (uint t = 0; t < sq.n; ++t) {
    uint tok = sq.token0 + t, row = tok * p.qk_stride;
    float decay = exp(softplus(alpha[tok * p.h_v + h] + dt_bias[h]) * a[h]);
    float beta = sigmoid(b[tok * p.h_v + h]);
    vec3 part = vec3(0.0);
    [[unroll]] for (uint e = 0; e < NC; ++e) {
      uint i = hk * S + c + e * T;
      float qi = qkv[row + p.q_offset + i];
      kk[e] = qkv[row + p.k_offset + i];
      part += vec3(m[e] * kk[e], m[e] * qi, kk[e] * qi);
    }
    red[tid] = part;
    barrier();
    [[unroll]] for (uint off = T / 2; off > 0; off >>= 1) {
      if (c < off) red[tid] += red[tid + off];
      barrier();
    }
    vec3 sums = red[jl * T];
    barrier();  // red is rewritten by the next token
    float d = live ? beta * (qkv[row + p.v_offset + h * S + j] - decay * sums.x) : 0.0;
    if (live && c == 0) o[(tok * p.h_v + h) * S + j] = (decay * sums.y + d * sums.z) * p.scale;
    [[unroll]] for (uint e = 0; e < NC; ++e) m[e] = decay * m[e] + d * kk[e];
  }
  if (live) [[unroll]] for (uint e = 0; e < NC; ++e) state[st + c + e * T] = m[e];
}
