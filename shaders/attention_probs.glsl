#version 450
#extension GL_GOOGLE_include_directive : require
// Attention probabilities, for visualisation (`vkllm attention`, POST /v1/attention): the
// normalised softmax of every (query head, query token) row of one sequence over its keys,
// from the Q and the KV cache the forward's flash attention reads, with the same scale and
// masks. Flash attention never materialises these; this kernel runs only in a capture graph.
// Built as the attention_probs_<type> variants (CMakeLists.txt) for each KV-cache type.
//   q: (n_q, n_heads, dk) f32, row stride p.q_row_stride
//   k: element (g, t, i) at g * k_head_stride + (slot * max_kv + t) * k_row_stride + i, read two
//      elements at a time through kv_read.glsl (quantised caches dequantised per pair)
//   step: StepParams of the one sequence (pos0, n_kv, slot)
//   out: (n_heads, n_q, n_keys) f32 probabilities; 0 for masked keys and keys >= n_kv; with an
//      attention sink a row sums to 1 minus the sink's share
// One workgroup per row. Three passes over the row's keys, each thread taking keys t = tid,
// tid + WG, ...: scores (base-2 domain) written to out and their maximum, then the sum of
// 2^(s - max), then out = 2^(s - max) / sum. A thread reads back only what it wrote itself, so
// the passes need no barrier on out; the row max and sum are workgroup reductions.
#extension GL_EXT_control_flow_attributes : require
#include "grid.glsl"
#include "push.h"

#include "kv_pair.glsl"  // K (and V) read as KV_PAIR, two consecutive elements

layout(constant_id = 0) const uint WG = 64;  // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(constant_id = 2) const uint DK = 64;  // Q/K head dim (even)
layout(local_size_x_id = 0) in;
shared float red[WG];
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { KV_PAIR k[]; };  // element pairs
layout(std430, binding = 2) readonly buffer Step { StepParams step; };
layout(std430, binding = 3) readonly buffer Sinks { float sinks[]; };  // (n_heads), read if p.has_sinks
layout(std430, binding = 4) buffer Out { float o[]; };
layout(push_constant) uniform PushBlock { AttentionProbsPush p; };

#include "attention_common.glsl"
#include "tanh.glsl"
#define KV_READ_K_ONLY
#include "kv_read.glsl"

const uint DP = DK / 2;  // element pairs per head
shared vec2 q_s[DP];     // this row's query, scaled into the base-2 domain

// q . k of key row `row` (in elements, even), times scale * log2(e) (already in q_s).
float score(uint row) {
  uint b = row / 2;
  float dot = 0.0;
  [[dont_unroll]] for (uint i = 0; i < DP; ++i) {
    vec2 kk = k_pair(b + i);
    dot += q_s[i].x * kk.x + q_s[i].y * kk.y;
  }
  return dot;
}

void main() {
  uint row = group_index();  // head * n_q + token
  if (row >= p.n_heads * p.n_q) return;  // uniform across the workgroup
  uint head = row / p.n_q, token = row % p.n_q, tid = gl_LocalInvocationIndex;
  uint qb = token * p.q_row_stride + head * DK;
  for (uint i = tid; i < DP; i += WG) q_s[i] = vec2(q[qb + 2 * i], q[qb + 2 * i + 1]) * p.scale_log2;
  barrier();

  uint g = head / (p.n_heads / p.n_kv_heads), n_kv = min(step.n_kv, p.max_kv), base = row * p.n_keys;
  uint kb = g * p.k_head_stride + step.slot * p.max_kv * p.k_row_stride;
  int pos = int(step.pos0 + token);
  float mx = NEG;
  for (uint t = tid; t < p.n_keys; t += WG) {
    float s = NEG;
    if (t < n_kv && key_visible(int(t), pos)) {
      s = score(kb + t * p.k_row_stride);
      if (p.softcap_log2 > 0.0) s = p.softcap_log2 * tanh_accurate(s);
    }
    o[base + t] = s;
    mx = max(mx, s);
  }
  // An attention sink is one more score in the denominator; it weighs no key.
  float sink = p.has_sinks != 0 ? sinks[head] * LOG2E : NEG;
  mx = max(workgroup_max(mx), sink);
  float sum = 0.0;
  for (uint t = tid; t < p.n_keys; t += WG) {
    float s = o[base + t];
    sum += s == NEG ? 0.0 : exp2(s - mx);
  }
  sum = workgroup_sum(sum) + (sink == NEG ? 0.0 : exp2(sink - mx));
  for (uint t = tid; t < p.n_keys; t += WG) {
    float s = o[base + t];
    o[base + t] = s == NEG || sum == 0.0 ? 0.0 : exp2(s - mx) / sum;
  }
}
