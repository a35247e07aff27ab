#version 450
#extension GL_GOOGLE_include_directive : require
// Mixture-of-experts routing, one thread per token (docs/formats.md §8, push_moe.h):
//   scores    s_e = softmax(logits)_e, sigmoid(logit_e), or logit_e (written over the logits)
//   selection v_e = s_e + bias_e (DeepSeek-V3's exp_probs_b; biases the choice only)
//   groups    with n_groups > 1, each group's value is the sum of its two largest v_e; only
//             the n_groups_used best groups (ties: lower group id) compete
//   choice    the n_used largest v_e among those, ordered by value descending, id ascending
//   weights   w_j = s of the j-th choice (or the softmax over the chosen s: gpt-oss); norm:
//             w_j /= max(sum_j w_j, 6.103515625e-5); scale; times expert_scale[id] (gemma4)
// Exact ties go to the lower id; NaN ranks below every number. The k passes over the experts
// each take the best expert ranked after the previous choice, so nothing needs marking.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const bool HAS_BIAS = false;
layout(constant_id = 2) const bool HAS_SCALE = false;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Bias { float bias[]; };          // (n_experts); bound always
layout(std430, binding = 1) readonly buffer Scale { float expert_scale[]; };  // (n_experts); bound always
layout(std430, binding = 2) buffer Scores { float s[]; };                    // (n_tokens, n_experts)
layout(std430, binding = 3) writeonly buffer Ids { int ids[]; };             // (n_tokens, n_used)
layout(std430, binding = 4) writeonly buffer W { float w[]; };               // (n_tokens, n_used)
layout(push_constant) uniform PushBlock { MoeRoutePush p; };

const float LOWEST = -1e30;  // below every score (finite: Vulkan promises no infinities)
const uint MAX_USED = 64, MAX_GROUPS = 64;

uint row;                 // this token's first score
uint eligible_groups[2];  // bit g: group g competes

float selection(uint e) {
  float v = s[row + e];
  if (HAS_BIAS) v += bias[e];
  return isnan(v) ? LOWEST : v;
}

// (a, ia) ranks before (b, ib): larger value, or the same value and a lower id.
bool before(float a, uint ia, float b, uint ib) { return a > b || (a == b && ia < ib); }

bool eligible(uint e) {
  if (p.n_groups <= 1) return true;
  uint g = e / (p.n_experts / p.n_groups);
  return (eligible_groups[g >> 5] & (1u << (g & 31))) != 0;
}

void score() {
  if (p.scores == 2) return;  // the logits themselves
  if (p.scores == 1) {
    for (uint e = 0; e < p.n_experts; ++e) s[row + e] = 1.0 / (1.0 + exp(-clamp(s[row + e], -80.0, 80.0)));
    return;
  }
  float m = LOWEST, sum = 0.0;
  for (uint e = 0; e < p.n_experts; ++e) m = max(m, s[row + e]);
  for (uint e = 0; e < p.n_experts; ++e) {
    float x = exp(s[row + e] - m);
    s[row + e] = x;
    sum += x;
  }
  for (uint e = 0; e < p.n_experts; ++e) s[row + e] /= sum;
}

// Keeps the n_groups_used groups whose two best selection values sum highest.
void limit_groups() {
  eligible_groups[0] = eligible_groups[1] = 0xffffffffu;
  if (p.n_groups <= 1) return;
  uint size = p.n_experts / p.n_groups;
  float value[MAX_GROUPS];
  for (uint g = 0; g < p.n_groups; ++g) {
    float b1 = LOWEST, b2 = LOWEST;
    for (uint e = g * size; e < (g + 1) * size; ++e) {
      float v = selection(e);
      if (v > b1) b2 = b1, b1 = v;
      else if (v > b2) b2 = v;
    }
    value[g] = b1 + b2;
  }
  eligible_groups[0] = eligible_groups[1] = 0;
  float last = 0.0;
  uint last_g = 0;
  for (uint j = 0; j < p.n_groups_used; ++j) {
    int best = -1;
    for (uint g = 0; g < p.n_groups; ++g)
      if ((j == 0 || before(last, last_g, value[g], g)) && (best < 0 || value[g] > value[best])) best = int(g);
    last = value[best], last_g = uint(best);
    eligible_groups[last_g >> 5] |= 1u << (last_g & 31);
  }
}

void main() {
  uint t = thread_index(WG);
  if (t >= p.n_tokens) return;
  row = t * p.n_experts;
  score();
  limit_groups();
  float chosen[MAX_USED], sum = 0.0, last = 0.0;
  uint chosen_id[MAX_USED];
  uint last_e = 0;
  for (uint j = 0; j < p.n_used; ++j) {
    int best = -1;
    float best_v = LOWEST;
    for (uint e = 0; e < p.n_experts; ++e) {
      if (!eligible(e)) continue;
      float v = selection(e);
      if ((j == 0 || before(last, last_e, v, e)) && (best < 0 || v > best_v)) best = int(e), best_v = v;
    }
    last = best_v, last_e = uint(best);
    ids[t * p.n_used + j] = best;
    chosen_id[j] = uint(best);
    chosen[j] = s[row + last_e];
  }
  if (p.scores == 2) {  // softmax over the chosen logits
    float m = LOWEST, total = 0.0;
    for (uint j = 0; j < p.n_used; ++j) m = max(m, chosen[j]);
    for (uint j = 0; j < p.n_used; ++j) chosen[j] = exp(chosen[j] - m), total += chosen[j];
    for (uint j = 0; j < p.n_used; ++j) chosen[j] /= total;
  }
  for (uint j = 0; j < p.n_used; ++j) sum += chosen[j];
  float f = p.norm != 0 ? 1.0 / max(sum, 6.103515625e-5) : 1.0;
  if (p.scale != 0.0) f *= p.scale;
  for (uint j = 0; j < p.n_used; ++j) {
    float x = chosen[j] * f;
    if (HAS_SCALE) x *= expert_scale[chosen_id[j]];
    w[t * p.n_used + j] = x;
  }
}
