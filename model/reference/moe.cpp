// Reference routing: scores, group limits and top-k by sorting (value descending, id ascending),
// written from llama.cpp's build_moe_ffn rules as docs/formats.md §8 states them.
#include "reference/moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace vkllm::ref {

namespace {

// Indices of the k largest of v, by value descending then index ascending; NaN ranks last.
std::vector<size_t> top(const std::vector<double>& v, size_t k) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  auto key = [&](size_t i) { return std::isnan(v[i]) ? -INFINITY : v[i]; };
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
  idx.resize(k);
  return idx;
}

std::vector<double> scores(const float* logits, const MoeRouteParams& p) {
  std::vector<double> s(p.n_experts);
  if (p.scores == RouteScores::ChosenSoftmax) {
    for (size_t e = 0; e < p.n_experts; ++e) s[e] = logits[e];
    return s;
  }
  if (p.scores == RouteScores::Sigmoid) {
    for (size_t e = 0; e < p.n_experts; ++e) s[e] = 1 / (1 + std::exp(-double(logits[e])));
    return s;
  }
  double mx = -INFINITY, sum = 0;
  for (size_t e = 0; e < p.n_experts; ++e) mx = std::max(mx, double(logits[e]));
  for (size_t e = 0; e < p.n_experts; ++e) sum += s[e] = std::exp(double(logits[e]) - mx);
  for (double& x : s) x /= sum;
  return s;
}

// Experts outside the n_groups_used best groups get -inf.
void limit_groups(std::vector<double>& sel, const MoeRouteParams& p) {
  size_t size = p.n_experts / p.n_groups;
  std::vector<double> group(p.n_groups);
  for (size_t g = 0; g < p.n_groups; ++g) {
    std::vector<double> members(sel.begin() + g * size, sel.begin() + (g + 1) * size);
    auto best = top(members, 2);
    group[g] = members[best[0]] + members[best[1]];
  }
  std::vector<bool> keep(p.n_groups, false);
  for (size_t g : top(group, p.n_groups_used)) keep[g] = true;
  for (size_t e = 0; e < p.n_experts; ++e)
    if (!keep[e / size]) sel[e] = -INFINITY;
}

}  // namespace

void moe_route(int32_t* ids, float* weights, const float* logits, const float* bias, size_t n,
               const MoeRouteParams& p) {
  for (size_t t = 0; t < n; ++t) {
    std::vector<double> s = scores(logits + t * p.n_experts, p), sel = s;
    if (bias)
      for (size_t e = 0; e < p.n_experts; ++e) sel[e] += bias[e];
    if (p.n_groups > 1) limit_groups(sel, p);
    std::vector<size_t> chosen = top(sel, p.n_used);
    std::vector<double> w(p.n_used);
    for (size_t j = 0; j < p.n_used; ++j) w[j] = s[chosen[j]];
    if (p.scores == RouteScores::ChosenSoftmax) {
      double mx = *std::max_element(w.begin(), w.end()), total = 0;
      for (double& x : w) total += x = std::exp(x - mx);
      for (double& x : w) x /= total;
    }
    double sum = std::accumulate(w.begin(), w.end(), 0.0);
    for (size_t j = 0; j < p.n_used; ++j) {
      if (p.norm) w[j] /= std::max(sum, 6.103515625e-5);
      if (p.scale != 0) w[j] *= p.scale;
      if (p.expert_scale) w[j] *= p.expert_scale[chosen[j]];
      ids[t * p.n_used + j] = int32_t(chosen[j]);
      weights[t * p.n_used + j] = float(w[j]);
    }
  }
}

void matmul_id(float* y, const float* w, const float* x, const int32_t* ids, size_t P, size_t M, size_t K,
               size_t x_div) {
  for (size_t p = 0; p < P; ++p) {
    const float* we = w + size_t(ids[p]) * M * K;
    const float* xr = x + (p / x_div) * K;
    for (size_t m = 0; m < M; ++m) {
      double acc = 0;
      for (size_t k = 0; k < K; ++k) acc += double(we[m * K + k]) * xr[k];
      y[p * M + m] = float(acc);
    }
  }
}

void moe_combine(float* x, const float* y, const float* weights, const float* shared, const float* gate, size_t n,
                 size_t k, size_t dim) {
  for (size_t t = 0; t < n; ++t)
    for (size_t d = 0; d < dim; ++d) {
      double acc = x[t * dim + d];
      for (size_t j = 0; j < k; ++j) acc += double(weights[t * k + j]) * y[(t * k + j) * dim + d];
      if (shared) acc += double(shared[t * dim + d]) * (gate ? 1 / (1 + std::exp(-double(gate[t]))) : 1.0);
      x[t * dim + d] = float(acc);
    }
}

}  // namespace vkllm::ref
