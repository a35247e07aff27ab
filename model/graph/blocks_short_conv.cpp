// LFM2's gated short conv (docs/formats.md §15.1; ref::Model's short_conv_block): in_proj of the
// normed input gives b, c and x per token; the causal conv over b·x continues from each sequence's
// conv state (its last kernel - 1 products) and is multiplied by c, in one kernel that reads b, c
// and x in place (ops::ssm_conv, gated); the output projection is added to the residual. The
// states live in the RecurrentCache, one slot per sequence; a short conv has no second state.
#include "graph/blocks.h"
#include "ops_linear.h"

namespace vkllm::blocks {

void short_conv(const RecordContext& r, const ShortConvWeights& w, uint32_t l) {
  const ModelConfig& c = r.c;
  uint32_t n = r.n, E = c.dim;
  BufferView bcx = r.act_rows(r.acts.sc_bcx, 3 * E), y = r.act_rows(r.acts.sc_y, E);
  project(r, *w.in, normed_input(r, *w.norm, l, "attn_norm"), bcx, n);
  ops::ssm_conv(r.s, bcx, w.taps->view, r.recurrent->conv(l), r.step_params(), y,
                {.n_tokens = n,
                 .seqs = r.seqs,
                 .channels = E,
                 .kernel = c.short_conv.kernel,
                 .token_stride = 3 * E,
                 .silu = false,
                 .gated = true});
  block_output(r, *w.out, nullptr, y, l, "attn_out");
  r.tap(int(l), "ffn_inp", r.act_rows(r.acts.x, E), n, E);
}

}  // namespace vkllm::blocks
