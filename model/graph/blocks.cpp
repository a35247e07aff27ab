// The shared blocks a layer is built from, as dispatches, top to bottom like the paper: norm →
// qkv (→ q/k head norms) → rope → kv_store → attention → out-proj (→ post norm) → residual;
// norm → gated FFN (→ post norm) → residual. Which attention block a layer uses is its
// architecture's recipe (model/arch/); the mixture-of-experts FFN is in blocks_moe.cpp.
#include <cmath>
#include <optional>

#include "arch/architecture.h"
#include "context.h"
#include "graph/transformer.h"
#include "ops.h"
#include "push.h"

namespace vkllm {

void Transformer::project(Stream& s, const Tensor& w, BufferView x, BufferView y, uint32_t n, const Tensor* bias) {
  ops::matmul(s, w.type, w.view, x, y, w.rows, n, w.cols, {}, bias ? bias->view : BufferView{});
}

// x += post_norm(in · Wᵀ), a block's last projection into the residual stream. Without a post norm
// the add is the product's epilogue (one dispatch, no pass over proj); then the product itself
// is never stored, so a tapped forward sees no `name` tap (ffn_inp / l_out after it still are).
void Transformer::block_output(Stream& s, const Tensor& w, const Tensor* post_norm, BufferView in, uint32_t n,
                               uint32_t l, const char* name) {
  BufferView x = act(acts_.x, 4ull * n * c_.dim);
  if (!post_norm) {
    ops::matmul_fused(s, w.type, w.view, in, x, w.rows, n, w.cols, {.accumulate = true});
    return;
  }
  BufferView proj = act(acts_.proj, 4ull * n * c_.dim);
  project(s, w, in, proj, n);
  ops::rmsnorm(s, proj, post_norm->view, proj, n, c_.dim, c_.norm_eps);
  tap(s, int(l), name, proj, n, c_.dim);
  ops::add(s, x, proj, x, n * c_.dim);
}

namespace {

// Tensors stored back to back in one buffer as one view (rows of the first, then the next...), or
// nothing when one is missing or they are apart. Weights places q, k, v and gate, up so.
std::optional<BufferView> joined(std::initializer_list<const Tensor*> ts) {
  BufferView all{};
  for (const Tensor* t : ts) {
    if (!t || (all.buffer && (t->view.buffer != all.buffer || t->view.offset != all.offset + all.size)))
      return std::nullopt;
    if (!all.buffer)
      all = t->view;
    else
      all.size += t->view.size;
  }
  return all;
}

}  // namespace

// q, k and v of h: one product over Wq, Wk and Wv (and their biases) where they lie back to back in
// one type, its rows stored into the three parts of the qkv activation; else three products.
void Transformer::project_qkv(Stream& s, const AttentionWeights& w, BufferView h, uint32_t n) {
  const Tensor &wq = *w.q, &wk = *w.k, &wv = *w.v;
  BufferView q = act(acts_.qkv, 4ull * n * wq.rows, qkv_offset(0));
  BufferView k = act(acts_.qkv, 4ull * n * wk.rows, qkv_offset(1)),
             v = act(acts_.qkv, 4ull * n * wv.rows, qkv_offset(2));
  std::optional<BufferView> weights = joined({w.q, w.k, w.v}), biases = joined({w.q_bias, w.k_bias, w.v_bias});
  bool any_bias = w.q_bias || w.k_bias || w.v_bias;
  bool one = weights && wq.type == wk.type && wq.type == wv.type && wq.cols == wk.cols && wq.cols == wv.cols &&
             (!any_bias || biases) && weights->size <= ctx_.caps().max_storage_buffer_range;
  if (!one) {
    project(s, wq, h, q, n, w.q_bias);
    project(s, wk, h, k, n, w.k_bias);
    project(s, wv, h, v, n, w.v_bias);
    return;
  }
  uint32_t M = wq.rows + wk.rows + wv.rows;
  ops::MatmulFusion parts{.split = {wq.rows, wq.rows + wk.rows},
                          .offset = {uint32_t(qkv_offset(1) / 4), uint32_t(qkv_offset(2) / 4)}};
  BufferView y = act(acts_.qkv, qkv_offset(2) + 4ull * n * wv.rows);
  ops::matmul_fused(s, wq.type, *weights, h, y, M, n, wq.cols, parts, any_bias ? *biases : BufferView{});
}

void Transformer::tap(Stream& s, int layer, const char* name, BufferView v, uint32_t rows, uint32_t width) {
  if (!tapping_) return;
  uint64_t bytes = 4ull * rows * width;
  Tapped t{.tap = {.layer = layer, .name = name, .rows = rows, .width = width},
           .host = std::make_unique<Buffer>(ctx_, bytes, Memory::Host, std::string("tap ") + name)};
  s.copy({v.buffer, v.offset, bytes}, t.host->view());
  tapping_->push_back(std::move(t));
}

// Attention of the n tokens of the step being recorded (seqs_ sequences, each over its own slot of
// the cache). The row tile is planned for the most tokens one sequence can have: n - seqs + 1.
ops::AttentionShape Transformer::attention_shape(uint32_t n, uint32_t kv_heads, uint32_t dk, uint32_t dv) const {
  return {.n_q = n,
          .seqs = seqs_,
          .seq_q = n - seqs_ + 1,
          .kv_slots = cache_.slots(),
          .n_heads = c_.n_heads,
          .n_kv_heads = kv_heads,
          .dk = dk,
          .dv = dv,
          .kv_type = cache_.type(),
          .scale = float(c_.attention_scale()),
          .causal = true,
          .max_kv = cache_.n_ctx()};
}

// Rope of the first rope.dim values of each of `heads` heads (tokens token_stride floats apart) at
// the positions of this step, as the layer rotates (sliding-window layers may have their own base).
ops::RopeParams Transformer::rope_params(uint32_t n, uint32_t heads, uint32_t head_dim, uint32_t token_stride,
                                         uint32_t layer) const {
  const RopeConfig& r = c_.rope_of(layer);
  ops::RopeParams p{.n_tokens = n,
                    .n_heads = heads,
                    .head_dim = head_dim,
                    .rot_dim = r.dim,
                    .mode = r.mode == RopeMode::Neox ? ops::RopeMode::Neox : ops::RopeMode::Norm,
                    .theta_base = r.theta,
                    .freq_scale = 1.0f / r.factor,
                    .token_stride = token_stride,
                    .head_stride = head_dim};
  if (r.scaling == RopeScaling::Yarn)
    p.ext_factor = 1.0f, p.n_ctx_orig = r.original_ctx, p.attn_factor = float(r.yarn_attn_factor());
  return p;
}

// Rotates x (n, heads, head_dim; tokens token_stride floats apart) in place.
void Transformer::rope(Stream& s, BufferView x, uint32_t n, uint32_t heads, uint32_t head_dim, uint32_t token_stride,
                       uint32_t layer) {
  BufferView ff = w_.rope_freqs() ? w_.rope_freqs()->view : BufferView{};
  ops::rope(s, x, positions_.view(0, n * 4ull), ff, x, rope_params(n, heads, head_dim, token_stride, layer));
}

// q (n, H, hd) and k (n, G, hd), packed, in place: one dispatch where k follows q in one buffer.
void Transformer::rope_qk(Stream& s, BufferView q, BufferView k, uint32_t n, uint32_t H, uint32_t G, uint32_t hd,
                          uint32_t layer) {
  if (q.buffer != k.buffer || k.offset < q.offset + q.size || (k.offset - q.offset) % 4) {
    rope(s, q, n, H, hd, H * hd, layer);
    rope(s, k, n, G, hd, G * hd, layer);
    return;
  }
  ops::RopeParams p = rope_params(n, H, hd, H * hd, layer);
  p.n_heads2 = G, p.token_stride2 = G * hd, p.offset2 = uint32_t((k.offset - q.offset) / 4);
  BufferView both{q.buffer, q.offset, k.offset + k.size - q.offset};
  BufferView ff = w_.rope_freqs() ? w_.rope_freqs()->view : BufferView{};
  ops::rope(s, both, positions_.view(0, n * 4ull), ff, both, p);
}

// Standard attention: q/k/v projections (+ biases), rope, the K/V store, flash attention over the
// cache, the output projection and the residual add.
void Transformer::record_attention(Stream& s, const AttentionWeights& w, uint32_t l, uint32_t n) {
  const Acts& a = acts_;
  uint32_t H = c_.n_heads, G = c_.n_kv_heads, hd = c_.head_dim, vd = c_.v_head_dim;
  BufferView h = act(a.h, n * 4ull * c_.dim), q = act(a.qkv, n * 4ull * H * hd, qkv_offset(0));
  BufferView k = act(a.qkv, n * 4ull * G * hd, qkv_offset(1)), v = act(a.qkv, n * 4ull * G * vd, qkv_offset(2));
  BufferView o = act(a.attn, n * 4ull * H * vd);
  ops::rmsnorm(s, act(a.x, n * 4ull * c_.dim), w.norm->view, h, n, c_.dim, c_.norm_eps);
  tap(s, int(l), "attn_norm", h, n, c_.dim);
  project_qkv(s, w, h, n);
  if (w.q_norm) ops::rmsnorm(s, q, w.q_norm->view, q, n * H, hd, c_.norm_eps);  // per head
  if (w.k_norm) ops::rmsnorm(s, k, w.k_norm->view, k, n * G, hd, c_.norm_eps);
  rope_qk(s, q, k, n, H, G, hd, l);
  // Each token's K/V go to its row of the cache (slot * n_ctx + position).
  DType kv_type = cache_.type();
  BufferView rows = kv_rows_.view(0, n * 4ull);
  ops::kv_store_pair(s, k, v, rows, cache_.k(l), cache_.v(l),
                     {.n_tokens = n, .n_kv_heads = G, .head_dim = hd, .n_ctx = cache_.rows(), .cache_type = kv_type},
                     vd);
  ops::AttentionShape shape = attention_shape(n, G, hd, vd);
  shape.window = c_.window(l), shape.softcap = c_.attn_softcap;
  ops::attention(s, shape, q, cache_.k(l), cache_.v(l), step_.view(0, seqs_ * sizeof(push::StepParams)), o,
                 scratch_ ? scratch_->view() : BufferView{});
  capture_probs(s, shape, q, l);
  block_output(s, *w.out, w.post_norm, o, n, l, "attn_out");
  tap(s, int(l), "ffn_inp", act(a.x, n * 4ull * c_.dim), n, c_.dim);
}

// MLA, absorbed (docs/formats.md §5.3): the cache holds [c ; k_pe] per token; queries move into the
// latent space (q_lat = Wukᵀ q_nope per head), attention runs as MQA over the latent rows
// (K width kv_lora + rope, V = the first kv_lora values), and o = Wuv o_lat per head.
void Transformer::record_latent_attention(Stream& s, const LatentAttentionWeights& w, uint32_t l, uint32_t n) {
  const MlaConfig& m = c_.mla;
  const Acts& a = acts_;
  uint32_t H = c_.n_heads, hd = c_.head_dim, nope = m.qk_nope_head_dim, rot = m.qk_rope_head_dim;
  uint32_t lat = m.kv_lora_rank, row = lat + rot, vd = m.v_head_dim;
  uint64_t f = 4ull * n;
  BufferView x = act(a.x, f * c_.dim), h = act(a.h, f * c_.dim), q = act(a.q, f * H * hd);
  BufferView kv = act(a.kv, f * row), c = act(a.c, f * lat), kpe = act(a.kpe, f * rot);
  BufferView qpe = act(a.qpe, f * H * rot), qcat = act(a.qcat, f * H * row), olat = act(a.olat, f * H * lat);
  BufferView o = act(a.attn, f * H * vd), rows = kv_rows_.view(0, n * 4ull);

  ops::rmsnorm(s, x, w.norm->view, h, n, c_.dim, c_.norm_eps);
  tap(s, int(l), "attn_norm", h, n, c_.dim);
  if (m.q_lora_rank) {
    BufferView qa = act(a.qa, f * m.q_lora_rank);
    project(s, *w.q_a, h, qa, n);
    ops::rmsnorm(s, qa, w.q_a_norm->view, qa, n, m.q_lora_rank, c_.norm_eps);
    project(s, *w.q_b, qa, q, n);
  } else {
    project(s, *w.q, h, q, n);
  }
  // The latent row: normalised c and the roped k_pe, stored side by side in the cache.
  project(s, *w.kv_a, h, kv, n);
  ops::copy_strided(s, kv, c, {.rows = n, .cols = 1, .len = lat, .src_row_stride = row, .dst_row_stride = lat});
  ops::copy_strided(
      s, kv, kpe, {.rows = n, .cols = 1, .len = rot, .src_row_stride = row, .src_offset = lat, .dst_row_stride = rot});
  ops::rmsnorm(s, c, w.kv_a_norm->view, c, n, lat, c_.norm_eps);
  rope(s, kpe, n, 1, rot, rot, l);
  DType kv_type = cache_.type();
  ops::kv_store(s, c, rows, cache_.k(l),
                {.n_tokens = n,
                 .n_kv_heads = 1,
                 .head_dim = lat,
                 .n_ctx = cache_.rows(),
                 .cache_type = kv_type,
                 .cache_head_dim = row});
  ops::kv_store(s, kpe, rows, cache_.k(l),
                {.n_tokens = n,
                 .n_kv_heads = 1,
                 .head_dim = rot,
                 .n_ctx = cache_.rows(),
                 .cache_type = kv_type,
                 .cache_head_dim = row,
                 .cache_col = lat});

  // The absorbed query [Wukᵀ q_nope ; rope(q_pe)] per head.
  ops::copy_strided(s, q, qpe,
                    {.rows = n,
                     .cols = H,
                     .len = rot,
                     .src_row_stride = H * hd,
                     .src_col_stride = hd,
                     .src_offset = nope,
                     .dst_row_stride = H * rot,
                     .dst_col_stride = rot});
  rope(s, qpe, n, H, rot, H * rot, l);
  ops::matmul(
      s, w.k_b->type, w.k_b->view, q, qcat, lat, n, nope,
      {.count = H, .x_batch_stride = hd, .x_row_stride = H * hd, .y_batch_stride = row, .y_row_stride = H * row});
  ops::copy_strided(s, qpe, qcat,
                    {.rows = n,
                     .cols = H,
                     .len = rot,
                     .src_row_stride = H * rot,
                     .src_col_stride = rot,
                     .dst_row_stride = H * row,
                     .dst_col_stride = row,
                     .dst_offset = lat});

  // MQA over the latent rows: V is the first lat values of each K row (same buffer and strides).
  ops::AttentionShape shape = attention_shape(n, 1, row, lat);
  shape.k_head_stride = shape.v_head_stride = cache_.rows() * row;
  shape.k_row_stride = shape.v_row_stride = row;
  ops::attention(s, shape, qcat, cache_.k(l), cache_.v(l), step_.view(0, seqs_ * sizeof(push::StepParams)), olat,
                 scratch_ ? scratch_->view() : BufferView{});
  capture_probs(s, shape, qcat, l);  // over the latent rows: the numbers of the decompressed form
  ops::matmul(
      s, w.v_b->type, w.v_b->view, olat, o, vd, n, lat,
      {.count = H, .x_batch_stride = lat, .x_row_stride = H * lat, .y_batch_stride = vd, .y_row_stride = H * vd});
  block_output(s, *w.out, nullptr, o, n, l, "attn_out");
  tap(s, int(l), "ffn_inp", x, n, c_.dim);
}

// act(gate(h)) ⊙ up(h) into the gate activation, act = SiLU or tanh-GELU as the recipe says: one
// product with the activation in its epilogue where gate and up lie back to back (Weights places
// them so) and matmul takes the matvec kernel, else two products and the activation.
BufferView Transformer::gated_hidden(Stream& s, const Tensor& gate_w, const Tensor& up_w, BufferView h, uint32_t n,
                                     uint32_t hidden) {
  BufferView gate = act(acts_.gate, 4ull * n * hidden), up = act(acts_.up, 4ull * n * hidden);
  bool gelu = c_.architecture().recipe.ffn_activation == FfnActivation::Gelu;
  ops::MatmulFusion glu{.glu = gelu ? ops::Glu::Gelu : ops::Glu::Silu};
  std::optional<BufferView> both = joined({&gate_w, &up_w});
  if (both && gate_w.type == up_w.type && gate_w.cols == up_w.cols && gate_w.rows == up_w.rows &&
      both->size <= ctx_.caps().max_storage_buffer_range && ops::matmul_fusable(s, glu, n)) {
    ops::matmul_fused(s, gate_w.type, *both, h, gate, hidden, n, gate_w.cols, glu);
    return gate;
  }
  project(s, gate_w, h, gate, n);
  project(s, up_w, h, up, n);
  if (gelu) {
    ops::gelu(s, gate, gate, n * hidden);
    ops::mul(s, gate, up, gate, n * hidden);
  } else {
    ops::swiglu(s, gate, up, gate, n * hidden);
  }
  return gate;
}

// out = down(gated_hidden(h)).
void Transformer::gated(Stream& s, const Tensor& gate_w, const Tensor& up_w, const Tensor& down_w, BufferView h,
                        BufferView out, uint32_t n, uint32_t hidden) {
  project(s, down_w, gated_hidden(s, gate_w, up_w, h, n, hidden), out, n);
}

// Gated feed-forward (→ post norm) added to the residual.
void Transformer::record_ffn(Stream& s, const FfnWeights& w, uint32_t l, uint32_t n) {
  BufferView x = act(acts_.x, 4ull * n * c_.dim), h = act(acts_.h, 4ull * n * c_.dim);
  ops::rmsnorm(s, x, w.norm->view, h, n, c_.dim, c_.norm_eps);
  block_output(s, *w.down, w.post_norm, gated_hidden(s, *w.gate, *w.up, h, n, c_.hidden_dim[l]), n, l, "ffn_out");
}

}  // namespace vkllm
