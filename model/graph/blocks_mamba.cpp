// The Mamba-2 mixer of the state-space hybrids (docs/formats.md §15; ref::Model's mamba2_block):
// ssm_in of the normed input gives z | xBC | dt; the causal conv1d (+ bias, SiLU) over xBC
// continuing from each sequence's conv state; the selective scan continuing from each sequence's
// SSM state, with dt's bias and softplus, D's skip and the z gate (y·silu(z)) in its epilogue; the
// RMSNorm of each group of y; ssm_out added to the residual. The states live in the
// RecurrentCache, one slot per sequence.
#include <fmt/format.h>

#include "context.h"
#include "error.h"
#include "graph/blocks.h"
#include "ops.h"
#include "ops_linear.h"

namespace vkllm::blocks {

void mamba2(const RecordContext& r, const Mamba2Weights& w, uint32_t l) {
  const ModelConfig& c = r.c;
  const Mamba2Config& m = c.ssm;
  const Acts& a = r.acts;
  Stream& s = r.s;
  uint32_t n = r.n, D = m.inner, H = m.heads, N = m.state, G = m.groups, C = m.conv_channels();
  uint32_t in_width = 2 * D + 2 * G * N + H;  // z | xBC | dt
  BufferView proj = r.act_rows(a.ssm_proj, in_width), xbc = r.act_rows(a.ssm_xbc, C), y = r.act_rows(a.ssm_y, D);
  project(r, *w.in, normed_input(r, *w.norm, l, "attn_norm"), proj, n);
  // xBC starts D floats into each row of the projection: a binding offset of its own.
  uint64_t offset = 4ull * D;
  ENSURE(offset % r.ctx.caps().storage_offset_alignment == 0,
         fmt::format("ssm.inner_size {} puts the conv's input at an offset this device cannot bind", D));
  BufferView conv_in = proj;
  conv_in.offset += offset, conv_in.size -= offset;
  ops::ssm_conv(s, conv_in, w.conv->view, r.recurrent->conv(l), r.step_params(), xbc,
                {.n_tokens = n, .seqs = r.seqs, .channels = C, .kernel = m.conv_kernel, .token_stride = in_width},
                w.conv_bias ? w.conv_bias->view : BufferView{});
  ops::ssm_scan(s, xbc, proj, w.dt->view, w.a->view, w.d->view, r.recurrent->state(l), r.step_params(), y,
                {.n_tokens = n,
                 .seqs = r.seqs,
                 .heads = H,
                 .head_dim = m.head_dim(),
                 .state = N,
                 .groups = G,
                 .x_stride = C,
                 .b_offset = D,
                 .c_offset = D + G * N,
                 .dt_stride = in_width,
                 .dt_offset = 2 * D + 2 * G * N,
                 .z_offset = 0,
                 .gate = true});
  ops::rmsnorm_groups(s, y, w.ssm_norm->view, y, n, G, D / G, c.norm_eps);
  block_output(r, *w.out, nullptr, y, l, "mamba_out");
}

}  // namespace vkllm::blocks
