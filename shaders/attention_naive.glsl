#version 450
#extension GL_GOOGLE_include_directive : require
// Naive attention, the baseline for tests and benchmarks: the score matrix goes to device memory.
// Three kernels: scores (this file with NAIVE_SCORES), attention_naive_softmax.comp, and P.V
// (this file with NAIVE_PV); the variants (CMakeLists.txt) also pass KV_F16 or KV_F32, the K/V
// element type.
//   q: (n_q, n_heads, dk) f32   k, v: as in flash_attn.glsl   step: StepParams
//   scores: (n_heads, n_q, max_kv) f32, base-2 domain (scale * log2(e)), NEG where masked
//   o: (n_q, n_heads, dv) f32
// One invocation per output element, no shared memory.
#include "grid.glsl"
#include "push.h"

#if defined(KV_F16)
#extension GL_EXT_shader_16bit_storage : require
#define KV_T float16_t
#elif defined(KV_F32)
#define KV_T float
#else
#error "build attention_naive.glsl with -DKV_F16 or -DKV_F32"
#endif

layout(constant_id = 0) const uint WG = 64;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Step { StepParams step; };
layout(push_constant) uniform PushBlock { AttentionPush p; };
#include "attention_common.glsl"

uint kv_head(uint head) { return head / (p.n_heads / p.n_kv_heads); }

#ifdef NAIVE_SCORES
layout(std430, binding = 1) readonly buffer Q { float q[]; };
layout(std430, binding = 2) readonly buffer K { KV_T k[]; };
layout(std430, binding = 3) writeonly buffer S { float scores[]; };

void main() {
  uint id = thread_index(WG);  // (head, token, t)
  if (id >= p.n_heads * p.n_q * p.max_kv) return;
  uint t = id % p.max_kv, token = (id / p.max_kv) % p.n_q, head = id / (p.max_kv * p.n_q);
  uint n_kv = min(step.n_kv, p.max_kv);
  float s = NEG;
  if (t < n_kv && key_visible(int(t), int(step.pos0 + token))) {
    uint qb = token * p.q_row_stride + head * p.dk, kb = kv_head(head) * p.k_head_stride + t * p.k_row_stride;
    float dot = 0.0;
    for (uint i = 0; i < p.dk; ++i) dot += q[qb + i] * float(k[kb + i]);
    s = dot * p.scale_log2;
  }
  scores[id] = s;
}
#endif

#ifdef NAIVE_PV
layout(std430, binding = 1) readonly buffer P { float probs[]; };
layout(std430, binding = 2) readonly buffer V { KV_T v[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };

void main() {
  uint id = thread_index(WG);  // (token, head, j)
  if (id >= p.n_q * p.n_heads * p.dv) return;
  uint j = id % p.dv, head = (id / p.dv) % p.n_heads, token = id / (p.dv * p.n_heads);
  uint n_kv = min(step.n_kv, p.max_kv);
  uint pb = (head * p.n_q + token) * p.max_kv, vb = kv_head(head) * p.v_head_stride + j;
  float acc = 0.0;
  for (uint t = 0; t < n_kv; ++t) acc += probs[pb + t] * float(v[vb + t * p.v_row_stride]);
  o[token * p.o_row_stride + head * p.dv + j] = acc;
}
#endif
