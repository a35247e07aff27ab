#version 450
#extension GL_GOOGLE_include_directive : require
// Flash attention body: O = softmax(Q K^T * scale + mask) V, tile by tile in shared memory;
// the score matrix never reaches device memory. Built as the flash_attn_<type> variants
// (CMakeLists.txt) with KV_F16 or KV_F32, the K/V element type; both prefill and split-K decode
// run this kernel (ops_attention.cpp), for one sequence or a batch of several:
//   q: (n_q, n_heads, DK) f32, row stride p.q_row_stride; sequence s owns seqs[s].n_tokens
//      consecutive tokens, after those of the sequences before it
//   k: element (g, t, i) of a sequence in slot `slot` at g * k_head_stride + (slot * max_kv + t)
//      * k_row_stride + i; v likewise (DV). They are read two elements at a time, so dims and
//      strides are even (ops_attention.cpp checks)
//   seqs: StepParams per sequence (pos0, n_tokens, n_kv, slot, read here, so a recorded graph
//      replays with new values)
//   out: O (n_q, n_heads, DV) f32, row stride p.o_row_stride
//   part: n_splits > 1: partial O (n_splits, n_q, n_heads, DV), then (m, l) (n_splits, n_q,
//        n_heads, 2), then one u32 counter per (row block, KV head), zero between dispatches
//
// Work split: workgroup (x, y, z) = (block of BR query rows, KV head g, key split). The rows of
// KV head g in a sequence are the pairs (token, query head of g's group) in token-major order, so
// a K/V tile loaded once serves every query head of the group (GQA/MQA) and every token of the
// block. Each sequence takes ceil(rows / BR) consecutive blocks in batch order (find_block); the
// grid has enough for any split of n_q tokens into n_seqs sequences, and the blocks past the
// last one return at once.
//
// Online softmax, per row, in the base-2 domain (Q is pre-multiplied by scale*log2(e), so a
// score s = q.k * scale * log2(e) and exp(q.k*scale) = 2^s). Before the first tile m = NEG,
// l = 0, acc = 0. For each key tile with scores s_c:
//   m'    = max(m, max_c s_c)
//   p_c   = 2^(s_c - m')                (0 for masked keys)
//   alpha = 2^(m - m')                  (0 while m = NEG: l and acc are still 0 then)
//   l     = alpha * l   + sum_c p_c
//   acc   = alpha * acc + sum_c p_c v_c
// and at the end O = acc / l (one division; a row that saw no visible key has l = 0 and gets 0).
// An attention sink (gpt-oss) is one more score that weighs no value: split 0 starts from
// m = sink, l = 1 (2^(sink - sink)), acc = 0, and the recurrence does the rest.
// Every row's result is the exact softmax whatever the tile order, so tile sizes only change
// rounding. A split writes its (m, l, acc) unnormalised and counts itself done on its block's
// counter; the split that counts last merges every split's partials of the block into O
// (O = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s, M = max_s m_s) and sets the counter back to
// 0: no second dispatch. The partials are `coherent` and each split's writes are ordered before
// its count by memoryBarrierBuffer, so the last one reads them all.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "push.h"

#include "kv_pair.glsl"  // K (and V) read as KV_PAIR, two consecutive elements

layout(constant_id = 0) const uint WG = 64;  // threads per workgroup
layout(constant_id = 1) const bool USE_SUBGROUP = true;  // row max/sum by subgroup reductions
layout(constant_id = 2) const uint BR = 16;  // query rows per workgroup
layout(constant_id = 3) const uint BC = 32;  // keys per tile
layout(constant_id = 4) const uint DK = 64;  // Q/K head dim
layout(constant_id = 5) const uint DV = 64;  // V/O head dim
layout(constant_id = 6) const uint SG_MIN = 8;  // smallest subgroup size the device may use
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { KV_PAIR k[]; };  // element pairs
layout(std430, binding = 2) readonly buffer V { KV_PAIR v[]; };
layout(std430, binding = 3) readonly buffer Step { StepParams seqs[]; };
layout(std430, binding = 4) readonly buffer Sinks { float sinks[]; };  // (n_heads), read if p.has_sinks
layout(std430, binding = 5) writeonly buffer Out { float o[]; };
layout(std430, binding = 6) coherent buffer Part { float part[]; };  // split-K partials (n_splits > 1)
layout(std430, binding = 6) coherent buffer PartCount { uint part_count[]; };
layout(push_constant) uniform PushBlock { AttentionPush p; };

