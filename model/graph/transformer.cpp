// The forward pass as dispatches: embed, then each layer's blocks (blocks.cpp), then norm →
// logits; the activation arena planned from a trace; one recorded graph per step shape.
#include "graph/transformer.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

#include "align.h"
#include "arch/architecture.h"
#include "context.h"
#include "error.h"
#include "graph/blocks.h"
#include "graph/memory_estimate.h"
#include "ops.h"
#include "ops_linear.h"
#include "push.h"

namespace vkllm {

// --- activations

namespace {

// Recorded step shapes kept: decode, full chunks and a few tails for one sequence; with several
// slots also the decode steps of 1..slots sequences and some mixed steps.
uint32_t max_graphs(uint32_t slots) { return std::max(8u, 4 * slots); }

// The widest dense gated FFN: the FFN of dense layers, the shared expert of MoE layers.
uint32_t hidden_max(const ModelConfig& c) {
  uint32_t w = 1;
  for (uint32_t l = 0; l < c.n_layers; ++l)
    w = std::max(w, c.is_moe_layer(l) && !c.architecture().recipe.ffn.moe_beside_dense ? c.moe.shared_hidden_dim
                                                                                       : c.hidden_dim[l]);
  return w;
}

bool has_moe(const ModelConfig& c) { return c.moe.n_experts > 0 && c.moe.leading_dense_blocks < c.n_layers; }

// Floats per token of a Mamba-2 layer's input projection: z | xBC | dt.
uint64_t mamba2_in_width(const ModelConfig& c) {
  const Mamba2Config& m = c.ssm;
  return 2ull * m.inner + 2ull * m.groups * m.state + m.heads;
}

// Floats per token of the widest activation: it decides how many tokens fit one binding.
uint64_t widest_row(const ModelConfig& c) {
  uint64_t w = std::max<uint64_t>({c.dim, hidden_max(c), c.max_q_width()});
  if (has_moe(c)) {
    const MoeConfig& m = c.moe;
    w = std::max<uint64_t>({w, m.n_experts, uint64_t(m.n_experts_used) * std::max(m.expert_hidden_dim, c.dim)});
  }
  if (c.attention_kind() == AttentionKind::MLA)
    w = std::max<uint64_t>(w, uint64_t(c.n_heads) * (c.mla.kv_lora_rank + c.mla.qk_rope_head_dim));
  if (c.architecture().recipe.attention.gated) w = std::max<uint64_t>(w, 2ull * c.n_heads * c.head_dim);
  if (c.has_mixer(Mixer::DeltaNet)) w = std::max<uint64_t>(w, c.linear.conv_channels());
  if (c.has_mixer(Mixer::Mamba2)) w = std::max<uint64_t>(w, mamba2_in_width(c));
  if (c.has_mixer(Mixer::ShortConv)) w = std::max<uint64_t>(w, 3ull * c.dim);
  return w;
}

}  // namespace

Transformer::Transformer(const Context& ctx, const ModelConfig& config, const Weights& weights, KvCache& cache,
                         uint32_t max_batch, bool profiling, RecurrentCache* recurrent)
    : ctx_(ctx),
      c_(config),
      w_(weights),
      cache_(cache),
      recurrent_(recurrent),
      max_batch_(std::max<uint64_t>(
          1, std::min<uint64_t>(max_batch, ctx.caps().max_storage_buffer_range / (4 * widest_row(config))))),
      profiling_(profiling),
      planner_(ctx.caps().binding_alignment()),
      inputs_(ctx, max_batch_, cache.slots()) {
  plan_arena();
}

Transformer::~Transformer() = default;

// Every activation is sized for max_batch tokens; each block reuses the same ones.
void Transformer::declare_activations() {
  Acts& a = acts_;
  uint64_t B = max_batch_, H = c_.n_heads;
  auto t = [&](const char* name, uint64_t floats) { return planner_.add(name, B * floats * 4); };
  a.x = t("x", c_.dim);
  a.h = t("h", c_.dim);
  a.proj = t("proj", c_.dim);
  a.gate = t("gate", hidden_max(c_));
  a.up = t("up", hidden_max(c_));
  if (has_moe(c_)) {
    const MoeConfig& m = c_.moe;
    uint64_t k = m.n_experts_used;
    a.logits = t("moe logits", m.n_experts);
    a.ids = t("moe ids", k);
    a.weights = t("moe weights", k);
    a.plan = planner_.add("moe plan", ops::ExpertPlan{.n_tokens = max_batch_,
                                                      .n_used = m.n_experts_used,
                                                      .n_experts = m.n_experts,
                                                      .max_tiles = m.n_experts + max_batch_ * m.n_experts_used}
                                          .bytes());
    a.exp_gate_up = t("moe gate|up", 2 * k * m.expert_hidden_dim);
    a.exp_down = t("moe down", k * c_.dim);
    if (m.shared_gate) a.shared_gate = t("moe shared gate", 1);
    if (c_.architecture().recipe.ffn.moe_beside_dense || c_.multipliers.residual) a.moe_out = t("moe out", c_.dim);
    if (m.latent_dim) a.moe_latent = t("moe latent", m.latent_dim), a.moe_out = t("moe out", m.latent_dim);
  }
  if (c_.per_layer_embd) {
    a.per_layer = t("per-layer inputs", uint64_t(c_.n_layers) * c_.per_layer_embd);
    a.per_layer_tok = t("per-layer token rows", uint64_t(c_.n_layers) * c_.per_layer_embd);
    a.per_layer_h = t("per-layer gate", c_.per_layer_embd);
    a.per_layer_in = t("per-layer input", c_.per_layer_embd);
  }
  if (c_.attention_kind() == AttentionKind::MLA) {
    const MlaConfig& m = c_.mla;
    uint32_t lat = m.kv_lora_rank, rot = m.qk_rope_head_dim;
    if (m.q_lora_rank) a.qa = t("qa", m.q_lora_rank);
    a.q = t("q", H * c_.head_dim);
    a.kv = t("kv", lat + rot);
    a.c = t("c", lat);
    a.kpe = t("kpe", rot);
    a.qpe = t("qpe", H * rot);
    a.qcat = t("qcat", H * (lat + rot));
    a.olat = t("olat", H * lat);
    a.attn = t("attn", H * m.v_head_dim);
  } else {
    if (c_.architecture().recipe.attention.gated) {
      a.q = t("q|gate", 2 * H * c_.head_dim);
      a.attn_gate = t("attention gate", H * c_.head_dim);
    }
    // q, k and v share one activation, each part at a binding offset of its own, so that one
    // product can store all three (blocks.cpp project_qkv).
    uint64_t align = ctx_.caps().binding_alignment();
    // Sized for the widest layer (gemma4's differ).
    uint64_t q = align_up(B * c_.max_q_width() * 4, align), k = align_up(B * c_.max_kv_width() * 4, align);
    a.qkv_offsets[1] = q, a.qkv_offsets[2] = q + k;
    a.qkv = planner_.add("qkv", q + B * c_.max_kv_width() * 4 + k);
    a.attn = t("attn", c_.max_q_width());
  }
  if (c_.has_mixer(Mixer::Mamba2)) {
    a.ssm_proj = t("mamba2 z|xBC|dt", mamba2_in_width(c_));
    a.ssm_xbc = t("mamba2 xBC", c_.ssm.conv_channels());
    a.ssm_y = t("mamba2 y", c_.ssm.inner);
  }
  if (c_.has_mixer(Mixer::ShortConv)) {
    a.sc_bcx = t("short conv b|c|x", 3 * c_.dim);
    a.sc_y = t("short conv out", c_.dim);
  }
  if (c_.has_mixer(Mixer::DeltaNet)) {
    const LinearAttentionConfig& l = c_.linear;
    a.lin_qkv = t("linear qkv", l.conv_channels());
    a.lin_conv = t("linear conv", l.conv_channels());
    a.lin_z = t("linear z", l.value_dim());
    a.lin_o = t("linear out", l.value_dim());
    a.lin_alpha = t("linear alpha", l.v_heads);
    a.lin_beta = t("linear beta", l.v_heads);
  }
}

// Lifetimes come from the graph itself: it is traced once at max_batch with every activation in a
// range of its own, and each command's reads and writes of those ranges are the accesses the
// planner orders. Smaller batches use a prefix of each range in the same command order.
void Transformer::plan_arena() {
  short_kv_ = one_tile_kv();
  if (uint64_t scratch = attention_scratch_need()) {
    scratch_ = std::make_unique<Buffer>(ctx_, scratch, Memory::Device, "attention scratch");
    ops::clear_attention_scratch(ctx_, *scratch_);  // split-K's counters start at zero
  }
  if (c_.has_mixer(Mixer::DeltaNet)) {  // the chunked delta rule's, for the most tokens and sequences a step has
    const LinearAttentionConfig& l = c_.linear;
    uint64_t bytes = ops::delta_rule_scratch_bytes({.n_tokens = max_batch_,
                                                    .seqs = std::min(cache_.slots(), max_batch_),
                                                    .h_k = l.k_heads,
                                                    .h_v = l.v_heads,
                                                    .s = l.head_dim,
                                                    .chunked = true});
    linear_scratch_ = std::make_unique<Buffer>(ctx_, bytes, Memory::Device, "delta rule scratch");
  }
  fit_output(uint64_t(cache_.slots()) * c_.vocab_size);

  declare_activations();
  Trace t = trace(max_batch_, OutputMode::Last, true);
  for (size_t op = 0; op < t.commands.size(); ++op)
    for (bool write : {false, true})
      for (const BufferView& v : write ? t.commands[op].writes : t.commands[op].reads)
        if (v.buffer == t.arena) planner_.access(planner_.at_unshared(v.offset), int(op), write);
  planner_.plan();
  arena_ = std::make_unique<Buffer>(ctx_, planner_.total_bytes(), Memory::Device, "activations");
}

// The keys one attention tile holds at decode (the fewest over the layers' head dims): a step
// whose sequences have no more needs no split-K.
uint32_t Transformer::one_tile_kv() const {
  uint32_t keys = cache_.n_ctx();
  for (const KvCache::Geometry& g : cache_.geometries()) {
    ops::AttentionShape shape{.n_q = 1, .kv_slots = cache_.slots(), .n_heads = c_.n_heads, .n_kv_heads = g.heads};
    shape.dk = g.k_width, shape.dv = g.v_width, shape.max_kv = cache_.n_ctx();
    keys = std::min(keys, ops::attention_plan(ctx_, shape).bc);
  }
  return keys;
}

// Attention's split-K partials: the most any step needs (n tokens of m sequences).
uint64_t Transformer::attention_scratch_need() const {
  return attention_scratch_bytes(ctx_.caps(), ctx_.profile(), c_.n_heads, cache_.geometries(), cache_.n_ctx(),
                                 max_batch_, cache_.slots());
}

Transformer::Trace Transformer::trace(uint32_t n, OutputMode mode, bool unshared, uint32_t seqs) {
  ENSURE(n >= 1 && n <= max_batch_, fmt::format("a forward takes 1 to {} tokens, not {}", max_batch_, n));
  ENSURE(seqs >= 1 && seqs <= std::min(n, cache_.slots()), "a step has 1 to min(tokens, slots) sequences");
  ENSURE(unshared || arena_, "the arena is not planned yet");
  fit_output(output_floats(n, seqs, mode));
  Stream s(ctx_, Stream::Tracing{});
  // Nothing reads or writes the placeholder: a tracing stream only logs the views.
  std::optional<Buffer> placeholder;
  if (unshared) placeholder.emplace(ctx_, 4, Memory::Device, "activations (placeholder while tracing)");
  record(context(s, n, seqs, unshared ? placeholder->handle() : VK_NULL_HANDLE), mode);
  return {s.trace(), unshared ? placeholder->handle() : arena_->handle()};
}

// A recording's context; its stream starts by bringing the step's inputs to device memory.
RecordContext Transformer::context(Stream& s, uint32_t n, uint32_t seqs, VkBuffer unshared) const {
  inputs_.record_upload(s);
  return {.s = s,
          .ctx = ctx_,
          .c = c_,
          .w = w_,
          .cache = cache_,
          .recurrent = recurrent_,
          .acts = acts_,
          .planner = planner_,
          .arena = arena_.get(),
          .in = inputs_,
          .scratch = scratch_.get(),
          .linear_scratch = linear_scratch_.get(),
          .logits = *logits_,
          .n = n,
          .seqs = seqs,
          .unshared = unshared};
}

uint64_t Transformer::activation_bytes() const {
  return planner_.total_bytes() + (scratch_ ? scratch_->size() : 0) + (linear_scratch_ ? linear_scratch_->size() : 0) +
         (logits_ ? logits_->size() : 0) + inputs_.bytes();
}

// --- recording

void Transformer::record(const RecordContext& r, OutputMode mode) {
  blocks::embeddings(r);
  for (uint32_t l = 0; l < c_.n_layers; ++l) blocks::layer(r, l);
  blocks::output(r, mode);
}

uint64_t Transformer::output_floats(uint32_t n, uint32_t seqs, OutputMode mode) const {
  switch (mode) {
    case OutputMode::Last:
      return uint64_t(seqs) * c_.vocab_size;
    case OutputMode::All:
      return uint64_t(n) * c_.vocab_size;
    case OutputMode::Hidden:
      return uint64_t(n) * c_.dim;
  }
  return 0;
}

void Transformer::fit_output(uint64_t floats) {
  if (!logits_ || logits_->size() < floats * 4) {
    graphs_.clear();  // recorded graphs write into the old output buffer
    last_ = nullptr;
    logits_ = std::make_unique<Buffer>(ctx_, floats * 4, Memory::Host, "logits");
  }
}

Stream& Transformer::graph(uint32_t n, uint32_t seqs, OutputMode mode, uint32_t plan_kv, ImageAttention image,
                           bool embd) {
  fit_output(output_floats(n, seqs, mode));
  auto key = std::make_tuple(n, seqs, int(mode), plan_kv, embd ? 1 + int(image) : 0);
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    if (graphs_.size() >= max_graphs(cache_.slots())) {  // forget the least recently used shape
      auto lru = std::min_element(graphs_.begin(), graphs_.end(),
                                  [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
      if (last_ == lru->second.stream.get()) last_ = nullptr;
      graphs_.erase(lru);
    }
    auto s = std::make_unique<Stream>(ctx_, profiling_);
    RecordContext r = context(*s, n, seqs);
    r.plan_kv = plan_kv;
    if (embd) r.embd = embd_.get(), r.image_attention = image;
    record(r, mode);
    ++recorded_;
    it = graphs_.emplace(key, Graph{std::move(s), 0}).first;
  }
  it->second.used = ++uses_;
  return *it->second.stream;
}

// Checks the batch and writes what the graph reads: token ids, positions and cache rows per
// token, StepParams and the last token's index per sequence.
void Transformer::write_step(std::span<const SeqChunk> batch) {
  int32_t *ids = inputs_.tokens(), *pos = inputs_.positions(), *rows = inputs_.kv_rows();
  int32_t* last = inputs_.last_rows();
  std::vector<push::StepParams> step(batch.size());
  std::vector<bool> used(cache_.slots());
  uint32_t i = 0;
  for (size_t q = 0; q < batch.size(); ++q) {
    const SeqChunk& c = batch[q];
    uint32_t n = uint32_t(c.tokens.size());
    ENSURE(n >= 1, "a sequence in a step has at least one token");
    ENSURE(
        c.slot < cache_.slots() && !used[c.slot],
        fmt::format("slot {} is not one of the {} KV-cache slots, or appears twice in a step", c.slot, cache_.slots()));
    used[c.slot] = true;
    ENSURE(uint64_t(c.pos0) + n <= cache_.n_ctx(), fmt::format("positions {}..{} do not fit the context of {} tokens",
                                                               c.pos0, uint64_t(c.pos0) + n - 1, cache_.n_ctx()));
    const uint32_t S = inputs_.section_stride();
    for (uint32_t j = 0; j < n; ++j, ++i) {
      int32_t t = c.tokens[j];
      ENSURE(t >= 0 && uint32_t(t) < c_.vocab_size, fmt::format("token id {} is outside the vocabulary", t));
      int32_t p = int32_t(c.pos0 + j) + c.rope_shift;  // a text token's position in every section but the 4th
      ids[i] = t, rows[i] = int32_t(c.slot * cache_.n_ctx() + c.pos0 + j);
      pos[i] = pos[S + i] = pos[2 * S + i] = p, pos[3 * S + i] = 0;
      if (c.grid_x) {  // an image's token: its time, row and column
        int32_t p0 = int32_t(c.pos0 - c.grid_first) + c.rope_shift;
        uint32_t k = c.grid_first + j;
        pos[i] = p0, pos[S + i] = p0 + int32_t(k / c.grid_x), pos[2 * S + i] = p0 + int32_t(k % c.grid_x);
      }
    }
    step[q] = {.pos0 = c.pos0, .n_tokens = n, .n_kv = c.pos0 + n, .slot = c.slot};
    last[q] = int32_t(i - 1);
  }
  std::memcpy(inputs_.step(), step.data(), step.size() * sizeof(push::StepParams));
}

// An image step's rows into the embedding input (made when first needed); whether this is one.
bool Transformer::write_image(std::span<const SeqChunk> batch) {
  bool image = false;
  for (const SeqChunk& c : batch) image = image || !c.embd.empty();
  if (!image) return false;
  const SeqChunk& c = batch[0];
  ENSURE(batch.size() == 1, "an image is a step of its own");
  ENSURE(c.embd.size() == c.tokens.size() * c_.dim,
         fmt::format("an image's {} values are not {} rows of the model's width {}", c.embd.size(), c.tokens.size(),
                     c_.dim));
  if (!embd_) embd_ = std::make_unique<Buffer>(ctx_, 4ull * max_batch_ * c_.dim, Memory::Host, "image rows");
  std::memcpy(embd_->mapped(), c.embd.data(), c.embd.size_bytes());
  return true;
}

std::span<const float> Transformer::forward(std::span<const SeqChunk> batch, OutputMode mode) {
  size_t n = 0;
  for (const SeqChunk& c : batch) n += c.tokens.size();
  ENSURE(n >= 1 && n <= max_batch_, fmt::format("a forward takes 1 to {} tokens, not {}", max_batch_, n));
  ENSURE(batch.size() <= cache_.slots(),
         fmt::format("a step has at most {} sequences (one per KV-cache slot), not {}", cache_.slots(), batch.size()));
  write_step(batch);
  bool image = write_image(batch);
  uint32_t seqs = uint32_t(batch.size()), most_kv = 0;
  for (const SeqChunk& c : batch) most_kv = std::max(most_kv, uint32_t(c.pos0 + c.tokens.size()));
  Stream& s = graph(uint32_t(n), seqs, mode, most_kv <= short_kv_ ? short_kv_ : 0, batch[0].attention, image);
  s.submit_wait();
  last_ = &s;
  return {reinterpret_cast<const float*>(logits_->mapped()), output_floats(uint32_t(n), seqs, mode)};
}

// Recorded for this call only, with the taps; the cached graphs stay as they are.
std::span<const float> Transformer::forward_tapped(std::span<const int32_t> tokens, uint32_t pos0, OutputMode mode,
                                                   std::vector<Tap>& taps) {
  uint32_t n = uint32_t(tokens.size());
  ENSURE(n >= 1 && n <= max_batch_, fmt::format("a forward takes 1 to {} tokens, not {}", max_batch_, n));
  SeqChunk one{.slot = 0, .pos0 = pos0, .tokens = tokens};
  write_step(std::span<const SeqChunk>(&one, 1));
  fit_output(output_floats(n, 1, mode));
  std::vector<TapCopy> tapped;
  Stream s(ctx_);
  RecordContext r = context(s, n, 1);
  r.taps = &tapped;
  record(r, mode);
  s.submit_wait();
  last_ = nullptr;
  for (TapCopy& t : tapped) {
    t.tap.values = t.host->download<float>(size_t(t.tap.rows) * t.tap.width);
    taps.push_back(std::move(t.tap));
  }
  return {reinterpret_cast<const float*>(logits_->mapped()), output_floats(n, 1, mode)};
}

std::span<const float> Transformer::forward(std::span<const int32_t> tokens, uint32_t pos0, OutputMode mode) {
  SeqChunk one{.slot = 0, .pos0 = pos0, .tokens = tokens};
  return forward(std::span<const SeqChunk>(&one, 1), mode);
}

std::vector<KernelTime> Transformer::last_timings() const {
  return last_ ? last_->timings() : std::vector<KernelTime>{};
}

double Transformer::last_wait_seconds() const { return last_ ? last_->last_wait_seconds() : 0; }

}  // namespace vkllm
