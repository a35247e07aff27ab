// The CPU reference forward: pre-norm decoder, standard or latent (naive MLA) attention with the
// recipe's options (q/k head norms, post norms, sliding windows, soft-caps); the FFNs are in
// model_ffn.cpp.
#include "reference/model.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "arch/architecture.h"
#include "error.h"
#include "gguf/reader.h"
#include "reference/attention.h"
#include "reference/elementwise.h"
#include "reference/linear_attention.h"
#include "reference/matmul.h"
#include "reference/position.h"
#include "reference/quant.h"

namespace vkllm::ref {

Model::Model(const GgufFile& file, const ModelConfig& config, DType kv_type)
    : file_(file), c_(config), catalogue_(tensor_catalogue(config)), kv_type_(kv_type) {
  if (catalogue_.find(TensorRole::RopeFreqs)) freq_factors_ = weight(TensorRole::RopeFreqs);
}

std::vector<float> Model::weight(TensorRole role, int layer) const {
  const TensorSpec* spec = catalogue_.find(role, layer);
  ENSURE(spec, fmt::format("the {} model has no {} tensor in layer {}", c_.arch_name, to_string(role), layer));
  const GgufTensor& t = file_.tensor(spec->name);
  std::vector<float> out(t.n_elements());
  dequantize_row(t.type, t.data.data(), out.data(), out.size());
  return out;
}

std::vector<float> Model::weight_rows(TensorRole role, int layer, size_t row0, size_t rows) const {
  const TensorSpec* spec = catalogue_.find(role, layer);
  ENSURE(spec, fmt::format("the {} model has no {} tensor in layer {}", c_.arch_name, to_string(role), layer));
  const GgufTensor& t = file_.tensor(spec->name);
  size_t K = t.ne[0], rb = row_bytes(t.type, K);
  std::vector<float> out(rows * K);
  dequantize_row(t.type, t.data.data() + row0 * rb, out.data(), out.size());
  return out;
}

void Model::add_residual(std::vector<float>& x, std::vector<float>& out) const {
  if (c_.multipliers.residual) scale(out.data(), out.data(), out.size(), c_.multipliers.residual);
  add(x.data(), x.data(), out.data(), x.size());
}

void Model::emit(int layer, std::string_view name, const std::vector<float>& v, size_t width) const {
  if (tap_ && *tap_) (*tap_)(layer, name, v, width);
}

const float* Model::optional(TensorRole role, int layer, std::vector<float>& storage) const {
  if (!catalogue_.find(role, layer)) return nullptr;
  storage = weight(role, layer);
  return storage.data();
}

// Rotates dims [offset, offset + rot) of each head in place, at each token's position, as the
// layer rotates (sliding-window layers may have their own base).
void Model::rope(float* x, const Step& step, size_t heads, size_t head_dim, size_t offset, size_t token_stride,
                 uint32_t layer) const {
  const RopeConfig& r = c_.rope_of(layer);
  RopeSpec s{.n_tokens = step.n,
             .n_heads = heads,
             .head_dim = head_dim - offset,
             .rot_dim = r.dim,
             .neox = r.mode == RopeMode::Neox,
             .theta_base = r.theta,
             .freq_scale = 1.0 / r.factor,
             .token_stride = token_stride,
             .head_stride = head_dim,
             .interleaved = r.sections_interleaved};
  std::copy(std::begin(r.sections), std::end(r.sections), s.sections);
  if (r.scaling == RopeScaling::Yarn)
    s.ext_factor = 1, s.n_ctx_orig = r.original_ctx ? r.original_ctx : c_.seq_len, s.attn_factor = r.yarn_attn_factor(),
    s.beta_fast = r.yarn_beta_fast, s.beta_slow = r.yarn_beta_slow;
  bool ff = !freq_factors_.empty() && r.has_freq_factors;  // gemma4: its global layers only
  ref::rope(x + offset, x + offset, step.pos.data(), ff ? freq_factors_.data() : nullptr, s);
}

// Per sequence: its new keys and values (k: (n, G, hd), v: (n, G, vd), token-major, rows of the
// whole batch) join its cache, and its queries attend causally over everything cached; then the
// output projection of all tokens is added to the residual x. A shared-KV layer passes no k and v
// and attends over the cache of the layer it reads.
void Model::attend(std::vector<float>& x, uint32_t l, const std::vector<float>& q, const std::vector<float>& k,
                   const std::vector<float>& v, const Step& step, size_t G, const std::vector<float>* gate) const {
  LayerAttention la = c_.attention_of(l);
  size_t n = step.n, H = c_.n_heads, hd = q.size() / (n * H);
  size_t vd = c_.architecture().recipe.attention.form == AttentionForm::Latent ? v.size() / (n * G) : la.v_head_dim;
  std::vector<float> o(n * H * vd), sinks_storage;
  const float* sinks = optional(TensorRole::AttnSinks, l, sinks_storage);
  for (size_t c = 0; c < step.chunks.size(); ++c) {
    KvState& st = *step.chunks[c].state;
    size_t first = step.first[c], m = step.chunks[c].tokens.size(), pos0 = st.n_;
    std::vector<float>&kc = st.k_[la.kv_layer], &vc = st.v_[la.kv_layer];
    if (la.kv_layer == l) {
      kc.insert(kc.end(), k.begin() + first * G * hd, k.begin() + (first + m) * G * hd);
      vc.insert(vc.end(), v.begin() + first * G * vd, v.begin() + (first + m) * G * vd);
    }
    AttentionParams a{.n_q = m,
                      .n_heads = H,
                      .n_kv_heads = G,
                      .dk = hd,
                      .dv = vd,
                      .q_row_stride = H * hd,
                      .o_row_stride = H * vd,
                      .k_head_stride = hd,
                      .k_row_stride = G * hd,
                      .v_head_stride = vd,
                      .v_row_stride = G * vd,
                      .scale = c_.attention_scale(l),
                      .softcap = c_.attn_softcap,
                      .causal = true,
                      .window = c_.window(l),
                      .pos0 = pos0,
                      .n_kv = pos0 + m,
                      .sinks = sinks};
    attention(&o[first * H * vd], &q[first * H * hd], kc.data(), vc.data(), a);
    if (int(l) == step.capture_layer) {
      step.probs->resize(H * m * (pos0 + m));
      attention_probs(step.probs->data(), &q[first * H * hd], kc.data(), a, pos0 + m);
    }
  }
  if (gate) sigmoid_mul(o.data(), o.data(), gate->data(), o.size());
  std::vector<float> bias;
  std::vector<float> out =
      project(weight(TensorRole::AttnOut, l), o.data(), n, H * vd, 0, optional(TensorRole::AttnOutBias, l, bias));
  if (has(TensorRole::AttnPostNorm, int(l)))
    rmsnorm(out.data(), out.data(), weight(TensorRole::AttnPostNorm, l).data(), n, c_.dim, c_.norm_eps);
  emit(int(l), "attn_out", out, c_.dim);
  add_residual(x, out);
  emit(int(l), "ffn_inp", x, c_.dim);
}

// q, k, v as the file holds them (docs/formats.md §13): separate matrices with their biases where
// present (no K and V in a shared-KV layer, which reads another layer's; V is K's projection where
// there is no attn_v, gemma4's attention_k_eq_v), or one attn_qkv whose rows are q, then k, then
// v, with one attn_qkv.bias or the three separate biases.
void Model::qkv(const std::vector<float>& h, uint32_t l, size_t n, std::vector<float>& q, std::vector<float>& k,
                std::vector<float>& v) const {
  size_t dim = c_.dim;
  std::vector<float> bq, bk, bv;
  if (has(TensorRole::AttnQkv, int(l))) {
    std::vector<FusedPart> parts = fused_parts(c_, TensorRole::AttnQkv, int(l));
    size_t Q = parts[0].rows, K = parts[1].rows, V = parts[2].rows;
    std::vector<float> bias =
        has(TensorRole::AttnQkvBias, int(l)) ? weight(TensorRole::AttnQkvBias, l) : std::vector<float>{};
    if (bias.empty() && has(TensorRole::AttnQBias, int(l)))
      for (TensorRole r : {TensorRole::AttnQBias, TensorRole::AttnKBias, TensorRole::AttnVBias}) {
        std::vector<float> b = weight(r, l);
        bias.insert(bias.end(), b.begin(), b.end());
      }
    auto all = project(weight(TensorRole::AttnQkv, l), h.data(), n, dim, 0, bias.empty() ? nullptr : bias.data());
    q.resize(n * Q), k.resize(n * K), v.resize(n * V);
    for (size_t t = 0; t < n; ++t) {
      const float* row = &all[t * (Q + K + V)];
      std::copy_n(row, Q, &q[t * Q]);
      std::copy_n(row + Q, K, &k[t * K]);
      std::copy_n(row + Q + K, V, &v[t * V]);
    }
    return;
  }
  q = project(weight(TensorRole::AttnQ, l), h.data(), n, dim, 0, optional(TensorRole::AttnQBias, l, bq));
  if (!has(TensorRole::AttnK, int(l))) return;
  k = project(weight(TensorRole::AttnK, l), h.data(), n, dim, 0, optional(TensorRole::AttnKBias, l, bk));
  if (!has(TensorRole::AttnV, int(l))) {  // gemma4's attention_k_eq_v: V is K's projection
    v = k;
    return;
  }
  v = project(weight(TensorRole::AttnV, l), h.data(), n, dim, 0, optional(TensorRole::AttnVBias, l, bv));
}

void Model::attention_block(std::vector<float>& x, uint32_t l, const Step& step) const {
  LayerAttention la = c_.attention_of(l);
  size_t n = step.n, dim = c_.dim, H = la.n_heads, G = la.n_kv_heads, hd = la.head_dim;
  bool own_kv = la.kv_layer == l;
  const AttentionRecipe& recipe = c_.architecture().recipe.attention;
  std::vector<float> h(x.size()), q, k, v, gate;
  rmsnorm(h.data(), x.data(), weight(TensorRole::AttnNorm, l).data(), n, dim, c_.norm_eps);
  emit(int(l), "attn_norm", h, dim);
  qkv(h, l, n, q, k, v);  // a shared-KV layer uses its queries only
  if (recipe.gated) {     // per head q_h then gate_h, hd rows each
    std::vector<float> both = std::move(q);
    q.resize(n * H * hd), gate.resize(n * H * hd);
    for (size_t t = 0; t < n; ++t)
      for (size_t head = 0; head < H; ++head) {
        const float* src = &both[(t * H + head) * 2 * hd];
        std::copy_n(src, hd, &q[(t * H + head) * hd]);
        std::copy_n(src + hd, hd, &gate[(t * H + head) * hd]);
      }
  }
  if (has(TensorRole::AttnQNorm, int(l)))  // one weight for every head
    rmsnorm(q.data(), q.data(), weight(TensorRole::AttnQNorm, l).data(), n * H, hd, c_.norm_eps);
  if (own_kv && has(TensorRole::AttnKNorm, int(l)))
    rmsnorm(k.data(), k.data(), weight(TensorRole::AttnKNorm, l).data(), n * G, hd, c_.norm_eps);
  if (own_kv && recipe.v_norm) rmsnorm(v.data(), v.data(), nullptr, n * G, la.v_head_dim, c_.norm_eps);
  if (la.rotates) {
    rope(q.data(), step, H, hd, 0, H * hd, l);
    if (own_kv) rope(k.data(), step, G, hd, 0, G * hd, l);
  }
  if (c_.attn_temperature_beta != 0)  // Llama 4's temperature, by position
    for (size_t t = 0; t < n; ++t) {
      double f =
          1 + c_.attn_temperature_beta * std::log(std::floor(double(step.pos[t]) / c_.attn_temperature_length) + 1);
      scale(&q[t * H * hd], &q[t * H * hd], H * hd, float(f));
    }
  round_trip(kv_type_, k.data(), k.size());  // the cache's rows, as stored (whole blocks: hd % 32 == 0)
  round_trip(kv_type_, v.data(), v.size());
  attend(x, l, q, k, v, step, G, gate.empty() ? nullptr : &gate);
}

// MLA, naive form (docs/formats.md §5.2): decompress every cached latent into per-head keys and values.
void Model::mla_block(std::vector<float>& x, uint32_t l, const Step& step) const {
  const MlaConfig& m = c_.mla;
  size_t n = step.n, dim = c_.dim, H = c_.n_heads, nope = m.qk_nope_head_dim, rot = m.qk_rope_head_dim;
  size_t hd = nope + rot, lat = m.kv_lora_rank, vd = m.v_head_dim;
  std::vector<float> h(x.size());
  rmsnorm(h.data(), x.data(), weight(TensorRole::AttnNorm, l).data(), n, dim, c_.norm_eps);
  emit(int(l), "attn_norm", h, dim);
  std::vector<float> q;
  if (m.q_lora_rank) {
    auto qa = project(weight(TensorRole::AttnQA, l), h.data(), n, dim);
    rmsnorm(qa.data(), qa.data(), weight(TensorRole::AttnQANorm, l).data(), n, m.q_lora_rank, c_.norm_eps);
    q = project(weight(TensorRole::AttnQB, l), qa.data(), n, m.q_lora_rank);
  } else {
    q = project(weight(TensorRole::AttnQ, l), h.data(), n, dim);
  }
  auto kv = project(weight(TensorRole::AttnKvA, l), h.data(), n, dim);  // (n, lat + rot)
  std::vector<float> c(n * lat);
  auto kv_norm = weight(TensorRole::AttnKvANorm, l);
  for (size_t t = 0; t < n; ++t) rmsnorm(&c[t * lat], &kv[t * (lat + rot)], kv_norm.data(), 1, lat, c_.norm_eps);
  rope(q.data(), step, H, hd, nope, H * hd, l);
  rope(kv.data(), step, 1, lat + rot, lat, lat + rot, l);  // the one k_pe all heads share
  round_trip(kv_type_, c.data(), c.size());                // the cached latent row [c ; k_pe], as stored
  for (size_t t = 0; t < n; ++t) round_trip(kv_type_, &kv[t * (lat + rot) + lat], rot);

  // Per head: k_nope = Wuk·c, v = Wuv·c; keys are [k_nope ; k_pe].
  std::vector<float> k(n * H * hd), v(n * H * vd);
  for (size_t head = 0; head < H; ++head) {
    std::vector<float> wuk(nope * lat), wuv(vd * lat);
    if (c_.mla.layout == MlaLayout::Fused) {
      auto kv_b = weight(TensorRole::AttnKvB, l);  // per head: nope rows of Wuk, vd rows of Wuv
      const float* base = &kv_b[head * (nope + vd) * lat];
      wuk.assign(base, base + nope * lat);
      wuv.assign(base + nope * lat, base + (nope + vd) * lat);
    } else {
      auto k_b = weight(TensorRole::AttnKB, l);  // per head (lat rows, nope cols) = Wukᵀ
      for (size_t r = 0; r < lat; ++r)
        for (size_t j = 0; j < nope; ++j) wuk[j * lat + r] = k_b[(head * lat + r) * nope + j];
      auto v_b = weight(TensorRole::AttnVB, l);  // per head (vd rows, lat cols) = Wuv
      wuv.assign(&v_b[head * vd * lat], &v_b[(head + 1) * vd * lat]);
    }
    auto kn = project(wuk, c.data(), n, lat), vh = project(wuv, c.data(), n, lat);
    for (size_t t = 0; t < n; ++t) {
      std::copy_n(&kn[t * nope], nope, &k[(t * H + head) * hd]);
      std::copy_n(&kv[t * (lat + rot) + lat], rot, &k[(t * H + head) * hd + nope]);
      std::copy_n(&vh[t * vd], vd, &v[(t * H + head) * vd]);
    }
  }
  attend(x, l, q, k, v, step, H);
}

std::vector<float> Model::forward(std::span<const int32_t> tokens, const TapFn& tap) const {
  KvState fresh;
  Chunk one{&fresh, tokens};
  return forward(std::span<const Chunk>(&one, 1), tap);
}

std::vector<float> Model::forward(std::span<const Chunk> batch, const TapFn& tap) const {
  Step step;
  return run(batch, step, tap);
}

std::vector<float> Model::attention_probabilities(std::span<const int32_t> tokens, uint32_t layer) const {
  ENSURE(layer < c_.n_layers, fmt::format("layer {} does not exist: the model has {} layers", layer, c_.n_layers));
  ENSURE(c_.has_attention(layer),
         fmt::format("layer {} is {}: it has no attention map", layer, describe(c_.mixer(layer))));
  KvState fresh;
  Chunk one{&fresh, tokens};
  std::vector<float> probs;
  Step step{.capture_layer = int(layer), .probs = &probs};
  run(std::span<const Chunk>(&one, 1), step, {});
  return probs;
}

std::vector<float> Model::hidden_states(std::span<const int32_t> tokens) const {
  KvState fresh;
  Chunk one{&fresh, tokens};
  Step step{.hidden = true};
  return run(std::span<const Chunk>(&one, 1), step, {});
}

// Block l's mixer, as ModelConfig::mixer says (an FFN-only block has none).
void Model::mixer_block(std::vector<float>& x, uint32_t l, const Step& step) const {
  switch (c_.mixer(l)) {
    case Mixer::Attention:
      if (c_.architecture().recipe.attention.form == AttentionForm::Latent)
        mla_block(x, l, step);
      else
        attention_block(x, l, step);
      return;
    case Mixer::DeltaNet:
      return linear_block(x, l, step);
    case Mixer::Mamba2:
      return mamba2_block(x, l, step);
    case Mixer::ShortConv:
      return short_conv_block(x, l, step);
    case Mixer::None:
      return;
    default:
      throw Error(fmt::format("layer {}: the reference runs no {} blocks yet", l, to_string(c_.mixer(l))));
  }
}

std::vector<float> Model::run(std::span<const Chunk> batch, Step& step, const TapFn& tap) const {
  step.chunks = batch;
  std::vector<int32_t> tokens;
  for (const Chunk& c : batch) {
    ENSURE(c.state && !c.tokens.empty(), "each sequence of a batch needs a state and at least one token");
    for (const Chunk& d : batch) ENSURE(&c == &d || c.state != d.state, "a sequence appears twice in a batch");
    c.state->k_.resize(c_.n_layers), c.state->v_.resize(c_.n_layers);
    c.state->conv_.resize(c_.n_layers), c.state->ssm_.resize(c_.n_layers);
    step.first.push_back(tokens.size());
    for (size_t i = 0; i < c.tokens.size(); ++i) step.pos.push_back(int32_t(c.state->n_ + i));
    tokens.insert(tokens.end(), c.tokens.begin(), c.tokens.end());
  }
  size_t n = step.n = tokens.size(), dim = c_.dim;
  ENSURE(n > 0, "forward of no tokens");
  const GgufTensor& embd = file_.tensor(catalogue_.find(TensorRole::TokenEmbd)->name);
  for (int32_t t : tokens) ENSURE(t >= 0 && uint32_t(t) < c_.vocab_size, fmt::format("token {} is out of range", t));
  tap_ = &tap;
  std::vector<float> x(n * dim);
  get_rows(embd.type, embd.data.data(), tokens.data(), x.data(), n, dim);
  if (c_.architecture().recipe.embeddings.scale) scale(x.data(), x.data(), x.size(), float(std::sqrt(double(dim))));
  if (c_.multipliers.embedding) scale(x.data(), x.data(), x.size(), c_.multipliers.embedding);
  emit(-1, "inp_embd", x, dim);
  std::vector<float> per_layer;
  if (c_.per_layer_embd) per_layer = per_layer_inputs(tokens, x);
  for (uint32_t l = 0; l < c_.n_layers; ++l) {
    mixer_block(x, l, step);
    if (int(l) == step.capture_layer) {
      tap_ = nullptr;
      return {};
    }
    if (c_.has_ffn(l) && c_.is_moe_layer(l))
      moe_block(x, l, n);
    else if (c_.has_ffn(l))
      ffn_block(x, l, n);
    layer_output(x, l, per_layer, n);
    emit(int(l), "l_out", x, dim);
  }
  tap_ = nullptr;
  for (const Chunk& c : batch) c.state->n_ += c.tokens.size();
  rmsnorm(x.data(), x.data(), weight(TensorRole::OutputNorm).data(), n, dim, c_.norm_eps);
  if (step.hidden) return x;
  std::vector<float> bias;
  auto logits = project(weight(c_.tied_embeddings ? TensorRole::TokenEmbd : TensorRole::Output), x.data(), n, dim, 0,
                        optional(TensorRole::OutputBias, kGlobal, bias));
  if (c_.multipliers.logit) scale(logits.data(), logits.data(), logits.size(), 1.0f / c_.multipliers.logit);
  if (c_.final_softcap > 0) softcap(logits.data(), logits.data(), logits.size(), c_.final_softcap);
  return logits;
}

}  // namespace vkllm::ref
