// The mixture-of-experts FFN as dispatches (docs/formats.md §8, runtime/ops_moe.h): norm → router
// → routing (scores, group limits, top-k, weights) → the tokens grouped by expert → the chosen
// experts' gated FFNs, reading only their weights → the weighted sum plus the shared expert,
// added to the residual. Everything stays on the GPU; the graph replays for every step.
#include <cmath>

#include "arch/architecture.h"
#include "context.h"
#include "graph/blocks.h"
#include "ops.h"

namespace vkllm::blocks {

namespace {

ops::RouteScores route_scores(MoeGating g) {
  return g == MoeGating::Sigmoid         ? ops::RouteScores::Sigmoid
         : g == MoeGating::SoftmaxWeight ? ops::RouteScores::ChosenSoftmax
                                         : ops::RouteScores::Softmax;
}

// act(gate) ⊙ up over n elements, into gate, as the family's FFN recipe says.
void activate(const RecordContext& r, BufferView gate, BufferView up, uint32_t n) {
  switch (r.c.architecture().recipe.ffn.activation) {
    case FfnActivation::Gelu:
      ops::gelu(r.s, gate, gate, n);
      ops::mul(r.s, gate, up, gate, n);
      break;
    case FfnActivation::SwigluOai:
      ops::swiglu_oai(r.s, gate, up, gate, n);
      break;
    default:
      ops::swiglu(r.s, gate, up, gate, n);
  }
}

// The router's logits (n, E) of the step: of h, or (gemma4) of rmsnorm(x)/sqrt(dim)·scale.
void router_logits(const RecordContext& r, const MoeWeights& w, BufferView h, BufferView logits) {
  const ModelConfig& c = r.c;
  BufferView in = h;
  if (w.router_scale) {
    in = r.act_rows(r.acts.proj, c.dim);
    ops::rmsnorm(r.s, r.act_rows(r.acts.x, c.dim), w.router_scale->view, in, r.n, c.dim, c.norm_eps);
    ops::scale(r.s, in, in, r.n * c.dim, 1.0f / std::sqrt(float(c.dim)));
  }
  project(r, *w.router, in, logits, r.n, w.router_bias);
}

// gemma4's dense FFN beside the experts (their weighted sum in `experts`): each normed apart,
// summed, normed again and added to the residual.
void beside_dense(const RecordContext& r, const MoeWeights& w, BufferView experts, uint32_t l) {
  const ModelConfig& c = r.c;
  uint32_t n = r.n, dim = c.dim;
  BufferView x = r.act_rows(r.acts.x, dim), h = r.act_rows(r.acts.h, dim), out = r.act_rows(r.acts.proj, dim);
  ops::rmsnorm(r.s, experts, w.expert_post_norm->view, experts, n, dim, c.norm_eps);
  ops::rmsnorm(r.s, x, w.norm->view, h, n, dim, c.norm_eps);
  gated(r, w.shared_gate, *w.shared_up, *w.shared_down, h, out, c.hidden_dim[l]);
  ops::rmsnorm(r.s, out, w.shared_post_norm->view, out, n, dim, c.norm_eps);
  ops::add(r.s, out, experts, out, n * dim);
  if (!r.taps && !c.multipliers.residual) {  // the last norm and the residual add in one pass
    ops::rmsnorm_add(r.s, out, w.post_norm->view, x, n, dim, c.norm_eps);
    return;
  }
  ops::rmsnorm(r.s, out, w.post_norm->view, out, n, dim, c.norm_eps);
  r.tap(int(l), "ffn_out", out, n, dim);
  add_residual(r, out);
}

}  // namespace

void moe(const RecordContext& r, const MoeWeights& w, uint32_t l) {
  const Acts& a = r.acts;
  const ModelConfig& c = r.c;
  const MoeConfig& m = c.moe;
  Stream& s = r.s;
  uint32_t n = r.n, E = m.n_experts, k = m.n_experts_used, F = m.expert_hidden_dim, dim = c.dim;
  BufferView x = r.act_rows(a.x, dim), h = r.act_rows(a.h, dim);
  BufferView logits = r.act_rows(a.logits, E), ids = r.act_rows(a.ids, k), weights = r.act_rows(a.weights, k);
  uint64_t half = 4ull * n * k * F;  // bytes of the gate product; the up product follows
  BufferView gate = r.act(a.exp_gate_up, half), up = r.act(a.exp_gate_up, half, half),
             down = r.act_rows(a.exp_down, k * dim);
  ops::ExpertPlan plan = ops::expert_plan(r.ctx, n, k, E);
  BufferView plan_buf = r.act(a.plan, plan.bytes());

  ops::rmsnorm(s, x, (w.expert_norm ? w.expert_norm : w.norm)->view, h, n, dim, c.norm_eps);
  router_logits(r, w, h, logits);
  r.tap(int(l), "ffn_moe_logits", logits, n, E);
  ops::MoeRouteParams route{.n_tokens = n,
                            .n_experts = E,
                            .n_used = k,
                            .scores = route_scores(m.gating),
                            .n_groups = m.n_groups,
                            .n_groups_used = m.n_groups_used,
                            .norm = m.weights_norm,
                            .scale = m.weights_scale};
  ops::moe_route(s, route, logits, w.probs_bias ? w.probs_bias->view : BufferView{}, ids, weights,
                 w.down_scale ? w.down_scale->view : BufferView{});
  r.tap(int(l), "ffn_moe_weights", weights, n, k);
  r.tap(int(l), "ffn_moe_topk", ids, n, k);  // the chosen experts: i32 bit patterns (for comparing routings)
  ops::moe_plan(s, plan, ids, plan_buf);

  // The experts read h, or (Nemotron 3) h projected down to their latent width W.
  uint32_t W = w.latent_down ? m.latent_dim : dim;
  BufferView in = h;
  if (w.latent_down) {
    in = r.act_rows(a.moe_latent, W);
    project(r, *w.latent_down, h, in, n);
  }
  // The routed experts: pair p = t·k + j reads token t's input for gate and up, its own row for
  // down; a bias per expert (gpt-oss) is added by the pair's expert. Fused experts (gate rows,
  // then up rows) give both by one product; experts without a gate (Nemotron-H) only up.
  if (w.gate_up) {
    ops::matmul_id(s, plan, w.gate_up->type, w.gate_up->experts, in, plan_buf, r.act(a.exp_gate_up, 2 * half), 2 * F, W,
                   k, 0, ops::MatmulKernel::Auto, half / 4);
  } else if (w.gate) {
    ops::matmul_id(s, plan, w.gate->type, w.gate->experts, in, plan_buf, gate, F, W, k);
    ops::matmul_id(s, plan, w.up->type, w.up->experts, in, plan_buf, up, F, W, k);
  } else {
    ops::matmul_id(s, plan, w.up->type, w.up->experts, in, plan_buf, gate, F, W, k);
  }
  if (w.gate_bias) ops::moe_bias(s, gate, w.gate_bias->view, ids, n * k, F);
  if (w.up_bias) ops::moe_bias(s, up, w.up_bias->view, ids, n * k, F);
  if (w.gate || w.gate_up)
    activate(r, gate, up, n * k * F);
  else
    ops::relu_sqr(s, gate, gate, n * k * F);
  ops::matmul_id(s, plan, w.down->type, w.down->experts, gate, plan_buf, down, W, F, 1);
  if (w.down_bias) ops::moe_bias(s, down, w.down_bias->view, ids, n * k, dim);

  if (w.expert_post_norm) {  // gemma4
    BufferView sum = r.act_rows(a.moe_out, dim);
    ops::moe_combine(s, down, weights, {}, {}, sum, n, k, dim, false);
    beside_dense(r, w, sum, l);
    return;
  }
  // The shared expert (a dense FFN over every token), gated by a sigmoid where present.
  BufferView shared, shared_gate;
  if (w.shared_up) {
    shared = r.act_rows(a.proj, dim);
    gated(r, w.shared_gate, *w.shared_up, *w.shared_down, h, shared, m.shared_hidden_dim);
    if (w.shared_router) {
      shared_gate = r.act_rows(a.shared_gate, 1);
      project(r, *w.shared_router, h, shared_gate, n);
    }
  }
  if (w.latent_up) {  // the weighted sum at the latent width, projected back up into the residual
    BufferView sum = r.act_rows(a.moe_out, W);
    ops::moe_combine(s, down, weights, {}, {}, sum, n, k, W, false);
    block_output(r, *w.latent_up, nullptr, sum, l, "ffn_moe_out");
    if (w.shared_up) add_residual(r, shared);
    return;
  }
  if (c.multipliers.residual) {  // Granite: the sum, scaled, into the residual
    BufferView sum = r.act_rows(a.moe_out, dim);
    ops::moe_combine(s, down, weights, shared, shared_gate, sum, n, k, dim, false);
    r.tap(int(l), "ffn_out", sum, n, dim);
    add_residual(r, sum);
    return;
  }
  ops::moe_combine(s, down, weights, shared, shared_gate, x, n, k, dim);
}

}  // namespace vkllm::blocks
