// The mixture-of-experts FFN as dispatches (docs/formats.md §8, runtime/ops_moe.h): norm → router
// → routing (scores, group limits, top-k, weights) → the tokens grouped by expert → the chosen
// experts' gated FFNs, reading only their weights → the weighted sum plus the shared expert,
// added to the residual. Everything stays on the GPU; the graph replays for every step.
#include "arch/architecture.h"
#include "context.h"
#include "graph/transformer.h"
#include "ops.h"

namespace vkllm {

void Transformer::record_moe(Stream& s, const MoeWeights& w, uint32_t l, uint32_t n) {
  const Acts& a = acts_;
  const MoeConfig& m = c_.moe;
  uint32_t E = m.n_experts, k = m.n_experts_used, F = m.expert_hidden_dim, dim = c_.dim;
  uint64_t f = 4ull * n;
  BufferView x = act(a.x, f * dim), h = act(a.h, f * dim);
  BufferView logits = act(a.logits, f * E), ids = act(a.ids, f * k), weights = act(a.weights, f * k);
  BufferView gate = act(a.exp_gate, f * k * F), up = act(a.exp_up, f * k * F), down = act(a.exp_down, f * k * dim);
  ops::ExpertPlan plan = ops::expert_plan(ctx_, n, k, E);
  BufferView plan_buf = act(a.plan, plan.bytes());

  ops::rmsnorm(s, x, w.norm->view, h, n, dim, c_.norm_eps);
  project(s, *w.router, h, logits, n);
  tap(s, int(l), "ffn_moe_logits", logits, n, E);
  ops::MoeRouteParams route{.n_tokens = n,
                            .n_experts = E,
                            .n_used = k,
                            .sigmoid = m.gating == MoeGating::Sigmoid,
                            .n_groups = m.n_groups,
                            .n_groups_used = m.n_groups_used,
                            .norm = m.weights_norm,
                            .scale = m.weights_scale};
  ops::moe_route(s, route, logits, w.probs_bias ? w.probs_bias->view : BufferView{}, ids, weights);
  tap(s, int(l), "ffn_moe_weights", weights, n, k);
  tap(s, int(l), "ffn_moe_topk", ids, n, k);  // the chosen experts: i32 bit patterns (for comparing routings)
  ops::moe_plan(s, plan, ids, plan_buf);

  // The routed experts: pair p = t·k + j reads token t's h for gate and up, its own row for down.
  ops::matmul_id(s, plan, w.gate->type, w.gate->experts, h, plan_buf, gate, F, dim, k);
  ops::matmul_id(s, plan, w.up->type, w.up->experts, h, plan_buf, up, F, dim, k);
  if (c_.architecture().recipe.ffn_activation == FfnActivation::Gelu) {
    ops::gelu(s, gate, gate, n * k * F);
    ops::mul(s, gate, up, gate, n * k * F);
  } else {
    ops::swiglu(s, gate, up, gate, n * k * F);
  }
  ops::matmul_id(s, plan, w.down->type, w.down->experts, gate, plan_buf, down, dim, F, 1);

  // The shared expert (a dense gated FFN over every token), gated by a sigmoid where present.
  BufferView shared, shared_gate;
  if (w.shared_gate) {
    shared = act(a.proj, f * dim);
    gated(s, *w.shared_gate, *w.shared_up, *w.shared_down, h, shared, n, m.shared_hidden_dim);
    if (w.shared_router) {
      shared_gate = act(a.shared_gate, f);
      project(s, *w.shared_router, h, shared_gate, n);
    }
  }
  ops::moe_combine(s, down, weights, shared, shared_gate, x, n, k, dim);
}

}  // namespace vkllm