#include "attention_common.glsl"
#include "tanh.glsl"
#include "kv_read.glsl"

// Shared tiles hold vec4s (head dims rounded up to whole vec4s, the padding zero). The K tile,
// then the V tile, share kv_s one after the other (half the shared memory); its row stride is
// odd in vec4s so threads reading different keys hit different banks.
const uint DK4 = (DK + 3) / 4, DV4 = (DV + 3) / 4;
const uint KS4 = (DK4 >= DV4 ? DK4 : DV4) | 1;  // kv_s row stride
const uint PS = BC + 1;                          // p_s row stride

// Register blocking. Scores: threads form a TR x TC grid over the BR x BC tile, each computing
// SA rows x SB keys (SA + SB vec4 loads per SA * SB dot products). Output: threads form a
// TRO x TJ grid over BR rows x DV4 columns, each owning OA rows x OB column vec4s.
const uint TC = BC < WG ? BC : WG, TR = WG / TC;
const uint SA = (BR + TR - 1) / TR, SB = BC / TC;
const uint TJ = DV4 < WG ? DV4 : WG, TRO = WG / TJ;
const uint OA = (BR + TRO - 1) / TRO, OB = (DV4 + TJ - 1) / TJ;
// lavapipe stops every loop of an invocation, silently, after 65535 iterations in total, so the
// loops over DK4 and BC are unrolled by U by hand and ops_attention.cpp splits the keys so that
// no workgroup comes near the limit (it mirrors U and the loop counts). Unrolling further costs
// pipeline compile time on lavapipe for little gain.
const uint U = 2;
const uint LQ = (BR * DK4 + WG - 1) / WG, LK = (BC * DK4 + WG - 1) / WG, LV = (BC * DV4 + WG - 1) / WG;

shared vec4 q_s[BR * DK4];    // (BR, DK4) this block's queries, scaled
shared vec4 kv_s[BC * KS4];   // (BC, KS4) K tile, then V tile
shared float p_s[BR * PS];    // (BR, PS) scores, then probabilities
shared float m_s[BR], l_s[BR], alpha_s[BR];
shared bool last_split;
vec4 acc[OA * OB];  // this thread's output accumulators (a private global: glslang mistypes
                    // arrays sized by specialization constants when passed to functions)

uint group_size() { return p.n_heads / p.n_kv_heads; }

// The sequence this workgroup's block of rows belongs to (uniform over the workgroup): its first
// token in the batch, first KV-cache row, and the block's first row within the sequence.
uint seq_token0 = 0, seq_kv_row0 = 0, seq_rows = 0, block_row0 = 0;
int seq_pos0 = 0, seq_n_kv = 0;

bool find_block() {
  uint b = gl_WorkGroupID.x, token0 = 0;
  for (uint s = 0; s < p.n_seqs; ++s) {
    StepParams sp = seqs[s];
    uint rows = sp.n_tokens * group_size(), blocks = (rows + BR - 1) / BR;
    if (b < blocks) {
      seq_token0 = token0, seq_kv_row0 = sp.slot * p.max_kv, seq_rows = rows, block_row0 = b * BR;
      seq_pos0 = int(sp.pos0), seq_n_kv = int(min(sp.n_kv, p.max_kv));
      return true;
    }
    b -= blocks, token0 += sp.n_tokens;
  }
  return false;
}

// Loads the block's rows (token, query head) from Q, scaled into the base-2 domain; rows past
// the last one are zero.
void load_q(uint row0, uint n_rows) {
  uint g = gl_WorkGroupID.y, gs = group_size();
  [[dont_unroll]] for (uint n = 0; n < LQ; ++n) {
    uint idx = gl_LocalInvocationIndex + n * WG;
    uint r = idx / DK4, i = (idx % DK4) * 4, qrow = row0 + r;
    if (idx >= BR * DK4) break;
    uint base = (seq_token0 + qrow / gs) * p.q_row_stride + (g * gs + qrow % gs) * DK;
    uint len = qrow < n_rows ? DK : 0;
    vec4 x = vec4(0.0);
    [[unroll]] for (uint e = 0; e < 4; ++e)
      if (i + e < len) x[e] = q[base + i + e] * p.scale_log2;
    q_s[idx] = x;
  }
}

