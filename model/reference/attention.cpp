// Reference attention: per query row, scores in double, their max, the exponentials and their sum,
// then the weighted sum of V divided by that sum (or, for attention_probs, the weights / sum).
#include "reference/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace vkllm::ref {

namespace {

bool visible(size_t t, size_t pos, const AttentionParams& a) {
  if (a.causal && t > pos) return false;
  if (a.window > 0 && pos >= t && pos - t >= a.window) return false;
  return true;
}

// The unnormalised softmax weights of query row r, head h over keys 0 .. n_kv - 1 into w (0 for
// masked keys); returns their sum with the sink's share (0 when no key is visible and no sink).
double row_weights(std::vector<double>& w, const float* q, const float* k, size_t r, size_t h,
                   const AttentionParams& a) {
  const float* qr = q + r * a.q_row_stride + h * a.dk;
  const float* kh = k + (h / (a.n_heads / a.n_kv_heads)) * a.k_head_stride;
  double mx = -INFINITY;
  for (size_t t = 0; t < a.n_kv; ++t) {
    w[t] = -INFINITY;
    if (!visible(t, a.pos0 + r, a)) continue;
    double dot = 0;
    for (size_t i = 0; i < a.dk; ++i) dot += double(qr[i]) * kh[t * a.k_row_stride + i];
    w[t] = dot * a.scale;
    if (a.softcap > 0) w[t] = a.softcap * std::tanh(w[t] / a.softcap);
    mx = std::max(mx, w[t]);
  }
  double sink = a.sinks ? double(a.sinks[h]) : -INFINITY;
  mx = std::max(mx, sink);
  double sum = sink == -INFINITY ? 0.0 : std::exp(sink - mx);
  for (size_t t = 0; t < a.n_kv; ++t) {
    w[t] = w[t] == -INFINITY ? 0.0 : std::exp(w[t] - mx);
    sum += w[t];
  }
  return sum;
}

}  // namespace

void attention(float* o, const float* q, const float* k, const float* v, const AttentionParams& a) {
  size_t group = a.n_heads / a.n_kv_heads;
  std::vector<double> w(a.n_kv), acc(a.dv);
  for (size_t r = 0; r < a.n_q; ++r) {
    for (size_t h = 0; h < a.n_heads; ++h) {
      double sum = row_weights(w, q, k, r, h, a);
      const float* vh = v + (h / group) * a.v_head_stride;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (size_t t = 0; t < a.n_kv; ++t)
        for (size_t i = 0; i < a.dv; ++i) acc[i] += w[t] * vh[t * a.v_row_stride + i];
      float* out = o + r * a.o_row_stride + h * a.dv;
      for (size_t i = 0; i < a.dv; ++i) out[i] = sum > 0 ? float(acc[i] / sum) : 0.0f;
    }
  }
}

void attention_probs(float* p, const float* q, const float* k, const AttentionParams& a, size_t n_keys) {
  std::vector<double> w(a.n_kv);
  for (size_t h = 0; h < a.n_heads; ++h)
    for (size_t r = 0; r < a.n_q; ++r) {
      double sum = row_weights(w, q, k, r, h, a);
      float* out = p + (h * a.n_q + r) * n_keys;
      for (size_t t = 0; t < n_keys; ++t) out[t] = t < a.n_kv && sum > 0 ? float(w[t] / sum) : 0.0f;
    }
}

}  // namespace vkllm::ref
