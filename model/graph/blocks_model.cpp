// The graph around the layers: token embeddings, each layer's blocks in turn, final norm → logits.
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <variant>

#include "arch/architecture.h"
#include "context.h"
#include "error.h"
#include "graph/blocks.h"
#include "ops.h"
#include "push.h"

namespace vkllm::blocks {

namespace {

// gemma4's per-layer inputs (n, L, P) from the tokens and the scaled embeddings x:
// (rmsnorm(x · W_proj / sqrt(dim)) + table[token] · sqrt(P)) / sqrt(2), the norm per layer's P.
void per_layer_inputs(const RecordContext& r, BufferView x) {
  const ModelConfig& c = r.c;
  uint32_t n = r.n, L = c.n_layers, P = c.per_layer_embd;
  const Tensor& table = *r.w.per_layer_embd();
  BufferView all = r.act_rows(r.acts.per_layer, L * P), rows = r.act_rows(r.acts.per_layer_tok, L * P);
  ops::get_rows(r.s, table.type, table.view, r.in.tokens(n), rows, n, L * P);
  ops::scale(r.s, rows, rows, n * L * P, std::sqrt(float(P)));
  project(r, *r.w.find(TensorRole::PerLayerModelProj), x, all, n);
  ops::scale(r.s, all, all, n * L * P, 1.0f / std::sqrt(float(c.dim)));
  ops::rmsnorm(r.s, all, r.w.find(TensorRole::PerLayerProjNorm)->view, all, n * L, P, c.norm_eps);
  ops::add(r.s, all, rows, all, n * L * P);
  ops::scale(r.s, all, all, n * L * P, float(1 / std::sqrt(2.0)));
}

// After layer l: x += norm(W_proj · (gelu(W_gate · x) ⊙ the layer's inputs)) (gemma4), then x
// times the layer's output scale.
void layer_output(const RecordContext& r, const LayerWeights& lw, uint32_t l) {
  const ModelConfig& c = r.c;
  uint32_t n = r.n, P = c.per_layer_embd;
  BufferView x = r.act_rows(r.acts.x, c.dim);
  if (lw.per_layer_gate) {
    BufferView g = r.act_rows(r.acts.per_layer_h, P), in = r.act_rows(r.acts.per_layer_in, P);
    project(r, *lw.per_layer_gate, x, g, n);
    ops::gelu(r.s, g, g, n * P);
    ops::copy_strided(
        r.s, r.act_rows(r.acts.per_layer, c.n_layers * P), in,
        {.rows = n, .cols = 1, .len = P, .src_row_stride = c.n_layers * P, .src_offset = l * P, .dst_row_stride = P});
    ops::mul(r.s, g, in, g, n * P);
    block_output(r, *lw.per_layer_proj, lw.per_layer_norm, g, l, "per_layer_embd_out");
  }
  if (lw.out_scale) ops::mul_rows(r.s, x, lw.out_scale->view, x, n * c.dim, 1);
}

// The n logits as the family ends them: divided by Granite's logit multiplier, soft-capped (gemma).
void finish_logits(const RecordContext& r, BufferView logits, uint32_t n) {
  const ModelConfig& c = r.c;
  if (c.multipliers.logit) ops::scale(r.s, logits, logits, n, 1.0f / c.multipliers.logit);
  if (c.final_softcap > 0) ops::softcap(r.s, logits, logits, n, c.final_softcap);
}

}  // namespace

void embeddings(const RecordContext& r) {
  const Tensor& embd = r.w.token_embd();
  const ModelConfig& c = r.c;
  BufferView x = r.act_rows(r.acts.x, c.dim);
  if (r.embd) {  // an image's rows go in as they are, unscaled (llama.cpp's embedding input)
    r.s.copy(r.embd->view(0, 4ull * r.n * c.dim), x);
  } else {
    ops::get_rows(r.s, embd.type, embd.view, r.in.tokens(r.n), x, r.n, c.dim);
    if (c.architecture().recipe.embeddings.scale) ops::scale(r.s, x, x, r.n * c.dim, std::sqrt(float(c.dim)));
    if (c.multipliers.embedding) ops::scale(r.s, x, x, r.n * c.dim, c.multipliers.embedding);
  }
  r.tap(-1, "inp_embd", x, r.n, c.dim);
  if (c.per_layer_embd) per_layer_inputs(r, x);
}

// The block's mixer as ModelConfig::mixer says, then (where the block has one) its FFN or MoE.
void layer(const RecordContext& r, uint32_t l, bool with_ffn) {
  const LayerWeights& lw = r.w.layer(l);
  switch (r.c.mixer(l)) {
    case Mixer::Attention:
      if (auto* latent = std::get_if<LatentAttentionWeights>(&lw.attention))
        latent_attention(r, *latent, l);
      else
        attention(r, std::get<AttentionWeights>(lw.attention), l);
      break;
    case Mixer::DeltaNet:
      linear_attention(r, std::get<LinearAttentionWeights>(lw.attention), l);
      break;
    case Mixer::Mamba2:
      mamba2(r, std::get<Mamba2Weights>(lw.attention), l);
      break;
    case Mixer::ShortConv:
      short_conv(r, std::get<ShortConvWeights>(lw.attention), l);
      break;
    case Mixer::None:
      break;
    default:
      throw Error(fmt::format("layer {}: vkllm runs no {} blocks yet", l, to_string(r.c.mixer(l))));
  }
  if (!with_ffn) return;
  if (r.c.has_ffn(l)) {
    if (auto* dense = std::get_if<FfnWeights>(&lw.ffn))
      ffn(r, *dense, l);
    else
      moe(r, std::get<MoeWeights>(lw.ffn), l);
  }
  layer_output(r, lw, l);
  r.tap(int(l), "l_out", r.act_rows(r.acts.x, r.c.dim), r.n, r.c.dim);
}

// Final norm and the output projection: of each sequence's last token (gathered by the indices
// in last_rows), or of all n in chunks of rows small enough for one binding of the logits. Hidden
// stops after the norm, written straight to the host-visible output: pooling is a few additions
// per value on the host, and the projection, the largest matmul, is not needed.
void output(const RecordContext& r, OutputMode mode) {
  const ModelConfig& c = r.c;
  const Acts& a = r.acts;
  Stream& s = r.s;
  uint32_t n = r.n, dim = c.dim, vocab = c.vocab_size, m = r.seqs;
  BufferView x = r.act_rows(a.x, dim), h = r.act_rows(a.h, dim);
  const Tensor& out = r.w.output();
  BufferView bias = r.w.output_bias() ? r.w.output_bias()->view : BufferView{};  // qwen2's, where the file has it
  if (mode == OutputMode::Hidden) {
    ops::rmsnorm(s, x, r.w.output_norm().view, r.logits.view(0, 4ull * n * dim), n, dim, c.norm_eps);
    return;
  }
  if (mode == OutputMode::Last) {
    BufferView hm = r.act(a.h, 4ull * m * dim);
    ops::get_rows(s, DType::F32, x, r.in.last_rows(m), hm, m, dim);
    ProjIn in{hm, &r.w.output_norm()};  // the final norm read in by the matvec where it runs
    if (!ops::matmul_fusable(s, {.norm = in.norm->view}, m)) {
      ops::rmsnorm(s, hm, r.w.output_norm().view, hm, m, dim, c.norm_eps);
      in.norm = nullptr;
    }
    BufferView lv = r.logits.view(0, 4ull * m * vocab);
    project(r, out, in, lv, m, r.w.output_bias());
    finish_logits(r, lv, m * vocab);
    return;
  }
  ops::rmsnorm(s, x, r.w.output_norm().view, h, n, dim, c.norm_eps);
  // Chunk starts must stay aligned for the x and logits views.
  uint64_t align = r.ctx.caps().storage_offset_alignment;
  uint64_t step =
      std::lcm(align / std::gcd<uint64_t>(align, 4ull * dim), align / std::gcd<uint64_t>(align, 4ull * vocab));
  uint64_t rows = std::max<uint64_t>(1, r.ctx.caps().max_storage_buffer_range / (4ull * vocab));
  rows = std::max<uint64_t>(step, rows / step * step);
  for (uint64_t r0 = 0; r0 < n; r0 += rows) {
    uint32_t k = uint32_t(std::min<uint64_t>(rows, n - r0));
    BufferView rows_h = h;
    rows_h.offset += r0 * 4 * dim, rows_h.size = 4ull * k * dim;
    BufferView rows_out = r.logits.view(r0 * 4 * vocab, 4ull * k * vocab);
    ops::matmul(s, out.type, out.view, rows_h, rows_out, vocab, k, dim, {}, bias);
    finish_logits(r, rows_out, k * vocab);
  }
}

}  // namespace vkllm::blocks
