#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Second kernel of the chunked gated delta rule: walks one sequence's chunks in order, carrying
// the state, with what delta_rule_prep.comp left in scratch per (chunk, value head): W, Qk, gam
// (see there for the math). For a block of R value rows j of the state S0, per chunk of len tokens:
//   1. w[j][t] = v_t[j] - e^gam_t S0[j].k_t,  b[j][t] = e^gam_t S0[j].q_t / sqrt(S)
//   2. u[j][t] = sum_{r<=t} W[t][r] w[j][r]         (the triangular solve, done as a product)
//   3. o_t[j] = b[j][t] + sum_{r<=t} Qk[t][r] u[j][r]
//   4. S0[j][i] = e^gam_last S0[j][i] + sum_r e^(gam_last - gam_r) u[j][r] k_r[i]
// Rows are independent, so each workgroup owns R rows of one (sequence, value head) and needs no
// other workgroup. Workgroup (x, y, z) = (block of R rows, value head, sequence). Threads take
// (row, token) pairs in steps 1-3 (PAIRS each, pair p = (p % R, p / R)) and (row, column) pairs
// in step 4. The state rows stay in shared memory from the first chunk to the last.
//   qkv, step, state, o: as delta_rule.comp   scratch: delta_rule_prep.comp's
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint S = 128;  // head size, a multiple of 4
layout(constant_id = 2) const uint C = 64;   // tokens per chunk, a multiple of 4
layout(constant_id = 3) const uint R = 16;   // state rows per workgroup
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer QKV { float qkv[]; };
layout(std430, binding = 1) readonly buffer Step { StepParams seqs[]; };
layout(std430, binding = 2) readonly buffer Scratch { float scratch[]; };
layout(std430, binding = 3) buffer State { float state[]; };
layout(std430, binding = 4) writeonly buffer Out { float o[]; };
layout(push_constant) uniform PushBlock { DeltaRulePush p; };

#include "delta_rule.glsl"

const uint SS = S + 1, CS = C + 1;  // shared row strides (odd: rows fall in different banks)
const uint PAIRS = (R * C + WG - 1) / WG;
shared float st[R * SS];              // the state rows
shared float w_s[R * CS], u_s[R * CS];  // w, then u, per row and token
shared float eg[C], eg_end[C];        // e^gam_t, e^(gam_last - gam_t) (0 past the chunk)

void main() {
  uint tid = gl_LocalInvocationIndex, row0 = gl_WorkGroupID.x * R, h = gl_WorkGroupID.y;
  Seq sq = find_seq(gl_WorkGroupID.z, C);
  if (sq.n == 0) return;  // uniform across the workgroup
  uint hk = h % p.h_k, st0 = (sq.slot * p.h_v + h) * S * S;
  for (uint idx = tid; idx < R * S; idx += WG) {
    uint jl = idx / S, i = idx % S, j = row0 + jl;
    st[jl * SS + i] = sq.pos0 == 0 || j >= S ? 0.0 : state[st0 + j * S + i];
  }

  float bq[PAIRS];
  uint chunks = (sq.n + C - 1) / C;
  for (uint ch = 0; ch < chunks; ++ch) {
    uint tok0 = sq.token0 + ch * C, len = min(C, sq.n - ch * C);
    uint sc = ((sq.chunk0 + ch) * p.h_v + h) * (2 * C * C + C);
    barrier();  // the previous chunk is done with st, eg, w_s, u_s
    for (uint t = tid; t < C; t += WG) {
      float gl = scratch[sc + 2 * C * C + len - 1], g = scratch[sc + 2 * C * C + t];
      eg[t] = t < len ? exp(g) : 0.0;
      eg_end[t] = t < len ? exp(gl - g) : 0.0;
    }
    barrier();

    // 1. w and b; pairs past the chunk give w = 0, so step 2 may run over whole groups of 4.
    [[unroll]] for (uint e = 0; e < PAIRS; ++e) {
      uint idx = tid + e * WG, jl = idx % R, t = idx / R, j = row0 + jl;
      if (idx >= R * C) break;
      float w = 0.0;
      bq[e] = 0.0;
      if (t < len && j < S) {
        uint tr = (tok0 + t) * p.qk_stride;
        uint kt = tr + p.k_offset + hk * S, qt = tr + p.q_offset + hk * S;
        float sk = 0.0, sq_ = 0.0;
        [[dont_unroll]] for (uint i = 0; i < S; i += 4)
          [[unroll]] for (uint f = 0; f < 4; ++f) {
            float m = st[jl * SS + i + f];
            sk += m * qkv[kt + i + f];
            sq_ += m * qkv[qt + i + f];
          }
        w = qkv[tr + p.v_offset + h * S + j] - eg[t] * sk;
        bq[e] = eg[t] * sq_ * p.scale;
      }
      w_s[jl * CS + t] = w;
    }
    barrier();

    // 2. u = W w (W is 0 above its diagonal and past the chunk).
    [[unroll]] for (uint e = 0; e < PAIRS; ++e) {
      uint idx = tid + e * WG, jl = idx % R, t = idx / R;
      if (idx >= R * C) break;
      float u = 0.0;
      uint wr = sc + t * C;
      [[dont_unroll]] for (uint r = 0; r <= t; r += 4)
        [[unroll]] for (uint f = 0; f < 4; ++f) u += scratch[wr + r + f] * w_s[jl * CS + r + f];
      u_s[jl * CS + t] = u;
    }
    barrier();

    // 3. o = b + Qk u.
    [[unroll]] for (uint e = 0; e < PAIRS; ++e) {
      uint idx = tid + e * WG, jl = idx % R, t = idx / R, j = row0 + jl;
      if (idx >= R * C) break;
      if (t >= len || j >= S) continue;
      float out_ = bq[e];
      uint qr = sc + C * C + t * C;
      [[dont_unroll]] for (uint r = 0; r <= t; r += 4)
        [[unroll]] for (uint f = 0; f < 4; ++f) out_ += scratch[qr + r + f] * u_s[jl * CS + r + f];
      o[((tok0 + t) * p.h_v + h) * S + j] = out_;
    }

    // 4. The state at the chunk's end (each thread updates only the entries it owns).
    float decay = eg[len - 1];
    [[dont_unroll]] for (uint idx = tid; idx < R * S; idx += WG) {
      uint jl = idx / S, i = idx % S;
      float m = decay * st[jl * SS + i];
      [[dont_unroll]] for (uint r = 0; r < len; r += 4)
        [[unroll]] for (uint f = 0; f < 4; ++f) {
          // Tokens past the chunk have eg_end 0; their k row is the last token's (in bounds).
          uint kr = (tok0 + min(r + f, len - 1)) * p.qk_stride + p.k_offset + hk * S;
          m += eg_end[r + f] * u_s[jl * CS + r + f] * qkv[kr + i];
        }
      st[jl * SS + i] = m;
    }
  }
  barrier();
  for (uint idx = tid; idx < R * S; idx += WG) {
    uint jl = idx / S, i = idx % S, j = row0 + jl;
    if (j < S) state[st0 + j * S + i] = st[jl * SS + i];
  }
}