// Keys [k0, k0 + BC) of this KV head's K (or V: from_v, a constant at each call) into kv_s;
// keys at or past `hi` are zero, so a zero probability never meets an uninitialised value.
void load_tile(const bool from_v, int k0, int hi) {
  const uint d = from_v ? DV : DK, d4 = from_v ? DV4 : DK4, loops = from_v ? LV : LK;
  uint head = gl_WorkGroupID.y * (from_v ? p.v_head_stride : p.k_head_stride);
  uint row_stride = from_v ? p.v_row_stride : p.k_row_stride;
  [[dont_unroll]] for (uint n = 0; n < loops; ++n) {
    uint idx = gl_LocalInvocationIndex + n * WG;
    uint c = idx / d4, i = (idx % d4) * 4;
    if (idx >= BC * d4) break;
    int t = k0 + int(c);
    uint base = head + (seq_kv_row0 + uint(t)) * row_stride, len = t < hi ? d : 0;
    vec4 x = vec4(0.0);
    [[unroll]] for (uint e = 0; e < 2; ++e) {
      if (i + 2 * e >= len) break;
      uint pair = (base + i) / 2 + e;
      vec2 y;
      if (from_v) y = v_pair(pair);  // branches, not a select: never read both
      else y = k_pair(pair);
      x[2 * e] = y.x, x[2 * e + 1] = y.y;
    }
    kv_s[c * KS4 + idx % d4] = x;
  }
}

// p_s = Q K^T for the tile (base 2), NEG where masked: key outside [lo, hi), row past the end,
// or hidden from the row's position by the causal/window mask. A soft-cap (push_attention.h)
// bends the score before the mask.
void scores(int k0, int lo, int hi, uint row0, uint n_rows, int pos0) {
  uint tr = gl_LocalInvocationIndex / TC, tc = gl_LocalInvocationIndex % TC;
  float s[SA * SB];
  [[unroll]] for (uint n = 0; n < SA * SB; ++n) s[n] = 0.0;
  [[dont_unroll]] for (uint i0 = 0; i0 < DK4; i0 += U) {
    [[unroll]] for (uint u = 0; u < U; ++u) {
      uint i = min(i0 + u, DK4 - 1);
      if (i0 + u < DK4) {
        vec4 kv[SB];
        [[unroll]] for (uint b = 0; b < SB; ++b) kv[b] = kv_s[(tc + b * TC) * KS4 + i];
        [[unroll]] for (uint a = 0; a < SA; ++a) {
          vec4 qv = q_s[min(tr + a * TR, BR - 1) * DK4 + i];
          [[unroll]] for (uint b = 0; b < SB; ++b) s[a * SB + b] += dot(qv, kv[b]);
        }
      }
    }
  }
  [[unroll]] for (uint a = 0; a < SA; ++a) {
    uint r = tr + a * TR, qrow = row0 + r;
    if (r >= BR) break;
    int pos = pos0 + int(qrow / group_size());
    [[unroll]] for (uint b = 0; b < SB; ++b) {
      uint c = tc + b * TC;
      int t = k0 + int(c);
      bool ok = qrow < n_rows && t >= lo && t < hi && key_visible(t, pos);
      float sc = s[a * SB + b];
      if (p.softcap_log2 > 0.0) sc = p.softcap_log2 * tanh_accurate(sc);
      p_s[r * PS + c] = ok ? sc : NEG;
    }
  }
}

// The online-softmax step of row r (see the recurrence at the top): scores become
// probabilities, and alpha, m, l are updated.
float exponentiate(uint r, uint c, float m_new) {
  float sc = p_s[r * PS + c];
  float pc = sc == NEG ? 0.0 : exp2(sc - m_new);
  p_s[r * PS + c] = pc;
  return pc;
}

void update_row(uint r, float m_new, float tile_sum) {
  float m_old = m_s[r];
  float alpha = m_old == NEG ? 0.0 : exp2(m_old - m_new);
  alpha_s[r] = alpha;
  l_s[r] = alpha * l_s[r] + tile_sum;
  m_s[r] = m_new;
}

