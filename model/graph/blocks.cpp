// The shared blocks a layer is built from, as dispatches, top to bottom like the paper: norm →
// qkv (→ q/k head norms) → rope → kv_store → attention → out-proj (→ post norm) → residual;
// norm → gated FFN (→ post norm) → residual. Which attention block a layer uses is its
// architecture's recipe (model/arch/); the mixture-of-experts FFN is in blocks_moe.cpp, latent
// attention in blocks_latent.cpp.
#include <algorithm>
#include <cmath>
#include <optional>

#include "arch/architecture.h"
#include "context.h"
#include "graph/blocks.h"
#include "ops.h"
#include "ops_linear.h"
#include "push.h"

namespace vkllm::blocks {

void project(const RecordContext& r, const Tensor& w, BufferView x, BufferView y, uint32_t n, const Tensor* bias) {
  ops::matmul(r.s, w.type, w.view, x, y, w.rows, n, w.cols, {}, bias ? bias->view : BufferView{});
}

namespace {

// The norm's part of a product's fusion.
ops::MatmulFusion norm_fusion(const RecordContext& r, const ProjIn& in, ops::MatmulFusion f = {}) {
  if (in.norm) f.norm = in.norm->view, f.norm_eps = r.c.norm_eps;
  return f;
}

}  // namespace

void project(const RecordContext& r, const Tensor& w, const ProjIn& in, BufferView y, uint32_t n, const Tensor* bias) {
  if (!in.norm) return project(r, w, in.x, y, n, bias);
  ops::matmul_fused(r.s, w.type, w.view, in.x, y, w.rows, n, w.cols, norm_fusion(r, in),
                    bias ? bias->view : BufferView{});
}

ProjIn normed_input(const RecordContext& r, const Tensor& norm, uint32_t l, const char* tap) {
  const ModelConfig& c = r.c;
  BufferView x = r.act_rows(r.acts.x, c.dim);
  // The arena's planning trace (unshared) takes the unfused path, so that h has its lifetimes
  // for the recordings that use it (tapped forwards, and wherever matvec does not run).
  bool tracing = r.unshared != VK_NULL_HANDLE;
  if (!r.taps && !tracing && ops::matmul_fusable(r.s, {.norm = norm.view}, r.n)) return {x, &norm};
  BufferView h = r.act_rows(r.acts.h, c.dim);
  ops::rmsnorm(r.s, x, norm.view, h, r.n, c.dim, c.norm_eps);
  r.tap(int(l), tap, h, r.n, c.dim);
  return {h};
}

void add_residual(const RecordContext& r, BufferView out) {
  const ModelConfig& c = r.c;
  BufferView x = r.act_rows(r.acts.x, c.dim);
  if (c.multipliers.residual)
    ops::add_scaled(r.s, x, out, x, r.n * c.dim, c.multipliers.residual);
  else
    ops::add(r.s, x, out, x, r.n * c.dim);
}

// Without a post norm the add is the product's epilogue (one dispatch, no pass over proj); then the
// product itself is never stored, so a tapped forward sees no `name` tap (ffn_inp / l_out after
// it still are). With one, the norm and the add are one pass (ops::rmsnorm_add) but in a tapped
// forward, which stores the normed product for its tap. A residual multiplier (Granite) takes
// the stored product, scaled into the residual by one more dispatch.
void block_output(const RecordContext& r, const Tensor& w, const Tensor* post_norm, BufferView in, uint32_t l,
                  const char* name, const Tensor* bias) {
  const ModelConfig& c = r.c;
  BufferView x = r.act_rows(r.acts.x, c.dim);
  bool scaled = c.multipliers.residual != 0;
  if (!post_norm && !scaled) {
    ops::matmul_fused(r.s, w.type, w.view, in, x, w.rows, r.n, w.cols, {.accumulate = true},
                      bias ? bias->view : BufferView{});
    return;
  }
  BufferView proj = r.act_rows(r.acts.proj, c.dim);
  project(r, w, in, proj, r.n, bias);
  if (post_norm && !scaled && !r.taps) {  // the post norm and the add in one pass (nothing wants the normed product)
    ops::rmsnorm_add(r.s, proj, post_norm->view, x, r.n, c.dim, c.norm_eps);
    return;
  }
  if (post_norm) ops::rmsnorm(r.s, proj, post_norm->view, proj, r.n, c.dim, c.norm_eps);
  r.tap(int(l), name, proj, r.n, c.dim);
  add_residual(r, proj);
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

// q, k and v of h: one product over Wq, Wk and Wv (and their biases) where they lie back to back in
// one type, its rows stored into the three parts of the qkv activation; else three products. A
// layer without Wv (gemma4's attention_k_eq_v) takes V as a copy of K's projection.
void project_qkv(const RecordContext& r, const AttentionWeights& w, const ProjIn& h) {
  const Tensor &wq = *w.q, &wk = *w.k;
  const uint64_t* at = r.acts.qkv_offsets;
  uint32_t n = r.n;
  BufferView q = r.act(r.acts.qkv, 4ull * n * wq.rows, at[0]), k = r.act(r.acts.qkv, 4ull * n * wk.rows, at[1]);
  if (!w.v) {
    project(r, wq, h, q, n, w.q_bias);
    project(r, wk, h, k, n, w.k_bias);
    ops::scale(r.s, k, r.act(r.acts.qkv, 4ull * n * wk.rows, at[2]), n * wk.rows, 1.0f);
    return;
  }
  const Tensor& wv = *w.v;
  BufferView v = r.act(r.acts.qkv, 4ull * n * wv.rows, at[2]);
  std::optional<BufferView> weights = joined({w.q, w.k, w.v}), biases = joined({w.q_bias, w.k_bias, w.v_bias});
  bool any_bias = w.q_bias || w.k_bias || w.v_bias;
  bool one = weights && wq.type == wk.type && wq.type == wv.type && wq.cols == wk.cols && wq.cols == wv.cols &&
             (!any_bias || biases) && weights->size <= r.ctx.caps().max_storage_buffer_range;
  if (!one) {
    project(r, wq, h, q, n, w.q_bias);
    project(r, wk, h, k, n, w.k_bias);
    project(r, wv, h, v, n, w.v_bias);
    return;
  }
  uint32_t M = wq.rows + wk.rows + wv.rows;
  ops::MatmulFusion parts{.split = {wq.rows, wq.rows + wk.rows}, .offset = {uint32_t(at[1] / 4), uint32_t(at[2] / 4)}};
  BufferView y = r.act(r.acts.qkv, at[2] + 4ull * n * wv.rows);
  ops::matmul_fused(r.s, wq.type, *weights, h.x, y, M, n, wq.cols, norm_fusion(r, h, parts),
                    any_bias ? *biases : BufferView{});
}

// Gated attention's projections (qwen35): Wq gives q_h then gate_h per head; q goes to the q part
// of the qkv activation, the gate to its own, k and v to theirs.
void gated_query(const RecordContext& r, const AttentionWeights& w, const ProjIn& h) {
  const Acts& a = r.acts;
  uint32_t n = r.n, H = r.c.n_heads, hd = r.c.head_dim;
  BufferView both = r.act_rows(a.q, 2 * H * hd), q = r.act(a.qkv, 4ull * n * H * hd, a.qkv_offsets[0]);
  project(r, *w.q, h, both, n, w.q_bias);
  project(r, *w.k, h, r.act(a.qkv, 4ull * n * w.k->rows, a.qkv_offsets[1]), n, w.k_bias);
  project(r, *w.v, h, r.act(a.qkv, 4ull * n * w.v->rows, a.qkv_offsets[2]), n, w.v_bias);
  push::CopyPush half{.rows = n,
                      .cols = H,
                      .len = hd,
                      .src_row_stride = 2 * H * hd,
                      .src_col_stride = 2 * hd,
                      .dst_row_stride = H * hd,
                      .dst_col_stride = hd};
  ops::copy_strided(r.s, both, q, half);
  half.src_offset = hd;
  ops::copy_strided(r.s, both, r.act_rows(a.attn_gate, H * hd), half);
}

// Rope of the first rope.dim values of each of `heads` heads (tokens token_stride floats apart) at
// the positions of this step, as the layer rotates (sliding-window layers may have their own base).
ops::RopeParams rope_params(const RecordContext& r, uint32_t heads, uint32_t head_dim, uint32_t token_stride,
                            uint32_t l) {
  const RopeConfig& rc = r.c.rope_of(l);
  ops::RopeParams p{.n_tokens = r.n,
                    .n_heads = heads,
                    .head_dim = head_dim,
                    .rot_dim = rc.dim,
                    .mode = rc.mode == RopeMode::Neox ? ops::RopeMode::Neox : ops::RopeMode::Norm,
                    .theta_base = rc.theta,
                    .freq_scale = 1.0f / rc.factor,
                    .token_stride = token_stride,
                    .head_stride = head_dim,
                    .interleaved = rc.sections_interleaved};
  std::copy(std::begin(rc.sections), std::end(rc.sections), p.sections);
  if (rc.sections[0] + rc.sections[1] + rc.sections[2] + rc.sections[3]) p.section_stride = r.in.section_stride();
  if (rc.scaling == RopeScaling::Yarn)
    p.ext_factor = 1.0f, p.n_ctx_orig = rc.original_ctx ? rc.original_ctx : r.c.seq_len,
    p.attn_factor = float(rc.yarn_attn_factor()), p.beta_fast = rc.yarn_beta_fast, p.beta_slow = rc.yarn_beta_slow;
  return p;
}

// rope_freqs where layer l's rope has them (gemma4: its global layers only).
BufferView freq_factors(const RecordContext& r, uint32_t l) {
  return r.w.rope_freqs() && r.c.rope_of(l).has_freq_factors ? r.w.rope_freqs()->view : BufferView{};
}

// q (n, H, hd) and k (n, G, hd), packed, in place: one dispatch where k follows q in one buffer.
void rope_qk(const RecordContext& r, BufferView q, BufferView k, uint32_t H, uint32_t G, uint32_t hd, uint32_t l) {
  if (q.buffer != k.buffer || k.offset < q.offset + q.size || (k.offset - q.offset) % 4) {
    rope(r, q, H, hd, H * hd, l);
    rope(r, k, G, hd, G * hd, l);
    return;
  }
  ops::RopeParams p = rope_params(r, H, hd, H * hd, l);
  p.n_heads2 = G, p.token_stride2 = G * hd, p.offset2 = uint32_t((k.offset - q.offset) / 4);
  BufferView both{q.buffer, q.offset, k.offset + k.size - q.offset};
  ops::rope(r.s, both, r.positions(), freq_factors(r, l), both, p);
}

// Whether rope_store can run layer l: q, k and v follow each other in one buffer and the layer's
// K and V caches share one of f16 or f32.
bool rope_store_fits(const RecordContext& r, BufferView q, BufferView k, BufferView v, uint32_t l) {
  return ops::rope_kv_store_fits(r.cache.k(l), r.cache.v(l), r.cache.type()) && q.buffer == k.buffer &&
         k.buffer == v.buffer && k.offset >= q.offset + q.size && v.offset >= k.offset + k.size &&
         (k.offset - q.offset) % 4 == 0 && (v.offset - q.offset) % 4 == 0;
}

// The head norms of q and k (where given), rope_qk and the K/V store by one dispatch
// (ops::rope_kv_store).
void rope_store(const RecordContext& r, BufferView q, BufferView k, BufferView v, const LayerAttention& la, uint32_t l,
                const Tensor* q_norm, const Tensor* k_norm) {
  uint32_t H = la.n_heads, G = la.n_kv_heads, hd = la.head_dim, vd = la.v_head_dim;
  BufferView kc = r.cache.k(l), vc = r.cache.v(l);
  ops::RopeParams p = rope_params(r, H, hd, H * hd, l);
  p.n_heads2 = G, p.token_stride2 = G * hd, p.offset2 = uint32_t((k.offset - q.offset) / 4);
  uint64_t word = r.cache.type() == DType::F32 ? 4 : 2;
  BufferView x{q.buffer, q.offset, v.offset + v.size - q.offset};
  BufferView cache{kc.buffer, kc.offset, vc.offset + vc.size - kc.offset};
  ops::rope_kv_store(r.s, x, r.positions(), freq_factors(r, l), p, r.kv_rows(), cache,
                     {.cache_type = r.cache.type(),
                      .n_ctx = r.cache.rows(),
                      .v_head_dim = vd,
                      .v_offset = uint32_t((v.offset - q.offset) / 4),
                      .v_token_stride = G * vd,
                      .v_cache_offset = uint32_t((vc.offset - kc.offset) / word),
                      .q_norm = q_norm ? q_norm->view : BufferView{},
                      .k_norm = k_norm ? k_norm->view : BufferView{},
                      .norm_eps = r.c.norm_eps});
}

}  // namespace

void rope(const RecordContext& r, BufferView x, uint32_t heads, uint32_t head_dim, uint32_t token_stride, uint32_t l) {
  ops::rope(r.s, x, r.positions(), freq_factors(r, l), x, rope_params(r, heads, head_dim, token_stride, l));
}

// The row tile is planned for the most tokens one sequence can have: n - seqs + 1.
ops::AttentionShape attention_shape(const RecordContext& r, uint32_t l, uint32_t kv_heads, uint32_t dk, uint32_t dv) {
  return {.n_q = r.n,
          .seqs = r.seqs,
          .seq_q = r.n - r.seqs + 1,
          .kv_slots = r.cache.slots(),
          .n_heads = r.c.n_heads,
          .n_kv_heads = kv_heads,
          .dk = dk,
          .dv = dv,
          .kv_type = r.cache.type(),
          .scale = float(r.c.attention_scale(l)),
          .causal = r.image_attention == ImageAttention::Causal ||
                    (r.image_attention == ImageAttention::BidirectionalSliding && r.c.window(l) == 0),
          .window = r.c.window(l),
          .softcap = r.c.attn_softcap,
          .max_kv = r.cache.n_ctx(),
          .plan_kv = r.plan_kv};
}

// Standard attention: q/k/v projections (+ biases), head norms, rope, the K/V store, flash
// attention over the cache (with sinks where the layer has them), the output projection (+ bias)
// and the residual add. A shared-KV layer (gemma4) projects only q and attends over the cache of
// the layer it reads (ModelConfig::kv_layer).
void attention(const RecordContext& r, const AttentionWeights& w, uint32_t l) {
  const ModelConfig& c = r.c;
  const Acts& a = r.acts;
  LayerAttention la = c.attention_of(l);
  uint32_t n = r.n, H = la.n_heads, G = la.n_kv_heads, hd = la.head_dim, vd = la.v_head_dim;
  bool own_kv = la.kv_layer == l;
  BufferView q = r.act(a.qkv, n * 4ull * H * hd, a.qkv_offsets[0]);
  BufferView k = r.act(a.qkv, n * 4ull * G * hd, a.qkv_offsets[1]),
             v = r.act(a.qkv, n * 4ull * G * vd, a.qkv_offsets[2]);
  BufferView o = r.act_rows(a.attn, H * vd);
  ProjIn h = normed_input(r, *w.norm, l, "attn_norm");
  const AttentionRecipe& recipe = c.architecture().recipe.attention;
  if (recipe.gated)
    gated_query(r, w, h);
  else if (own_kv)
    project_qkv(r, w, h);
  else
    project(r, *w.q, h, q, n, w.q_bias);
  // Each token's K/V go to its row of the cache (slot * n_ctx + position): with the head norms
  // and the rope of q and k in one dispatch where the cache allows, else norms, rope, then the store.
  bool fused = la.rotates && own_kv && !w.q_norm == !w.k_norm && rope_store_fits(r, q, k, v, l);
  if (w.q_norm && !fused) ops::rmsnorm(r.s, q, w.q_norm->view, q, n * H, hd, c.norm_eps);  // per head
  if (own_kv) {
    if (w.k_norm && !fused) ops::rmsnorm(r.s, k, w.k_norm->view, k, n * G, hd, c.norm_eps);
    if (recipe.v_norm) ops::rmsnorm(r.s, v, {}, v, n * G, vd, c.norm_eps);
  }
  if (fused) {
    rope_store(r, q, k, v, la, l, w.q_norm, w.k_norm);
  } else {
    if (la.rotates && own_kv)
      rope_qk(r, q, k, H, G, hd, l);
    else if (la.rotates)
      rope(r, q, H, hd, H * hd, l);
    if (own_kv)
      ops::kv_store_pair(
          r.s, k, v, r.kv_rows(), r.cache.k(l), r.cache.v(l),
          {.n_tokens = n, .n_kv_heads = G, .head_dim = hd, .n_ctx = r.cache.rows(), .cache_type = r.cache.type()}, vd);
  }
  if (c.attn_temperature_beta != 0)
    ops::attn_temperature(r.s, q, r.positions(), n, H * hd, H * hd, c.attn_temperature_beta, c.attn_temperature_length);
  ops::AttentionShape shape = attention_shape(r, l, G, hd, vd);
  shape.n_heads = H;
  BufferView sinks = w.sinks ? w.sinks->view : BufferView{};
  uint32_t src = la.kv_layer;
  ops::attention(r.s, shape, q, r.cache.k(src), r.cache.v(src), r.step_params(), o, r.scratch_view(), sinks);
  capture_probs(r, shape, q, r.cache.k(src), l, sinks);
  if (recipe.gated) ops::sigmoid_mul(r.s, o, r.act_rows(a.attn_gate, H * vd), o, n * H * vd);
  block_output(r, *w.out, w.post_norm, o, l, "attn_out", w.out_bias);
  r.tap(int(l), "ffn_inp", r.act_rows(a.x, c.dim), n, c.dim);
}

// One product with the activation in its epilogue where gate and up lie back to back (Weights
// places them so), have no biases and matmul takes the matvec kernel, else two products and the
// activation.
BufferView gated_hidden(const RecordContext& r, const Tensor& gate_w, const Tensor& up_w, const ProjIn& h,
                        uint32_t hidden, const Tensor* gate_bias, const Tensor* up_bias) {
  uint32_t n = r.n;
  BufferView gate = r.act(r.acts.gate, 4ull * n * hidden), up = r.act(r.acts.up, 4ull * n * hidden);
  FfnActivation act = r.c.architecture().recipe.ffn.activation;
  bool gelu = act == FfnActivation::Gelu;
  ops::MatmulFusion glu = norm_fusion(r, h, {.glu = gelu ? ops::Glu::Gelu : ops::Glu::Silu});
  std::optional<BufferView> both = joined({&gate_w, &up_w});
  if (act != FfnActivation::SwigluOai && both && !gate_bias && !up_bias && gate_w.type == up_w.type &&
      gate_w.cols == up_w.cols && gate_w.rows == up_w.rows && both->size <= r.ctx.caps().max_storage_buffer_range &&
      ops::matmul_fusable(r.s, glu, n)) {
    ops::matmul_fused(r.s, gate_w.type, *both, h.x, gate, hidden, n, gate_w.cols, glu);
    return gate;
  }
  project(r, gate_w, h, gate, n, gate_bias);
  project(r, up_w, h, up, n, up_bias);
  if (gelu) {
    ops::gelu(r.s, gate, gate, n * hidden);
    ops::mul(r.s, gate, up, gate, n * hidden);
  } else if (act == FfnActivation::SwigluOai) {
    ops::swiglu_oai(r.s, gate, up, gate, n * hidden);
  } else {
    ops::swiglu(r.s, gate, up, gate, n * hidden);
  }
  return gate;
}

BufferView ungated_hidden(const RecordContext& r, const Tensor& up_w, const ProjIn& h, uint32_t hidden,
                          const Tensor* up_bias) {
  BufferView up = r.act(r.acts.gate, 4ull * r.n * hidden);
  project(r, up_w, h, up, r.n, up_bias);
  ops::relu_sqr(r.s, up, up, r.n * hidden);  // the one activation of an FFN without a gate
  return up;
}

void gated(const RecordContext& r, const Tensor* gate_w, const Tensor& up_w, const Tensor& down_w, BufferView h,
           BufferView out, uint32_t hidden) {
  BufferView act = gate_w ? gated_hidden(r, *gate_w, up_w, ProjIn{h}, hidden) : ungated_hidden(r, up_w, {h}, hidden);
  project(r, down_w, act, out, r.n);
}

// Gated feed-forward (+ biases where present) (→ post norm) added to the residual; without a
// gate (Nemotron-H) up → squared ReLU → down.
void ffn(const RecordContext& r, const FfnWeights& w, uint32_t l) {
  const ModelConfig& c = r.c;
  ProjIn h = normed_input(r, *w.norm, l, "ffn_norm");
  BufferView hidden = w.gate ? gated_hidden(r, *w.gate, *w.up, h, c.hidden_dim[l], w.gate_bias, w.up_bias)
                             : ungated_hidden(r, *w.up, h, c.hidden_dim[l], w.up_bias);
  block_output(r, *w.down, w.post_norm, hidden, l, "ffn_out", w.down_bias);
}

}  // namespace vkllm::blocks
