// The mixture-of-experts FFN as dispatches (docs/formats.md §8, runtime/ops_moe.h): norm → router
// → routing (scores, group limits, top-k, weights) → the tokens grouped by expert → the chosen
// experts' gated FFNs, reading only their weights → the weighted sum plus the shared expert,
// added to the residual. Everything stays on the GPU; the graph replays for every step.
#include "arch/architecture.h"
#include "context.h"
#include "graph/blocks.h"
#include "ops.h"

namespace vkllm::blocks {

void moe(const RecordContext& r, const MoeWeights& w, uint32_t l) {
  const Acts& a = r.acts;
  const ModelConfig& c = r.c;
  const MoeConfig& m = c.moe;
  Stream& s = r.s;
  uint32_t n = r.n, E = m.n_experts, k = m.n_experts_used, F = m.expert_hidden_dim, dim = c.dim;
  BufferView x = r.act_rows(a.x, dim), h = r.act_rows(a.h, dim);
  BufferView logits = r.act_rows(a.logits, E), ids = r.act_rows(a.ids, k), weights = r.act_rows(a.weights, k);
  BufferView gate = r.act_rows(a.exp_gate, k * F), up = r.act_rows(a.exp_up, k * F),
             down = r.act_rows(a.exp_down, k * dim);
  ops::ExpertPlan plan = ops::expert_plan(r.ctx, n, k, E);
  BufferView plan_buf = r.act(a.plan, plan.bytes());

  ops::rmsnorm(s, x, w.norm->view, h, n, dim, c.norm_eps);
  project(r, *w.router, h, logits, n);
  r.tap(int(l), "ffn_moe_logits", logits, n, E);
  ops::MoeRouteParams route{.n_tokens = n,
                            .n_experts = E,
                            .n_used = k,
                            .sigmoid = m.gating == MoeGating::Sigmoid,
                            .n_groups = m.n_groups,
                            .n_groups_used = m.n_groups_used,
                            .norm = m.weights_norm,
                            .scale = m.weights_scale};
  ops::moe_route(s, route, logits, w.probs_bias ? w.probs_bias->view : BufferView{}, ids, weights);
  r.tap(int(l), "ffn_moe_weights", weights, n, k);
  r.tap(int(l), "ffn_moe_topk", ids, n, k);  // the chosen experts: i32 bit patterns (for comparing routings)
  ops::moe_plan(s, plan, ids, plan_buf);

  // The routed experts: pair p = t·k + j reads token t's h for gate and up, its own row for down.
  ops::matmul_id(s, plan, w.gate->type, w.gate->experts, h, plan_buf, gate, F, dim, k);
  ops::matmul_id(s, plan, w.up->type, w.up->experts, h, plan_buf, up, F, dim, k);
  if (c.architecture().recipe.ffn.activation == FfnActivation::Gelu) {
    ops::gelu(s, gate, gate, n * k * F);
    ops::mul(s, gate, up, gate, n * k * F);
  } else {
    ops::swiglu(s, gate, up, gate, n * k * F);
  }
  ops::matmul_id(s, plan, w.down->type, w.down->experts, gate, plan_buf, down, dim, F, 1);

  // The shared expert (a dense gated FFN over every token), gated by a sigmoid where present.
  BufferView shared, shared_gate;
  if (w.shared_gate) {
    shared = r.act_rows(a.proj, dim);
    gated(r, *w.shared_gate, *w.shared_up, *w.shared_down, h, shared, m.shared_hidden_dim);
    if (w.shared_router) {
      shared_gate = r.act_rows(a.shared_gate, 1);
      project(r, *w.shared_router, h, shared_gate, n);
    }
  }
  ops::moe_combine(s, down, weights, shared, shared_gate, x, n, k, dim);
}

}  // namespace vkllm::blocks
