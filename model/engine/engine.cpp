// Loading a model and running sequences through it.
#include "engine/engine.h"

#include <fmt/format.h>
#include <algorithm>
#include <limits>

#include "context.h"
#include "error.h"
#include "gguf/reader.h"
#include "graph/memory_estimate.h"
#include "kernel.h"
#include "reference/model.h"
#include "stream.h"

namespace vkllm {

namespace {

constexpr uint32_t kDefaultMaxContext = 4096;

}  // namespace

uint32_t default_context(const ModelConfig& config) { return std::min(config.seq_len, kDefaultMaxContext); }

uint32_t fitted_context(const GgufFile& file, const ModelConfig& config, uint32_t batch, DType kv_type, uint32_t slots,
                        uint64_t usable, const DeviceCaps& caps, const Profile& prof) {
  uint32_t n = default_context(config);
  auto fits = [&](uint32_t ctx) {
    return estimate_memory(file, config, ctx, batch, kv_type, slots, caps, prof).total() <= usable;
  };
  // Where not even the least context fits, the weights are the problem: keep the default (info
  // says the model does not fit; a load fails with its out-of-memory error).
  if (n <= kLeastFittedContext || !fits(kLeastFittedContext)) return n;
  while (n > kLeastFittedContext && !fits(n)) n = std::max(kLeastFittedContext, n / 2);
  return n;
}

Engine::Engine(const Context& ctx, const GgufFile& file, const EngineOptions& options,
               const std::function<void(const LoadProgress&)>& progress)
    : config_(ModelConfig::from_gguf(file)), tokenizer_(std::make_unique<Tokenizer>(Tokenizer::from_gguf(file))) {
  uint32_t n_ctx = options.n_ctx ? options.n_ctx : default_context(config_);
  ENSURE(n_ctx >= 1, "the context length must be at least 1");
  weights_ = std::make_unique<Weights>(ctx, file, config_, progress, options.max_weight_buffer);
  cache_ = std::make_unique<KvCache>(ctx, config_, n_ctx, options.kv_type, options.slots);
  if (config_.hybrid()) recurrent_ = std::make_unique<RecurrentCache>(ctx, config_, options.slots);
  // A step holds at most one slot's context per sequence.
  uint32_t batch = uint32_t(std::clamp<uint64_t>(options.batch, 1, uint64_t(n_ctx) * std::max(1u, options.slots)));
  transformer_ =
      std::make_unique<Transformer>(ctx, config_, *weights_, *cache_, batch, options.profiling, recurrent_.get());
  ctx_ = &ctx;
  options_ = options;
  file_ = &file;
  if (options.check) reference_ = std::make_unique<ref::Model>(file, config_, options.kv_type);
}

Engine::~Engine() = default;

// One chunk at n_past; with the check on, tapped and compared with the reference.
std::span<const float> Engine::forward(std::span<const int32_t> chunk, OutputMode mode) {
  history_.resize(n_past_);
  history_.insert(history_.end(), chunk.begin(), chunk.end());
  if (!reference_) {
    SeqChunk one{.slot = 0, .pos0 = n_past_, .tokens = chunk, .rope_shift = rope_shift()};
    return transformer_->forward(std::span<const SeqChunk>(&one, 1), mode);
  }
  ENSURE(shifts_.empty(), "the reference check does not follow images");
  std::vector<Tap> taps;
  std::span<const float> logits = transformer_->forward_tapped(chunk, n_past_, mode, taps);
  CheckReport report =
      compare_with_reference(*reference_, history_, n_past_, taps, logits.last(config_.vocab_size), config_.n_layers);
  if (options_.on_check) options_.on_check(report);
  return logits;
}

namespace {

// The prefill lengths whose steps take distinct pipelines: matvec is specialised on its token
// count up to the profile's matvec_tokens, flash attention on its row tile (powers of two up to
// attn_br), and a long chunk takes the tiled matmul (GPU profiles) and a whole delta-rule chunk.
std::vector<uint32_t> warm_up_lengths(const Profile& p, uint32_t most) {
  constexpr uint32_t kLongChunk = 64;
  std::vector<uint32_t> n;
  for (uint32_t k = 1; k <= p.matvec_tokens; ++k) n.push_back(k);
  for (uint32_t k = 1; k <= p.attn_br; k *= 2) n.push_back(k);
  n.push_back(kLongChunk);
  for (uint32_t& k : n) k = std::min(k, most);
  std::sort(n.begin(), n.end());
  n.erase(std::unique(n.begin(), n.end()), n.end());
  return n;
}

}  // namespace

size_t Engine::warm_up() {
  size_t before = ctx_->kernels().size();
  uint32_t most = std::min(max_batch(), n_ctx() - 1);
  if (most == 0) return 0;
  std::vector<int32_t> tokens(most);
  for (uint32_t i = 0; i < most; ++i) tokens[i] = int32_t(i % config_.vocab_size);
  std::span<const int32_t> all(tokens);
  for (uint32_t n : warm_up_lengths(ctx_->profile(), most)) {
    SeqChunk prefill{.slot = 0, .pos0 = 0, .tokens = all.first(n)};
    step({&prefill, 1});
  }
  SeqChunk decode{.slot = 0, .pos0 = most, .tokens = all.first(1)};
  step({&decode, 1});
  if (slots() >= 2 && most >= 2) {  // a decode beside another sequence's prefill
    SeqChunk both[] = {{.slot = 0, .pos0 = 1, .tokens = all.first(1)},
                       {.slot = 1, .pos0 = 0, .tokens = all.first(most - 1)}};
    step(both);
  }
  n_past_ = 0, history_.clear(), shifts_.clear();
  return ctx_->kernels().size() - before;
}

size_t Engine::pipelines() const { return ctx_->kernels().size(); }

double Engine::compile_seconds() const { return ctx_->kernels().compile_seconds(); }

MemoryReport Engine::memory() const {
  return {.weights = weights_->device_bytes(),
          .kv_cache = cache_->bytes(),
          .recurrent = recurrent_ ? recurrent_->bytes() : 0,
          .activations = transformer_->activation_bytes(),
          .staging = weights_->staging_bytes(),
          .weight_buffers = weights_->buffer_count()};
}

void Engine::check_fits(size_t n) const {
  ENSURE(n_past_ + n <= n_ctx(), fmt::format("{} token{} after {} do not fit the context of {} tokens (use --ctx)", n,
                                             n == 1 ? "" : "s", n_past_, n_ctx()));
}

std::span<const float> Engine::eval(std::span<const int32_t> tokens) {
  ENSURE(!tokens.empty(), "nothing to evaluate");
  check_token_ids(tokens, config_.vocab_size);
  check_fits(tokens.size());
  std::span<const float> logits;
  for (size_t i = 0; i < tokens.size(); i += transformer_->max_batch()) {
    auto chunk = tokens.subspan(i, std::min<size_t>(transformer_->max_batch(), tokens.size() - i));
    logits = forward(chunk, OutputMode::Last);
    n_past_ += uint32_t(chunk.size());
  }
  return logits;
}

bool Engine::uses_mrope() const {
  const uint32_t* s = config_.rope.sections;
  return s[0] + s[1] + s[2] + s[3] > 0;
}

std::span<const float> Engine::eval_image(std::span<const float> rows, uint32_t grid_x, uint32_t grid_y,
                                          ImageAttention attention) {
  const uint32_t dim = config_.dim, n = uint32_t(rows.size() / dim);
  ENSURE(n > 0 && rows.size() == size_t(n) * dim,
         fmt::format("an image's rows must be whole rows of the model's width {}", dim));
  ENSURE(uint64_t(grid_x) * grid_y == n,
         fmt::format("an image of {} tokens does not fill a {}x{} grid", n, grid_x, grid_y));
  ENSURE(!reference_, "the reference check does not run images");
  check_fits(n);
  std::vector<int32_t> zeros(std::min(n, transformer_->max_batch()), 0);
  const bool mrope = uses_mrope();
  const int32_t shift = rope_shift();
  std::span<const float> logits;
  for (uint32_t i = 0; i < n; i += transformer_->max_batch()) {
    uint32_t k = std::min(transformer_->max_batch(), n - i);
    SeqChunk c{.slot = 0,
               .pos0 = n_past_,
               .tokens = std::span<const int32_t>(zeros).first(k),
               .embd = rows.subspan(size_t(i) * dim, size_t(k) * dim),
               .attention = attention,
               .grid_x = mrope ? grid_x : 0,
               .grid_first = i,
               .rope_shift = shift};
    logits = transformer_->forward(std::span<const SeqChunk>(&c, 1), OutputMode::Last);
    history_.resize(n_past_), history_.insert(history_.end(), k, 0);
    n_past_ += k;
  }
  if (mrope) shifts_.push_back({n_past_, shift + int32_t(std::max(grid_x, grid_y)) - int32_t(n)});
  return logits;
}

std::vector<float> Engine::eval_all(std::span<const int32_t> tokens) {
  ENSURE(!tokens.empty(), "nothing to evaluate");
  check_token_ids(tokens, config_.vocab_size);
  check_fits(tokens.size());
  std::vector<float> out;
  out.reserve(tokens.size() * config_.vocab_size);
  for (size_t i = 0; i < tokens.size(); i += transformer_->max_batch()) {
    auto chunk = tokens.subspan(i, std::min<size_t>(transformer_->max_batch(), tokens.size() - i));
    auto logits = forward(chunk, OutputMode::All);
    out.insert(out.end(), logits.begin(), logits.end());
    n_past_ += uint32_t(chunk.size());
  }
  return out;
}

std::vector<float> Engine::attention_probabilities(std::span<const int32_t> tokens, uint32_t layer, uint32_t slot) {
  ENSURE(!tokens.empty(), "nothing to evaluate");
  ENSURE(layer >= config_.n_layers || config_.has_attention(layer),
         fmt::format("layer {} is {}, which has no attention map (layers with one: {})", layer,
                     describe(config_.mixer(layer)), attention_layers(config_)));
  check_token_ids(tokens, config_.vocab_size);
  if (slot == 0) n_past_ = 0, shifts_.clear();  // its cache is about to be overwritten
  return transformer_->attention_probabilities(tokens, layer, slot);
}

std::vector<float> Engine::attention_probabilities(std::span<const SeqChunk> parts, uint32_t layer, uint32_t slot) {
  ENSURE(layer >= config_.n_layers || config_.has_attention(layer),
         fmt::format("layer {} is {}, which has no attention map (layers with one: {})", layer,
                     describe(config_.mixer(layer)), attention_layers(config_)));
  for (const SeqChunk& p : parts) check_token_ids(p.tokens, config_.vocab_size);
  if (slot == 0) n_past_ = 0, shifts_.clear();  // its cache is about to be overwritten
  return transformer_->attention_probabilities(parts, layer, slot);
}

void Engine::truncate(uint32_t n) {
  ENSURE(n <= n_past_, fmt::format("cannot keep {} tokens of a sequence of {}", n, n_past_));
  if (recurrent_ && n != n_past_ && n != 0) {
    ENSURE(n == recurrent_->checkpoint(0),
           fmt::format("a hybrid model cannot go back to {} of its {} tokens (its linear-attention state is saved "
                       "at {})",
                       n, n_past_, recurrent_->checkpoint(0)));
    resume(0, n, n_past_);
  }
  n_past_ = n;  // later positions are overwritten before they are read again
  while (!shifts_.empty() && shifts_.back().first > n) shifts_.pop_back();
}

uint32_t Engine::resumable(uint32_t n, uint32_t slot, uint32_t live) const {
  if (!recurrent_) return n;
  if (live <= n) return live;
  uint32_t saved = recurrent_->checkpoint(slot);
  return saved <= n ? saved : 0;
}

void Engine::checkpoint(uint32_t slot, uint32_t n) {
  if (!recurrent_) return;
  Stream s(*ctx_);
  recurrent_->save(s, slot, n);
  s.submit_wait();
}

void Engine::resume(uint32_t slot, uint32_t n, uint32_t live) {
  if (!recurrent_ || n == live || n == 0) return;  // as it is; or from a zero state (position 0)
  ENSURE(n == recurrent_->checkpoint(slot), fmt::format("slot {} has no state saved at {} tokens", slot, n));
  Stream s(*ctx_);
  recurrent_->restore(s, slot);
  s.submit_wait();
}

std::string_view to_string(FinishReason r) {
  switch (r) {
    case FinishReason::Length:
      return "length";
    case FinishReason::EndOfGeneration:
      return "eog";
    case FinishReason::Stopped:
      return "stop";
    case FinishReason::ContextFull:
      return "context";
  }
  return "?";
}

void check_token_ids(std::span<const int32_t> ids, uint32_t vocab_size) {
  for (int32_t id : ids)
    ENSURE(id >= 0 && uint32_t(id) < vocab_size,
           fmt::format("token id {} is outside the vocabulary of {} tokens (0 to {})", id, vocab_size,
                       int64_t(vocab_size) - 1));
}

namespace {

// With ignore_eos the sampler sees a copy in which end-of-generation tokens cannot win.
class EogMask {
 public:
  EogMask(const Tokenizer& t, bool on) {
    if (on)
      for (uint32_t id = 0; id < t.vocab_size(); ++id)
        if (t.is_end_of_generation(int32_t(id))) ids_.push_back(id);
  }
  std::span<const float> apply(std::span<const float> logits) {
    if (ids_.empty()) return logits;
    masked_.assign(logits.begin(), logits.end());
    for (uint32_t id : ids_)
      if (id < masked_.size()) masked_[id] = -std::numeric_limits<float>::infinity();
    return masked_;
  }