void softmax_rows() {
  if (USE_SUBGROUP) {
    // One subgroup per row: its a active invocations (a whole subgroup, or fewer when the
    // workgroup is narrower than the device's subgroups) take keys i, i + a, ..., at most
    // BC / min(SG_MIN, WG) each. Counted, not taken from gl_SubgroupSize, which counts the lanes
    // a narrow workgroup leaves empty too.
    const uint lanes_min = SG_MIN < WG ? SG_MIN : WG;
    const uint per_lane = (BC + lanes_min - 1) / lanes_min;
    uint lane = subgroupExclusiveAdd(1u), step = subgroupAdd(1u);
    for (uint r = gl_SubgroupID; r < BR; r += gl_NumSubgroups) {
      float mx = NEG, sum = 0.0;
      [[unroll]] for (uint k = 0; k < per_lane; ++k)
        if (lane + k * step < BC) mx = max(mx, p_s[r * PS + lane + k * step]);
      float m_new = max(m_s[r], subgroupMax(mx));
      [[unroll]] for (uint k = 0; k < per_lane; ++k)
        if (lane + k * step < BC) sum += exponentiate(r, lane + k * step, m_new);
      sum = subgroupAdd(sum);
      if (subgroupElect()) update_row(r, m_new, sum);
    }
  } else {
    // One thread per row, over the keys U at a time.
    for (uint r = gl_LocalInvocationIndex; r < BR; r += WG) {
      float mx = NEG, sum = 0.0;
      [[dont_unroll]] for (uint c0 = 0; c0 < BC; c0 += U)
        [[unroll]] for (uint u = 0; u < U; ++u) mx = max(mx, p_s[r * PS + min(c0 + u, BC - 1)]);
      float m_new = max(m_s[r], mx);
      [[dont_unroll]] for (uint c0 = 0; c0 < BC; c0 += U)
        [[unroll]] for (uint u = 0; u < U; ++u)
          if (c0 + u < BC) sum += exponentiate(r, c0 + u, m_new);
      update_row(r, m_new, sum);
    }
  }
}

// acc = alpha * acc + P V for the thread's OA x OB block of (row, column vec4) pairs.
void accumulate() {
  uint ro = gl_LocalInvocationIndex / TJ, jo = gl_LocalInvocationIndex % TJ;
  [[unroll]] for (uint a = 0; a < OA; ++a) {
    float alpha = alpha_s[min(ro + a * TRO, BR - 1)];
    [[unroll]] for (uint b = 0; b < OB; ++b) acc[a * OB + b] *= alpha;
  }
  [[dont_unroll]] for (uint c0 = 0; c0 < BC; c0 += U) {
    [[unroll]] for (uint u = 0; u < U; ++u) {
      uint c = min(c0 + u, BC - 1);
      if (c0 + u < BC) {
        vec4 vv[OB];
        [[unroll]] for (uint b = 0; b < OB; ++b) vv[b] = kv_s[c * KS4 + min(jo + b * TJ, DV4 - 1)];
        [[unroll]] for (uint a = 0; a < OA; ++a) {
          float pr = p_s[min(ro + a * TRO, BR - 1) * PS + c];
          [[unroll]] for (uint b = 0; b < OB; ++b) acc[a * OB + b] += pr * vv[b];
        }
      }
    }
  }
}

// O = acc / l (n_splits == 1), or the unnormalised partial (acc, m, l) of this split.
void write_out(uint row0, uint n_rows) {
  uint ro = gl_LocalInvocationIndex / TJ, jo = gl_LocalInvocationIndex % TJ;
  if (ro >= TRO) return;  // the threads left over when TJ does not divide WG
  uint gs = group_size(), rows_total = p.n_q * p.n_heads, ml_base = p.n_splits * rows_total * DV;
  [[unroll]] for (uint a = 0; a < OA; ++a) {
    uint r = ro + a * TRO, qrow = row0 + r;
    if (r >= BR || qrow >= n_rows) break;
    uint token = seq_token0 + qrow / gs, head = gl_WorkGroupID.y * gs + qrow % gs;
    uint row = gl_WorkGroupID.z * rows_total + token * p.n_heads + head;  // partial row
    float inv_l = l_s[r] > 0.0 ? 1.0 / l_s[r] : 0.0;
    [[unroll]] for (uint b = 0; b < OB; ++b) {
      uint j = (jo + b * TJ) * 4;
      [[unroll]] for (uint e = 0; e < 4; ++e) {
        if (j + e >= DV) break;
        if (p.n_splits == 1) o[token * p.o_row_stride + head * DV + j + e] = acc[a * OB + b][e] * inv_l;
        else part[row * DV + j + e] = acc[a * OB + b][e];
      }
    }
    if (p.n_splits > 1 && jo == 0) {
      part[ml_base + row * 2] = m_s[r];
      part[ml_base + row * 2 + 1] = l_s[r];
    }
  }
}

