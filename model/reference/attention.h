// CPU reference for attention: softmax(Q K^T * scale + mask) V with the exact two-pass softmax
// in double, plain loops, same layouts and masking rules as ops::attention (the specification);
// and the softmax weights themselves, as ops::attention_probs writes them.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vkllm::ref {

// Element (token r, head h, i) of q at r * q_row_stride + h * dk + i, of o at
// r * o_row_stride + h * dv + i; element (kv head g, key t, i) of k at
// g * k_head_stride + t * k_row_stride + i, of v likewise. Query head h reads KV head
// h / (n_heads / n_kv_heads). Query r sits at absolute position pos0 + r; keys are positions
// 0 .. n_kv - 1. Key t is visible to a query at position p unless causal and t > p, or
// window > 0 and p - t >= window. A query with no visible key gets 0. With softcap > 0 a score s
// (q·k·scale) becomes softcap·tanh(s / softcap) before the softmax (gemma2). With sinks, head h's
// sinks[h] is one more score in its softmax that weighs no value (gpt-oss's attention sinks).
struct AttentionParams {
  size_t n_q = 1, n_heads = 1, n_kv_heads = 1, dk = 0, dv = 0;
  size_t q_row_stride = 0, o_row_stride = 0;
  size_t k_head_stride = 0, k_row_stride = 0, v_head_stride = 0, v_row_stride = 0;
  double scale = 1;
  double softcap = 0;
  bool causal = false;
  size_t window = 0;
  size_t pos0 = 0, n_kv = 0;
  const float* sinks = nullptr;  // (n_heads) or null
};

void attention(float* o, const float* q, const float* k, const float* v, const AttentionParams& a);

// The softmax weights attention() gives each key, normalised: p (n_heads, n_q, n_keys), element
// (h, r, t) at (h * n_q + r) * n_keys + t; 0 for a masked key and for t >= n_kv (dv, v_* unused).
// With sinks a row sums to 1 minus the sink's share.
void attention_probs(float* p, const float* q, const float* k, const AttentionParams& a, size_t n_keys);

}  // namespace vkllm::ref
