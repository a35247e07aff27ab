// The forward pass as dispatches, top to bottom like the paper: norm → qkv → rope → kv_store →
// attention → out-proj → residual → norm → swiglu → down → residual; then norm → logits.
#include "transformer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <fmt/format.h>

#include "check.h"
#include "context.h"
#include "ops.h"
#include "push.h"

namespace vkllm {

// --- activations

// Planner ids of the activation tensors, each sized for max_batch tokens.
struct Transformer::Acts {
  int x = -1;                        // (B, dim) the residual stream, alive throughout
  int h = -1;                        // (B, dim) normed input of a block
  int q = -1, k = -1, v = -1;        // (B, H·hd), (B, G·hd), (B, G·vd)
  int attn = -1;                     // (B, H·vd) attention output
  int proj = -1;                     // (B, dim) a block's output before the residual add
  int gate = -1, up = -1;            // (B, hidden)
  // MLA: compressed query, latent row, its two parts, the absorbed query and latent output
  int qa = -1, kv = -1, c = -1, kpe = -1, qpe = -1, qcat = -1, olat = -1;
};

namespace {

constexpr uint32_t kMaxGraphs = 8;  // recorded batch shapes kept (decode, full chunks, a few tails)

uint32_t hidden_max(const ModelConfig& c) { return *std::max_element(c.hidden_dim.begin(), c.hidden_dim.end()); }

// Floats per token of the widest activation: it decides how many tokens fit one binding.
uint64_t widest_row(const ModelConfig& c) {
  uint64_t w = std::max<uint64_t>({c.dim, hidden_max(c), uint64_t(c.n_heads) * c.head_dim,
                                   uint64_t(c.n_heads) * c.v_head_dim});
  if (c.attention_kind() == AttentionKind::MLA)
    w = std::max<uint64_t>(w, uint64_t(c.n_heads) * (c.mla.kv_lora_rank + c.mla.qk_rope_head_dim));
  return w;
}

}  // namespace

Transformer::Transformer(const Context& ctx, const ModelConfig& config, const Weights& weights, KvCache& cache,
                         uint32_t max_batch, bool profiling)
    : ctx_(ctx),
      c_(config),
      w_(weights),
      cache_(cache),
      max_batch_(std::max<uint64_t>(
          1, std::min<uint64_t>(max_batch, ctx.caps().max_storage_buffer_range / (4 * widest_row(config))))),
      profiling_(profiling),
      planner_(std::max<uint64_t>(ctx.caps().storage_offset_alignment, 256)),
      acts_(std::make_unique<Acts>()),
      tokens_(ctx, max_batch_ * 4ull, Memory::Host, "tokens"),
      positions_(ctx, max_batch_ * 4ull, Memory::Host, "positions"),
      step_(ctx, sizeof(push::StepParams), Memory::Host, "step") {
  plan_arena();
}

Transformer::~Transformer() = default;

// Lifetimes are op indices within one block; every block reuses the same offsets.
void Transformer::plan_arena() {
  Acts& a = *acts_;
  uint64_t B = max_batch_, f = 4, H = c_.n_heads;
  auto t = [&](const char* name, uint64_t floats, int first, int last) {
    return planner_.add(name, B * floats * f, first, last);
  };
  a.x = t("x", c_.dim, 0, 20);
  a.h = t("h", c_.dim, 0, 15);
  a.proj = t("proj", c_.dim, 12, 19);
  a.gate = t("gate", hidden_max(c_), 15, 18);
  a.up = t("up", hidden_max(c_), 15, 17);
  if (c_.attention_kind() == AttentionKind::MLA) {
    const MlaConfig& m = c_.mla;
    uint32_t lat = m.kv_lora_rank, rot = m.qk_rope_head_dim;
    if (m.q_lora_rank) a.qa = t("qa", m.q_lora_rank, 1, 2);
    a.q = t("q", H * c_.head_dim, 2, 9);
    a.kv = t("kv", lat + rot, 1, 5);
    a.c = t("c", lat, 3, 6);
    a.kpe = t("kpe", rot, 3, 6);
    a.qpe = t("qpe", H * rot, 7, 9);
    a.qcat = t("qcat", H * (lat + rot), 8, 10);
    a.olat = t("olat", H * lat, 10, 11);
    a.attn = t("attn", H * m.v_head_dim, 11, 12);
  } else {
    a.q = t("q", H * c_.head_dim, 1, 10);
    a.k = t("k", c_.n_kv_heads * c_.head_dim, 1, 3);
    a.v = t("v", c_.n_kv_heads * c_.v_head_dim, 1, 3);
    a.attn = t("attn", H * c_.v_head_dim, 10, 12);
  }
  planner_.plan();
  arena_ = std::make_unique<Buffer>(ctx_, planner_.total_bytes(), Memory::Device, "activations");

  uint64_t scratch = 0;  // attention's split-K partials: the most any batch size needs
  for (uint32_t n = 1; n <= max_batch_; ++n) {
    ops::AttentionShape shape{.n_q = n, .max_kv = cache_.n_ctx()};
    shape.n_heads = c_.n_heads, shape.n_kv_heads = cache_.heads();
    shape.dk = cache_.k_width(), shape.dv = cache_.v_width();
    scratch = std::max(scratch, ops::attention_scratch_bytes(ctx_, shape));
  }
  if (scratch) scratch_ = std::make_unique<Buffer>(ctx_, scratch, Memory::Device, "attention scratch");
}

BufferView Transformer::act(int id, uint64_t bytes) const {
  ENSURE(id >= 0 && bytes <= planner_.bytes(id), "activation out of its planned size");
  return arena_->view(planner_.offset(id), bytes);
}

uint64_t Transformer::activation_bytes() const {
  return planner_.total_bytes() + (scratch_ ? scratch_->size() : 0) + (logits_ ? logits_->size() : 0) +
         tokens_.size() + positions_.size() + step_.size();
}

// --- recording

void Transformer::project(Stream& s, const Tensor& w, BufferView x, BufferView y, uint32_t n, const Tensor* bias) {
  ops::matmul(s, w.type, w.view, x, y, w.rows, n, w.cols, {}, bias ? bias->view : BufferView{});
}

// Rotates the first rope.dim values of each head of x (n, heads, head_dim; tokens token_stride
// floats apart) in place, at the positions of this step.
void Transformer::rope(Stream& s, BufferView x, uint32_t n, uint32_t heads, uint32_t head_dim, uint32_t token_stride) {
  const RopeConfig& r = c_.rope;
  ops::RopeParams p{.n_tokens = n, .n_heads = heads, .head_dim = head_dim, .rot_dim = r.dim,
                    .mode = r.mode == RopeMode::Neox ? ops::RopeMode::Neox : ops::RopeMode::Norm,
                    .theta_base = r.theta, .freq_scale = 1.0f / r.factor,
                    .token_stride = token_stride, .head_stride = head_dim};
  if (r.scaling == RopeScaling::Yarn) {
    // Unit-magnitude rotation as in HF DeepSeek: cancel ggml's YaRN cos/sin scale (FORMATS.md §3.5).
    p.ext_factor = 1.0f, p.n_ctx_orig = r.original_ctx;
    p.attn_factor = r.attn_factor / (1.0f + 0.1f * std::log(r.factor));
  }
  BufferView ff = w_.rope_freqs() ? w_.rope_freqs()->view : BufferView{};
  ops::rope(s, x, positions_.view(0, n * 4ull), ff, x, p);
}

void Transformer::record_attention(Stream& s, uint32_t l, uint32_t n) {
  const LayerWeights& lw = w_.layer(l);
  const Acts& a = *acts_;
  uint32_t H = c_.n_heads, G = c_.n_kv_heads, hd = c_.head_dim, vd = c_.v_head_dim;
  BufferView h = act(a.h, n * 4ull * c_.dim), q = act(a.q, n * 4ull * H * hd);
  BufferView k = act(a.k, n * 4ull * G * hd), v = act(a.v, n * 4ull * G * vd), o = act(a.attn, n * 4ull * H * vd);
  ops::rmsnorm(s, act(a.x, n * 4ull * c_.dim), lw.attn_norm->view, h, n, c_.dim, c_.norm_eps);
  project(s, *lw.wq, h, q, n, lw.bq);
  project(s, *lw.wk, h, k, n, lw.bk);
  project(s, *lw.wv, h, v, n, lw.bv);
  rope(s, q, n, H, hd, H * hd);
  rope(s, k, n, G, hd, G * hd);
  bool f16 = cache_.type() == DType::F16;
  BufferView pos = positions_.view(0, n * 4ull);
  ops::kv_store(s, k, pos, cache_.k(l), {.n_tokens = n, .n_kv_heads = G, .head_dim = hd, .n_ctx = cache_.n_ctx(), .cache_f16 = f16});
  ops::kv_store(s, v, pos, cache_.v(l), {.n_tokens = n, .n_kv_heads = G, .head_dim = vd, .n_ctx = cache_.n_ctx(), .cache_f16 = f16});
  ops::AttentionShape shape{.n_q = n, .n_heads = H, .n_kv_heads = G, .dk = hd, .dv = vd, .kv_f16 = f16,
                            .scale = float(c_.attention_scale()), .causal = true, .max_kv = cache_.n_ctx()};
  ops::attention(s, shape, q, cache_.k(l), cache_.v(l), step_.view(), o, scratch_ ? scratch_->view() : BufferView{});
  BufferView proj = act(a.proj, n * 4ull * c_.dim), x = act(a.x, n * 4ull * c_.dim);
  project(s, *lw.wo, o, proj, n);
  ops::add(s, x, proj, x, n * c_.dim);
}

// MLA, absorbed (FORMATS.md §5.3): the cache holds [c ; k_pe] per token; queries move into the
// latent space (q_lat = Wukᵀ q_nope per head), attention runs as MQA over the latent rows
// (K width kv_lora + rope, V = the first kv_lora values), and o = Wuv o_lat per head.
void Transformer::record_mla(Stream& s, uint32_t l, uint32_t n) {
  const LayerWeights& lw = w_.layer(l);
  const MlaConfig& m = c_.mla;
  const Acts& a = *acts_;
  uint32_t H = c_.n_heads, hd = c_.head_dim, nope = m.qk_nope_head_dim, rot = m.qk_rope_head_dim;
  uint32_t lat = m.kv_lora_rank, row = lat + rot, vd = m.v_head_dim;
  uint64_t f = 4ull * n;
  BufferView x = act(a.x, f * c_.dim), h = act(a.h, f * c_.dim), q = act(a.q, f * H * hd);
  BufferView kv = act(a.kv, f * row), c = act(a.c, f * lat), kpe = act(a.kpe, f * rot);
  BufferView qpe = act(a.qpe, f * H * rot), qcat = act(a.qcat, f * H * row), olat = act(a.olat, f * H * lat);
  BufferView o = act(a.attn, f * H * vd), proj = act(a.proj, f * c_.dim), pos = positions_.view(0, n * 4ull);

  ops::rmsnorm(s, x, lw.attn_norm->view, h, n, c_.dim, c_.norm_eps);
  if (m.q_lora_rank) {
    BufferView qa = act(a.qa, f * m.q_lora_rank);
    project(s, *lw.wq_a, h, qa, n);
    ops::rmsnorm(s, qa, lw.q_a_norm->view, qa, n, m.q_lora_rank, c_.norm_eps);
    project(s, *lw.wq_b, qa, q, n);
  } else {
    project(s, *lw.wq, h, q, n);
  }
  // The latent row: normalised c and the roped k_pe, stored side by side in the cache.
  project(s, *lw.wkv_a, h, kv, n);
  ops::copy_strided(s, kv, c, {.rows = n, .cols = 1, .len = lat, .src_row_stride = row, .dst_row_stride = lat});
  ops::copy_strided(s, kv, kpe, {.rows = n, .cols = 1, .len = rot, .src_row_stride = row, .src_offset = lat, .dst_row_stride = rot});
  ops::rmsnorm(s, c, lw.kv_a_norm->view, c, n, lat, c_.norm_eps);
  rope(s, kpe, n, 1, rot, rot);
  bool f16 = cache_.type() == DType::F16;
  ops::kv_store(s, c, pos, cache_.k(l), {.n_tokens = n, .n_kv_heads = 1, .head_dim = lat, .n_ctx = cache_.n_ctx(), .cache_f16 = f16, .cache_head_dim = row});
  ops::kv_store(s, kpe, pos, cache_.k(l), {.n_tokens = n, .n_kv_heads = 1, .head_dim = rot, .n_ctx = cache_.n_ctx(), .cache_f16 = f16, .cache_head_dim = row, .cache_col = lat});

  // The absorbed query [Wukᵀ q_nope ; rope(q_pe)] per head.
  ops::copy_strided(s, q, qpe, {.rows = n, .cols = H, .len = rot, .src_row_stride = H * hd, .src_col_stride = hd, .src_offset = nope, .dst_row_stride = H * rot, .dst_col_stride = rot});
  rope(s, qpe, n, H, rot, H * rot);
  ops::matmul(s, lw.wk_b->type, lw.wk_b->view, q, qcat, lat, n, nope,
              {.count = H, .x_batch_stride = hd, .x_row_stride = H * hd, .y_batch_stride = row, .y_row_stride = H * row});
  ops::copy_strided(s, qpe, qcat, {.rows = n, .cols = H, .len = rot, .src_row_stride = H * rot, .src_col_stride = rot, .dst_row_stride = H * row, .dst_col_stride = row, .dst_offset = lat});

  ops::AttentionShape shape{.n_q = n, .n_heads = H, .n_kv_heads = 1, .dk = row, .dv = lat,
                            .k_head_stride = cache_.n_ctx() * row, .k_row_stride = row,
                            .v_head_stride = cache_.n_ctx() * row, .v_row_stride = row, .kv_f16 = f16,
                            .scale = float(c_.attention_scale()), .causal = true, .max_kv = cache_.n_ctx()};
  ops::attention(s, shape, qcat, cache_.k(l), cache_.v(l), step_.view(), olat, scratch_ ? scratch_->view() : BufferView{});
  ops::matmul(s, lw.wv_b->type, lw.wv_b->view, olat, o, vd, n, lat,
              {.count = H, .x_batch_stride = lat, .x_row_stride = H * lat, .y_batch_stride = vd, .y_row_stride = H * vd});
  project(s, *lw.wo, o, proj, n);
  ops::add(s, x, proj, x, n * c_.dim);
}

void Transformer::record_ffn(Stream& s, uint32_t l, uint32_t n) {
  const LayerWeights& lw = w_.layer(l);
  const Acts& a = *acts_;
  uint32_t hidden = c_.hidden_dim[l];
  uint64_t f = 4ull * n;
  BufferView x = act(a.x, f * c_.dim), h = act(a.h, f * c_.dim), proj = act(a.proj, f * c_.dim);
  BufferView gate = act(a.gate, f * hidden), up = act(a.up, f * hidden);
  ops::rmsnorm(s, x, lw.ffn_norm->view, h, n, c_.dim, c_.norm_eps);
  project(s, *lw.w_gate, h, gate, n);
  project(s, *lw.w_up, h, up, n);
  ops::swiglu(s, gate, up, gate, n * hidden);
  project(s, *lw.w_down, gate, proj, n);
  ops::add(s, x, proj, x, n * c_.dim);
}

// Final norm and the output projection: of the last token only, or of all n in chunks of rows
// small enough for one binding of the logits.
void Transformer::record_logits(Stream& s, uint32_t n, LogitsMode mode) {
  const Acts& a = *acts_;
  uint32_t dim = c_.dim, vocab = c_.vocab_size;
  BufferView x = act(a.x, 4ull * n * dim), h = act(a.h, 4ull * n * dim);
  const Tensor& out = w_.output();
  if (mode == LogitsMode::Last) {
    ops::copy_strided(s, x, h, {.rows = 1, .cols = 1, .len = dim, .src_offset = (n - 1) * dim});
    ops::rmsnorm(s, h, w_.output_norm().view, h, 1, dim, c_.norm_eps);
    ops::matmul(s, out.type, out.view, act(a.h, 4ull * dim), logits_->view(0, 4ull * vocab), vocab, 1, dim);
    return;
  }
  ops::rmsnorm(s, x, w_.output_norm().view, h, n, dim, c_.norm_eps);
  // Chunk starts must stay aligned for the x and logits views.
  uint64_t align = ctx_.caps().storage_offset_alignment;
  uint64_t step = std::lcm(align / std::gcd<uint64_t>(align, 4ull * dim), align / std::gcd<uint64_t>(align, 4ull * vocab));
  uint64_t rows = std::max<uint64_t>(1, ctx_.caps().max_storage_buffer_range / (4ull * vocab));
  rows = std::max<uint64_t>(step, rows / step * step);
  for (uint64_t r0 = 0; r0 < n; r0 += rows) {
    uint32_t m = uint32_t(std::min<uint64_t>(rows, n - r0));
    ops::matmul(s, out.type, out.view, arena_->view(planner_.offset(a.h) + r0 * 4 * dim, 4ull * m * dim),
                logits_->view(r0 * 4 * vocab, 4ull * m * vocab), vocab, m, dim);
  }
}

void Transformer::record(Stream& s, uint32_t n, LogitsMode mode) {
  const Tensor& embd = w_.token_embd();
  ops::get_rows(s, embd.type, embd.view, tokens_.view(0, 4ull * n), act(acts_->x, 4ull * n * c_.dim), n, c_.dim);
  for (uint32_t l = 0; l < c_.n_layers; ++l) {
    if (c_.attention_kind() == AttentionKind::MLA)
      record_mla(s, l, n);
    else
      record_attention(s, l, n);
    record_ffn(s, l, n);
  }
  record_logits(s, n, mode);
}

Stream& Transformer::graph(uint32_t n, LogitsMode mode) {
  uint64_t rows = mode == LogitsMode::All ? n : 1;
  if (!logits_ || logits_->size() < rows * 4 * c_.vocab_size) {
    graphs_.clear();  // recorded graphs write into the old logits buffer
    logits_ = std::make_unique<Buffer>(ctx_, rows * 4 * c_.vocab_size, Memory::Host, "logits");
  }
  auto key = std::make_pair(n, int(mode));
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    if (graphs_.size() >= kMaxGraphs) {  // forget the least recently used shape
      auto lru = std::min_element(graphs_.begin(), graphs_.end(),
                                  [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
      if (last_ == lru->second.stream.get()) last_ = nullptr;
      graphs_.erase(lru);
    }
    auto s = std::make_unique<Stream>(ctx_, profiling_);
    record(*s, n, mode);
    ++recorded_;
    it = graphs_.emplace(key, Graph{std::move(s), 0}).first;
  }
  it->second.used = ++uses_;
  return *it->second.stream;
}

std::span<const float> Transformer::forward(std::span<const int32_t> tokens, uint32_t pos0, LogitsMode mode) {
  uint32_t n = uint32_t(tokens.size());
  ENSURE(n >= 1 && n <= max_batch_, fmt::format("a forward takes 1 to {} tokens, not {}", max_batch_, n));
  ENSURE(uint64_t(pos0) + n <= cache_.n_ctx(),
         fmt::format("positions {}..{} do not fit the context of {} tokens", pos0, pos0 + n - 1, cache_.n_ctx()));
  for (int32_t t : tokens)
    ENSURE(t >= 0 && uint32_t(t) < c_.vocab_size, fmt::format("token id {} is outside the vocabulary", t));
  Stream& s = graph(n, mode);
  std::memcpy(tokens_.mapped(), tokens.data(), 4ull * n);
  auto* pos = reinterpret_cast<int32_t*>(positions_.mapped());
  for (uint32_t i = 0; i < n; ++i) pos[i] = int32_t(pos0 + i);
  push::StepParams step{.pos0 = pos0, .n_tokens = n, .n_kv = pos0 + n, .reserved = 0};
  std::memcpy(step_.mapped(), &step, sizeof(step));
  s.submit_wait();
  last_ = &s;
  uint64_t rows = mode == LogitsMode::All ? n : 1;
  return {reinterpret_cast<const float*>(logits_->mapped()), rows * c_.vocab_size};
}

std::vector<KernelTime> Transformer::last_timings() const { return last_ ? last_->timings() : std::vector<KernelTime>{}; }

double Transformer::last_wait_seconds() const { return last_ ? last_->last_wait_seconds() : 0; }

}  // namespace vkllm
