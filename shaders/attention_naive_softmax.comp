#version 450
#extension GL_GOOGLE_include_directive : require
// Naive attention, softmax of one score row per workgroup, in place, over its n_kv valid keys:
// p_t = 2^(s_t - max) / sum 2^(s_u - max); masked scores (NEG) give 0, and so does a row with
// no visible key. Scores are in the base-2 domain (see attention_naive.glsl). An attention sink
// joins the sum.
//   scores: (n_heads, n_q, max_kv) f32
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 64;  // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(local_size_x_id = 0) in;
shared float red[WG];
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Step { StepParams step; };
layout(std430, binding = 1) readonly buffer Sinks { float sinks[]; };  // (n_heads), read if p.has_sinks
layout(std430, binding = 2) buffer S { float scores[]; };
layout(push_constant) uniform PushBlock { AttentionPush p; };
#include "attention_common.glsl"

void main() {
  uint row = group_index();  // head * n_q + token
  if (row >= p.n_heads * p.n_q) return;  // uniform across the workgroup
  uint base = row * p.max_kv, n_kv = min(step.n_kv, p.max_kv);
  float mx = NEG;
  for (uint t = gl_LocalInvocationIndex; t < n_kv; t += WG) mx = max(mx, scores[base + t]);
  float sink = p.has_sinks != 0 ? sinks[row / p.n_q] * LOG2E : NEG;  // one more score, no value
  mx = max(workgroup_max(mx), sink);
  float sum = 0.0;
  for (uint t = gl_LocalInvocationIndex; t < n_kv; t += WG) {
    float s = scores[base + t];
    sum += s == NEG ? 0.0 : exp2(s - mx);
  }
  sum = workgroup_sum(sum) + (sink == NEG ? 0.0 : exp2(sink - mx));
  for (uint t = gl_LocalInvocationIndex; t < n_kv; t += WG) {
    float s = scores[base + t];
    scores[base + t] = s == NEG || sum == 0.0 ? 0.0 : exp2(s - mx) / sum;
  }
}
