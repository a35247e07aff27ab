// Gated DeltaNet, the linear attention of hybrid models (docs/formats.md §10; ref::Model's
// linear_block): q|k|v, the output gate z, alpha and beta from the normed input; the causal conv1d
// (SiLU) over q|k|v continuing from each sequence's conv state; the L2 norm of the q and k heads;
// the gated delta rule continuing from each sequence's state (token by token in a decode step,
// in chunks when a sequence of the step has several tokens); the gated RMSNorm by z; the output
// projection added to the residual. The states live in the RecurrentCache, one slot per sequence.
#include "context.h"
#include "graph/blocks.h"
#include "ops.h"
#include "ops_linear.h"

namespace vkllm::blocks {

void linear_attention(const RecordContext& r, const LinearAttentionWeights& w, uint32_t l) {
  const ModelConfig& c = r.c;
  const LinearAttentionConfig& a = c.linear;
  const Acts& acts = r.acts;
  Stream& s = r.s;
  uint32_t n = r.n, C = a.conv_channels(), V = a.value_dim(), Hv = a.v_heads, S = a.head_dim;
  BufferView x = r.act_rows(acts.x, c.dim), h = r.act_rows(acts.h, c.dim);
  BufferView qkv = r.act_rows(acts.lin_qkv, C), conv = r.act_rows(acts.lin_conv, C), z = r.act_rows(acts.lin_z, V);
  BufferView alpha = r.act_rows(acts.lin_alpha, Hv), beta = r.act_rows(acts.lin_beta, Hv),
             o = r.act_rows(acts.lin_o, V);

  ops::rmsnorm(s, x, w.norm->view, h, n, c.dim, c.norm_eps);
  r.tap(int(l), "attn_norm", h, n, c.dim);
  project(r, *w.qkv, h, qkv, n);
  project(r, *w.z, h, z, n);
  project(r, *w.beta, h, beta, n);
  project(r, *w.alpha, h, alpha, n);
  ops::ssm_conv(s, qkv, w.conv->view, r.recurrent->conv(l), r.step_params(), conv,
                {.n_tokens = n, .seqs = r.seqs, .channels = C, .kernel = a.conv_kernel});
  ops::l2_norm(s, conv, conv,
               {.n_tokens = n, .heads = 2 * a.k_heads, .width = S, .token_stride = C, .eps = c.norm_eps});
  ops::DeltaRuleParams p{.n_tokens = n,
                         .seqs = r.seqs,
                         .h_k = a.k_heads,
                         .h_v = Hv,
                         .s = S,
                         .qk_stride = C,
                         .q_offset = 0,
                         .k_offset = a.key_dim(),
                         .v_offset = 2 * a.key_dim(),
                         .chunked = n > r.seqs};  // some sequence of the step has several tokens
  BufferView scratch = p.chunked ? r.linear_scratch->view(0, ops::delta_rule_scratch_bytes(p)) : BufferView{};
  ops::delta_rule(s, conv, alpha, beta, w.dt->view, w.a->view, r.recurrent->state(l), r.step_params(), o, scratch, p);
  ops::gated_rmsnorm(s, o, w.ssm_norm->view, z, o, n * Hv, S, c.norm_eps);
  block_output(r, *w.out, nullptr, o, l, "attn_out");
  r.tap(int(l), "ffn_inp", x, n, c.dim);
}

}  // namespace vkllm::blocks