 private:
  std::vector<uint32_t> ids_;
  std::vector<float> masked_;
};

}  // namespace

GenerationStats generate(Engine& engine, Sampler& sampler, std::span<const int32_t> prompt, const GenerateOptions& o) {
  using clock = std::chrono::steady_clock;
  GenerationStats stats{.prompt_tokens = uint32_t(prompt.size())};
  for (int32_t t : prompt) sampler.accept(t);
  EogMask mask(engine.tokenizer(), o.ignore_eos);
  // Kernels met for the first time compile inside eval(): their time is kept apart.
  double compiled = engine.compile_seconds();
  auto compiling = [&] {
    double now = engine.compile_seconds(), since = now - compiled;
    compiled = now;
    stats.compile_seconds += since;
    return since;
  };
  auto t0 = clock::now();
  std::span<const float> logits = engine.eval(prompt);
  stats.prompt_seconds = std::chrono::duration<double>(clock::now() - t0).count() - compiling();
  auto t1 = clock::now();
  for (uint32_t i = 0; i < o.max_tokens; ++i) {
    int32_t token =
        o.constraint ? o.constraint->sample(sampler, mask.apply(logits)) : sampler.sample(mask.apply(logits));
    if (o.constraint) o.constraint->accept(token);
    sampler.accept(token);
    ++stats.generated_tokens;
    if (o.on_token && !o.on_token(token, logits)) {
      stats.finish = FinishReason::Stopped;
      break;
    }
    if (engine.tokenizer().is_end_of_generation(token)) {
      stats.finish = FinishReason::EndOfGeneration;
      break;
    }
    if (i + 1 == o.max_tokens) break;
    if (engine.n_past() >= engine.n_ctx()) {
      stats.finish = FinishReason::ContextFull;
      break;
    }
    logits = engine.eval(std::span<const int32_t>(&token, 1));
  }
  stats.generation_seconds = std::chrono::duration<double>(clock::now() - t1).count() - compiling();
  return stats;
}

GenerationStats generate(Engine& engine, Sampler& sampler, std::span<const int32_t> prompt, uint32_t max_tokens,
                         const std::function<bool(int32_t)>& on_token) {
  return generate(
      engine, sampler, prompt,
      {.max_tokens = max_tokens, .on_token = [&](int32_t t, std::span<const float>) { return on_token(t); }});
}

}  // namespace vkllm
