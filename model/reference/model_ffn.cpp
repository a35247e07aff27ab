// The reference FFNs: the dense gated FFN (SiLU or tanh-GELU gate, phi3's fused gate|up rows,
// biases where present, an optional norm of its output) and the mixture of experts (docs/formats.md §8), each expert
// dequantised from its slice of the 3-D tensors as it is used.
#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "arch/architecture.h"
#include "error.h"
#include "gguf/reader.h"
#include "reference/elementwise.h"
#include "reference/matmul.h"
#include "reference/model.h"
#include "reference/moe.h"

namespace vkllm::ref {

// down(act(gate·h + b_gate) ⊙ (up·h + b_up)) + b_down for n tokens (the biases may be null).
std::vector<float> Model::gated(const std::vector<float>& gate_w, const std::vector<float>& up_w,
                                const std::vector<float>& down_w, const std::vector<float>& h, size_t n,
                                const FfnBiases& b) const {
  size_t dim = h.size() / n;  // the model's width, or the experts' latent one
  auto up = project(up_w, h.data(), n, dim, 0, b.up);
  if (gate_w.empty()) {  // no gate (Nemotron-H): the squared ReLU of up
    relu_sqr(up.data(), up.data(), up.size());
    return project(down_w, up.data(), n, up.size() / n, 0, b.down);
  }
  auto gate = project(gate_w, h.data(), n, dim, 0, b.gate);
  switch (c_.architecture().recipe.ffn.activation) {
    case FfnActivation::Gelu:
      gelu(gate.data(), gate.data(), gate.size());
      mul(gate.data(), gate.data(), up.data(), gate.size());
      break;
    case FfnActivation::SwigluOai:
      swiglu_oai(gate.data(), gate.data(), up.data(), gate.size(), 1.702f, 7.0f);
      break;
    default:
      swiglu(gate.data(), gate.data(), up.data(), gate.size());
  }
  return project(down_w, gate.data(), n, gate.size() / n, 0, b.down);
}

void Model::ffn_block(std::vector<float>& x, uint32_t l, size_t n) const {
  size_t dim = c_.dim, hidden = c_.hidden_dim.at(l);
  std::vector<float> h(x.size());
  rmsnorm(h.data(), x.data(), weight(TensorRole::FfnNorm, l).data(), n, dim, c_.norm_eps);
  std::vector<float> out, bg, bu, bd;  // biases (llama, mistral3) where the file has them
  FfnBiases b{optional(TensorRole::FfnGateBias, int(l), bg), optional(TensorRole::FfnUpBias, int(l), bu),
              optional(TensorRole::FfnDownBias, int(l), bd)};
  if (has(TensorRole::FfnGateUp, int(l))) {  // phi3: the gate rows, then the up rows
    auto both = weight(TensorRole::FfnGateUp, l);
    std::vector<float> gate(both.begin(), both.begin() + hidden * dim), up(both.begin() + hidden * dim, both.end());
    out = gated(gate, up, weight(TensorRole::FfnDown, l), h, n, b);
  } else {
    std::vector<float> gate = has(TensorRole::FfnGate, int(l)) ? weight(TensorRole::FfnGate, l) : std::vector<float>{};
    out = gated(gate, weight(TensorRole::FfnUp, l), weight(TensorRole::FfnDown, l), h, n, b);
  }
  if (has(TensorRole::FfnPostNorm, int(l)))
    rmsnorm(out.data(), out.data(), weight(TensorRole::FfnPostNorm, l).data(), n, dim, c_.norm_eps);
  emit(int(l), "ffn_out", out, dim);
  add_residual(x, out);
}

namespace {

// The routing rule of the config as the reference's parameters.
MoeRouteParams route_params(const MoeConfig& m) {
  RouteScores scores = m.gating == MoeGating::Sigmoid         ? RouteScores::Sigmoid
                       : m.gating == MoeGating::SoftmaxWeight ? RouteScores::ChosenSoftmax
                                                              : RouteScores::Softmax;
  return {.n_experts = m.n_experts,
          .n_used = m.n_experts_used,
          .scores = scores,
          .n_groups = m.n_groups,
          .n_groups_used = m.n_groups_used,
          .norm = m.weights_norm,
          .scale = m.weights_scale == 1.0f ? 0.0 : double(m.weights_scale)};
}

}  // namespace

// Every chosen expert run on the tokens routed to it: outputs (n·k, dim) in slot order.
std::vector<float> Model::experts(const std::vector<float>& h, const std::vector<int32_t>& ids, uint32_t l,
                                  size_t n) const {
  const MoeConfig& m = c_.moe;
  size_t dim = h.size() / n, E = m.n_experts, k = m.n_experts_used, F = m.expert_hidden_dim;
  bool gated_experts = has(TensorRole::FfnGateExps, int(l)) || has(TensorRole::FfnGateUpExps, int(l));
  std::vector<float> y(n * k * dim);
  for (size_t e = 0; e < E; ++e) {
    std::vector<size_t> pairs;
    for (size_t q = 0; q < n * k; ++q)
      if (size_t(ids[q]) == e) pairs.push_back(q);
    if (pairs.empty()) continue;  // an expert no token chose is never read
    std::vector<float> he(pairs.size() * dim);
    for (size_t i = 0; i < pairs.size(); ++i) std::copy_n(&h[pairs[i] / k * dim], dim, &he[i * dim]);
    std::vector<float> bg, bu, bd;  // expert e's rows of the per-expert biases (gpt-oss)
    FfnBiases b;
    if (has(TensorRole::FfnGateExpsBias, int(l))) {
      bg = weight_rows(TensorRole::FfnGateExpsBias, int(l), e, 1);
      bu = weight_rows(TensorRole::FfnUpExpsBias, int(l), e, 1);
      bd = weight_rows(TensorRole::FfnDownExpsBias, int(l), e, 1);
      b = {bg.data(), bu.data(), bd.data()};
    }
    bool fused = has(TensorRole::FfnGateUpExps, int(l));  // expert e: F gate rows, then F up rows
    auto out = gated(fused           ? weight_rows(TensorRole::FfnGateUpExps, int(l), 2 * e * F, F)
                     : gated_experts ? weight_rows(TensorRole::FfnGateExps, int(l), e * F, F)
                                     : std::vector<float>{},
                     fused ? weight_rows(TensorRole::FfnGateUpExps, int(l), (2 * e + 1) * F, F)
                           : weight_rows(TensorRole::FfnUpExps, int(l), e * F, F),
                     weight_rows(TensorRole::FfnDownExps, int(l), e * dim, dim), he, pairs.size(), b);
    for (size_t i = 0; i < pairs.size(); ++i) std::copy_n(&out[i * dim], dim, &y[pairs[i] * dim]);
  }
  return y;
}

// Route every token, run each chosen expert on the tokens routed to it, add the weighted outputs
// and the shared expert (gated by a sigmoid where the family has the gate) to the residual.
// gemma4: the router reads rmsnorm(x)/sqrt(dim)·scale, the experts their own norm of x, and the
// dense FFN's and the experts' outputs are normed apart, summed and normed again.
void Model::moe_block(std::vector<float>& x, uint32_t l, size_t n) const {
  const MoeConfig& m = c_.moe;
  size_t dim = c_.dim, k = m.n_experts_used;
  bool parallel = has(TensorRole::FfnPreNorm2, int(l));
  std::vector<float> h(x.size()), hr, bias, router_bias, scale;
  rmsnorm(h.data(), x.data(), weight(parallel ? TensorRole::FfnPreNorm2 : TensorRole::FfnNorm, l).data(), n, dim,
          c_.norm_eps);
  const std::vector<float>* router_in = &h;
  if (has(TensorRole::FfnGateInpScale, int(l))) {
    hr.resize(x.size());
    rmsnorm(hr.data(), x.data(), weight(TensorRole::FfnGateInpScale, l).data(), n, dim, c_.norm_eps);
    ref::scale(hr.data(), hr.data(), hr.size(), float(1 / std::sqrt(double(dim))));
    router_in = &hr;
  }
  auto logits = project(weight(TensorRole::FfnGateInp, l), router_in->data(), n, dim, 0,
                        optional(TensorRole::FfnGateInpBias, int(l), router_bias));
  emit(int(l), "ffn_moe_logits", logits, m.n_experts);
  std::vector<int32_t> ids(n * k);
  std::vector<float> w(n * k);
  MoeRouteParams p = route_params(m);
  p.expert_scale = optional(TensorRole::FfnDownExpsScale, int(l), scale);
  moe_route(ids.data(), w.data(), logits.data(), optional(TensorRole::ExpProbsB, int(l), bias), n, p);
  emit(int(l), "ffn_moe_weights", w, k);
  std::vector<float> latent;  // Nemotron 3: the experts run at the latent width
  if (has(TensorRole::FfnLatentDown, int(l))) latent = project(weight(TensorRole::FfnLatentDown, l), h.data(), n, dim);
  std::vector<float> y = experts(latent.empty() ? h : latent, ids, l, n);

  std::vector<float> shared, gate;
  if (parallel) {  // gemma4's dense FFN beside the experts
    std::vector<float> hs(x.size());
    rmsnorm(hs.data(), x.data(), weight(TensorRole::FfnNorm, l).data(), n, dim, c_.norm_eps);
    shared = gated(weight(TensorRole::FfnGate, l), weight(TensorRole::FfnUp, l), weight(TensorRole::FfnDown, l), hs, n);
    rmsnorm(shared.data(), shared.data(), weight(TensorRole::FfnPostNorm1, l).data(), n, dim, c_.norm_eps);
    std::vector<float> out(x.size(), 0.0f);
    moe_combine(out.data(), y.data(), w.data(), nullptr, nullptr, n, k, dim);
    rmsnorm(out.data(), out.data(), weight(TensorRole::FfnPostNorm2, l).data(), n, dim, c_.norm_eps);
    add(out.data(), out.data(), shared.data(), out.size());
    rmsnorm(out.data(), out.data(), weight(TensorRole::FfnPostNorm, l).data(), n, dim, c_.norm_eps);
    emit(int(l), "ffn_out", out, dim);
    add_residual(x, out);
    return;
  }
  if (has(TensorRole::FfnUpShexp, int(l))) {
    std::vector<float> shared_gate_w;  // none in Nemotron-H's shared expert
    if (has(TensorRole::FfnGateShexp, int(l))) shared_gate_w = weight(TensorRole::FfnGateShexp, l);
    shared = gated(shared_gate_w, weight(TensorRole::FfnUpShexp, l), weight(TensorRole::FfnDownShexp, l), h, n);
    if (has(TensorRole::FfnGateInpShexp, int(l)))
      gate = project(weight(TensorRole::FfnGateInpShexp, l), h.data(), n, dim);
  }
  if (!latent.empty()) {  // the weighted sum at the latent width, projected up, then the shared expert
    size_t L = c_.moe.latent_dim;
    std::vector<float> sum(n * L, 0.0f);
    moe_combine(sum.data(), y.data(), w.data(), nullptr, nullptr, n, k, L);
    std::vector<float> out = project(weight(TensorRole::FfnLatentUp, l), sum.data(), n, L);
    if (!shared.empty()) add(out.data(), out.data(), shared.data(), out.size());
    add_residual(x, out);
    return;
  }
  const float *shared_out = shared.empty() ? nullptr : shared.data(),
              *shared_gate = gate.empty() ? nullptr : gate.data();
  if (c_.multipliers.residual) {  // Granite: the sum, scaled, into the residual
    std::vector<float> out(x.size(), 0.0f);
    moe_combine(out.data(), y.data(), w.data(), shared_out, shared_gate, n, k, dim);
    add_residual(x, out);
    return;
  }
  moe_combine(x.data(), y.data(), w.data(), shared_out, shared_gate, n, k, dim);
}

std::vector<float> Model::per_layer_inputs(std::span<const int32_t> tokens, const std::vector<float>& x) const {
  size_t n = tokens.size(), L = c_.n_layers, P = c_.per_layer_embd, dim = c_.dim;
  const GgufTensor& table = file_.tensor(catalogue_.find(TensorRole::PerLayerTokenEmbd)->name);
  std::vector<float> rows(n * L * P);
  get_rows(table.type, table.data.data(), tokens.data(), rows.data(), n, L * P);
  auto all = project(weight(TensorRole::PerLayerModelProj), x.data(), n, dim);
  ref::scale(all.data(), all.data(), all.size(), float(1 / std::sqrt(double(dim))));
  rmsnorm(all.data(), all.data(), weight(TensorRole::PerLayerProjNorm).data(), n * L, P, c_.norm_eps);
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = float((double(all[i]) + double(rows[i]) * std::sqrt(double(P))) / std::sqrt(2.0));
  return all;
}

void Model::layer_output(std::vector<float>& x, uint32_t l, const std::vector<float>& per_layer, size_t n) const {
  size_t dim = c_.dim, L = c_.n_layers, P = c_.per_layer_embd;
  if (!per_layer.empty()) {
    auto g = project(weight(TensorRole::PerLayerInpGate, l), x.data(), n, dim);
    gelu(g.data(), g.data(), g.size());
    for (size_t t = 0; t < n; ++t)
      for (size_t i = 0; i < P; ++i) g[t * P + i] *= per_layer[(t * L + l) * P + i];
    auto out = project(weight(TensorRole::PerLayerProj, l), g.data(), n, P);
    rmsnorm(out.data(), out.data(), weight(TensorRole::PerLayerPostNorm, l).data(), n, dim, c_.norm_eps);
    add(x.data(), x.data(), out.data(), x.size());
  }
  if (has(TensorRole::LayerOutScale, int(l)))
    ref::scale(x.data(), x.data(), x.size(), weight(TensorRole::LayerOutScale, l)[0]);
}

}  // namespace vkllm::ref