// Split-K: the split of this block that counts itself done last merges every split's partials
// of its rows into O, then sets the block's counter back to 0 for the next dispatch.
void merge_if_last(uint row0, uint n_rows) {
  uint rows_total = p.n_q * p.n_heads, ml_base = p.n_splits * rows_total * DV;
  uint counter = ml_base + p.n_splits * rows_total * 2 + gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  memoryBarrierBuffer();  // this split's partials before its count
  barrier();
  if (gl_LocalInvocationIndex == 0) last_split = atomicAdd(part_count[counter], 1u) == p.n_splits - 1u;
  barrier();
  if (!last_split) return;
  memoryBarrierBuffer();
  uint gs = group_size();
  for (uint i = gl_LocalInvocationIndex; i < BR * DV; i += WG) {
    uint qrow = row0 + i / DV, j = i % DV;
    if (qrow >= n_rows) break;
    uint token = seq_token0 + qrow / gs, row = token * p.n_heads + gl_WorkGroupID.y * gs + qrow % gs;
    float m_max = NEG, l = 0.0, sum = 0.0;
    for (uint sp = 0; sp < p.n_splits; ++sp) m_max = max(m_max, part[ml_base + (sp * rows_total + row) * 2]);
    for (uint sp = 0; sp < p.n_splits; ++sp) {
      float m = part[ml_base + (sp * rows_total + row) * 2];
      if (m == NEG) continue;  // a split that saw no key weighs 0
      float w = exp2(m - m_max);
      l += w * part[ml_base + (sp * rows_total + row) * 2 + 1];
      sum += w * part[(sp * rows_total + row) * DV + j];
    }
    o[token * p.o_row_stride + (row % p.n_heads) * DV + j] = l > 0.0 ? sum / l : 0.0;
  }
  if (gl_LocalInvocationIndex == 0) part_count[counter] = 0u;
}

// The keys this workgroup must visit: [0, n_kv) narrowed by the causal and window masks of its
// first and last rows (tiles wholly masked for every row are skipped, never computed), then cut
// into n_splits chunks of whole tiles, of which this workgroup takes number gl_WorkGroupID.z.
ivec2 key_range(uint row0, uint n_rows, int pos0, int n_kv) {
  uint gs = group_size(), last = min(row0 + BR, n_rows) - 1;
  int q_lo = pos0 + int(row0 / gs), q_hi = pos0 + int(last / gs);
  int lo = 0, hi = n_kv;
  if (p.causal != 0) hi = min(hi, q_hi + 1);
  if (p.window != 0) lo = max(lo, q_lo - int(p.window) + 1);
  if (hi <= lo) return ivec2(0, 0);
  int chunk = ((hi - lo + int(p.n_splits) - 1) / int(p.n_splits) + int(BC) - 1) / int(BC) * int(BC);
  int split_lo = lo + int(gl_WorkGroupID.z) * chunk;
  return ivec2(split_lo, min(split_lo + chunk, hi));
}

void main() {
  if (!find_block()) return;  // the whole workgroup: no barrier is skipped by only some threads
  uint n_rows = seq_rows, row0 = block_row0;
  int pos0 = seq_pos0, n_kv = seq_n_kv;
  load_q(row0, n_rows);
  bool sink = p.has_sinks != 0 && gl_WorkGroupID.z == 0;
  for (uint r = gl_LocalInvocationIndex; r < BR; r += WG) {
    uint head = gl_WorkGroupID.y * group_size() + (row0 + r) % group_size();
    m_s[r] = sink ? sinks[head] * LOG2E : NEG, l_s[r] = sink ? 1.0 : 0.0;
  }
  ivec2 range = key_range(row0, n_rows, pos0, n_kv);
  [[unroll]] for (uint n = 0; n < OA * OB; ++n) acc[n] = vec4(0.0);

  for (int k0 = range.x; k0 < range.y; k0 += int(BC)) {
    barrier();  // the previous tile's readers of kv_s and p_s are done
    load_tile(false, k0, range.y);
    barrier();
    scores(k0, range.x, range.y, row0, n_rows, pos0);
    barrier();  // K tile and raw scores complete
    if (p.v_from_k == 0) load_tile(true, k0, range.y);
    softmax_rows();
    barrier();
    accumulate();
  }
  barrier();  // m_s and l_s final
  write_out(row0, n_rows);
  if (p.n_splits > 1) merge_if_last(row0, n_rows);
}
