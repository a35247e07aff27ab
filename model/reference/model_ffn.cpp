// The reference FFNs: the dense gated FFN (SiLU or tanh-GELU gate, phi3's fused gate|up rows, an
// optional norm of its output) and the mixture of experts (docs/formats.md §8), each expert
// dequantised from its slice of the 3-D tensors as it is used.
#include <fmt/format.h>
#include <algorithm>

#include "arch/architecture.h"
#include "error.h"
#include "gguf/reader.h"
#include "reference/elementwise.h"
#include "reference/matmul.h"
#include "reference/model.h"
#include "reference/moe.h"

namespace vkllm::ref {

// down(act(gate·h) ⊙ up·h) for n tokens.
std::vector<float> Model::gated(const std::vector<float>& gate_w, const std::vector<float>& up_w,
                                const std::vector<float>& down_w, const std::vector<float>& h, size_t n) const {
  size_t dim = c_.dim;
  auto gate = project(gate_w, h.data(), n, dim);
  auto up = project(up_w, h.data(), n, dim);
  if (c_.architecture().recipe.ffn.activation == FfnActivation::Gelu) {
    gelu(gate.data(), gate.data(), gate.size());
    mul(gate.data(), gate.data(), up.data(), gate.size());
  } else {
    swiglu(gate.data(), gate.data(), up.data(), gate.size());
  }
  return project(down_w, gate.data(), n, gate.size() / n);
}

void Model::ffn_block(std::vector<float>& x, uint32_t l, size_t n) const {
  size_t dim = c_.dim, hidden = c_.hidden_dim.at(l);
  std::vector<float> h(x.size());
  rmsnorm(h.data(), x.data(), weight(TensorRole::FfnNorm, l).data(), n, dim, c_.norm_eps);
  std::vector<float> out;
  if (has(TensorRole::FfnGateUp, int(l))) {  // phi3: the gate rows, then the up rows
    auto both = weight(TensorRole::FfnGateUp, l);
    std::vector<float> gate(both.begin(), both.begin() + hidden * dim), up(both.begin() + hidden * dim, both.end());
    out = gated(gate, up, weight(TensorRole::FfnDown, l), h, n);
  } else {
    out = gated(weight(TensorRole::FfnGate, l), weight(TensorRole::FfnUp, l), weight(TensorRole::FfnDown, l), h, n);
  }
  if (has(TensorRole::FfnPostNorm, int(l)))
    rmsnorm(out.data(), out.data(), weight(TensorRole::FfnPostNorm, l).data(), n, dim, c_.norm_eps);
  emit(int(l), "ffn_out", out, dim);
  add(x.data(), x.data(), out.data(), x.size());
}

// Route every token, run each chosen expert on the tokens routed to it, add the weighted outputs
// and the shared expert (gated by a sigmoid where the family has the gate) to the residual.
void Model::moe_block(std::vector<float>& x, uint32_t l, size_t n) const {
  const MoeConfig& m = c_.moe;
  size_t dim = c_.dim, E = m.n_experts, k = m.n_experts_used, F = m.expert_hidden_dim;
  std::vector<float> h(x.size()), bias;
  rmsnorm(h.data(), x.data(), weight(TensorRole::FfnNorm, l).data(), n, dim, c_.norm_eps);
  auto logits = project(weight(TensorRole::FfnGateInp, l), h.data(), n, dim);
  emit(int(l), "ffn_moe_logits", logits, E);
  std::vector<int32_t> ids(n * k);
  std::vector<float> w(n * k);
  MoeRouteParams p{.n_experts = E,
                   .n_used = k,
                   .sigmoid = m.gating == MoeGating::Sigmoid,
                   .n_groups = m.n_groups,
                   .n_groups_used = m.n_groups_used,
                   .norm = m.weights_norm,
                   .scale = m.weights_scale == 1.0f ? 0.0 : double(m.weights_scale)};
  moe_route(ids.data(), w.data(), logits.data(), optional(TensorRole::ExpProbsB, int(l), bias), n, p);
  emit(int(l), "ffn_moe_weights", w, k);

  std::vector<float> y(n * k * dim);  // expert outputs, (n·k, dim) in slot order
  for (size_t e = 0; e < E; ++e) {
    std::vector<size_t> pairs;
    for (size_t q = 0; q < n * k; ++q)
      if (size_t(ids[q]) == e) pairs.push_back(q);
    if (pairs.empty()) continue;  // an expert no token chose is never read
    std::vector<float> he(pairs.size() * dim);
    for (size_t i = 0; i < pairs.size(); ++i) std::copy_n(&h[pairs[i] / k * dim], dim, &he[i * dim]);
    auto out = gated(weight_rows(TensorRole::FfnGateExps, int(l), e * F, F),
                     weight_rows(TensorRole::FfnUpExps, int(l), e * F, F),
                     weight_rows(TensorRole::FfnDownExps, int(l), e * dim, dim), he, pairs.size());
    for (size_t i = 0; i < pairs.size(); ++i) std::copy_n(&out[i * dim], dim, &y[pairs[i] * dim]);
  }
  std::vector<float> shared, gate;
  if (has(TensorRole::FfnGateShexp, int(l))) {
    shared = gated(weight(TensorRole::FfnGateShexp, l), weight(TensorRole::FfnUpShexp, l),
                   weight(TensorRole::FfnDownShexp, l), h, n);
    if (has(TensorRole::FfnGateInpShexp, int(l)))
      gate = project(weight(TensorRole::FfnGateInpShexp, l), h.data(), n, dim);
  }
  moe_combine(x.data(), y.data(), w.data(), shared.empty() ? nullptr : shared.data(),
              gate.empty() ? nullptr : gate.data(), n, k, dim);
}

}  // namespace vkllm::ref
