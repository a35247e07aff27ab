// The scheduler's thread: admit requests into slots, build a step, run it, hand out tokens.
#include "engine/scheduler.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "check.h"
#include "engine/embedding.h"
#include "error.h"
#include "graph/recurrent_cache.h"
#include "graph/vision_encoder.h"

namespace vkllm {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kTpsWindow = std::chrono::seconds(10);

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

Scheduler::Scheduler(Engine& engine, const SchedulerOptions& options)
    : engine_(engine), options_(options), slots_(engine.slots()), batch_(engine.max_batch(), engine.uses_mrope()) {
  stats_.slots = engine.slots();
  stats_.histograms = RequestHistograms(engine.n_ctx());
  stats_.pipelines = engine.pipelines();
  publish_slots();
  thread_ = std::thread([this] { loop(); });
}

Scheduler::~Scheduler() { shutdown(std::chrono::milliseconds(0)); }

std::shared_ptr<GenerationHandle> Scheduler::submit(GenerationRequest request) {
  // Checked here too, so that a bad request fails in the caller's thread with its message.
  ENSURE(!request.prompt.empty() && request.prompt.size() < engine_.n_ctx(),
         fmt::format("a prompt of {} tokens does not fit the context of {} tokens with one to generate",
                     request.prompt.size(), engine_.n_ctx()));
  for (int32_t t : request.prompt)
    ENSURE(t >= 0 && uint32_t(t) < engine_.config().vocab_size,
           fmt::format("token id {} is outside the vocabulary", t));
  ENSURE(request.images.empty() || options_.encoder, "this model has no projector for images");
  auto handle = std::make_shared<GenerationHandle>();
  {
    std::lock_guard lock(mutex_);
    if (!fault_.empty()) throw QueueFull(fault_.c_str());
    if (!accepting_) throw QueueFull("the server is stopping");
    if (queue_.size() >= options_.max_queue) {
      ++stats_.rejected;
      throw QueueFull();
    }
    ++stats_.requests;
    queue_.push_back({std::move(request), handle});
  }
  wake_.notify_all();
  return handle;
}

std::vector<float> Scheduler::attention(std::vector<int32_t> tokens, uint32_t layer, std::vector<PromptImage> images) {
  const ModelConfig& c = engine_.config();
  ENSURE(!tokens.empty(), "attention of no tokens");
  ENSURE(tokens.size() <= engine_.n_ctx(),
         fmt::format("{} tokens do not fit the context of {} tokens", tokens.size(), engine_.n_ctx()));
  ENSURE(layer < c.n_layers,
         fmt::format("layer {} does not exist: the model has {} layers (0 to {})", layer, c.n_layers, c.n_layers - 1));
  check_token_ids(tokens, c.vocab_size);
  ENSURE(images.empty() || options_.encoder, "this model has no projector for images");
  auto job = std::make_shared<AttentionJob>(
      AttentionJob{.tokens = std::move(tokens), .layer = layer, .images = std::move(images)});
  std::future<std::vector<float>> result = job->result.get_future();
  {
    std::lock_guard lock(mutex_);
    if (!accepting_) throw QueueFull("the server is stopping");
    attention_.push_back(job);
  }
  wake_.notify_all();
  return result.get();
}

// Each capture takes the least recently used idle slot; the rest wait for the next round.
void Scheduler::run_attention() {
  for (;;) {
    uint32_t slot = UINT32_MAX;
    for (uint32_t i = 0; i < slots_.size(); ++i)
      if (!slots_[i].seq && (slot == UINT32_MAX || slots_[i].last_used < slots_[slot].last_used)) slot = i;
    std::shared_ptr<AttentionJob> job;
    {
      std::lock_guard lock(mutex_);
      if (attention_.empty() || slot == UINT32_MAX) return;
      job = std::move(attention_.front());
      attention_.pop_front();
    }
    slots_[slot].cached.clear();  // its keys and values are about to be overwritten
    slots_[slot].last_used = ++clock_;
    try {
      job->result.set_value(capture(*job, slot));
    } catch (...) {
      job->result.set_exception(std::current_exception());
    }
  }
}

// A capture's sequence as the steps of a request would take it: text runs, and each image's rows
// from the encoder on its grid (M-RoPE) with its attention.
std::vector<float> Scheduler::capture(const AttentionJob& job, uint32_t slot) {
  if (job.images.empty()) return engine_.attention_probabilities(job.tokens, job.layer, slot);
  const bool mrope = engine_.uses_mrope();
  const uint32_t dim = engine_.config().dim;
  std::vector<std::vector<float>> rows;
  std::vector<SeqChunk> parts;
  std::span<const int32_t> all(job.tokens);
  uint32_t at = 0;
  int32_t shift = 0;
  for (const PromptImage& im : job.images) {
    ENSURE(im.at >= at && im.at + uint64_t(im.tokens()) <= all.size(), "a capture's images lie apart in its tokens");
    if (im.at > at)
      parts.push_back({.slot = slot, .pos0 = at, .tokens = all.subspan(at, im.at - at), .rope_shift = shift});
    rows.push_back(options_.encoder->encode(im.input.grid, im.input.pixels));
    ENSURE(rows.back().size() == size_t(im.tokens()) * dim, "the projector's rows are not the model's width");
    parts.push_back({.slot = slot,
                     .pos0 = im.at,
                     .tokens = all.subspan(im.at, im.tokens()),
                     .embd = rows.back(),
                     .attention = options_.encoder->config().image_attention(dim),
                     .grid_x = mrope ? im.input.grid.tokens_x : 0,
                     .rope_shift = shift});
    at = im.at + im.tokens();
    if (mrope) shift += int32_t(std::max(im.input.grid.tokens_x, im.input.grid.tokens_y)) - int32_t(im.tokens());
  }
  if (at < all.size()) parts.push_back({.slot = slot, .pos0 = at, .tokens = all.subspan(at), .rope_shift = shift});
  return engine_.attention_probabilities(parts, job.layer, slot);
}

std::vector<std::vector<float>> Scheduler::embed(std::vector<std::vector<int32_t>> inputs, Pooling pooling) {
  for (size_t i = 0; i < inputs.size(); ++i) {  // the checks embed() makes, before waiting for a slot
    ENSURE(!inputs[i].empty(), fmt::format("input {} has no tokens", i));
    ENSURE(inputs[i].size() <= engine_.n_ctx(),
           fmt::format("input {} is {} tokens; a slot's context holds {}", i, inputs[i].size(), engine_.n_ctx()));
    check_token_ids(inputs[i], engine_.config().vocab_size);
  }
  if (inputs.empty()) return {};
  auto job = std::make_shared<EmbedJob>(EmbedJob{.inputs = std::move(inputs), .pooling = pooling});
  auto result = job->result.get_future();
  {
    std::lock_guard lock(mutex_);
    if (!accepting_) throw QueueFull("the server is stopping");
    embed_.push_back(job);
  }
  wake_.notify_all();
  return result.get();
}

// One job at a time takes every idle slot (their cached prefixes are forgotten).
void Scheduler::run_embed() {
  for (;;) {
    std::vector<uint32_t> idle;
    for (uint32_t i = 0; i < slots_.size(); ++i)
      if (!slots_[i].seq) idle.push_back(i);
    std::shared_ptr<EmbedJob> job;
    {
      std::lock_guard lock(mutex_);
      if (embed_.empty() || idle.empty()) return;
      job = std::move(embed_.front());
      embed_.pop_front();
    }
    for (uint32_t i : idle) slots_[i].cached.clear(), slots_[i].last_used = ++clock_;
    try {
      job->result.set_value(vkllm::embed(engine_, job->inputs, job->pooling, idle));
    } catch (...) {
      job->result.set_exception(std::current_exception());
    }
  }
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard lock(mutex_);
  SchedulerStats s = stats_;
  s.queued = uint32_t(queue_.size());
  uint64_t recent = 0;
  for (auto& [t, n] : recent_) recent += n;
  s.generation_tps = recent / std::chrono::duration<double>(kTpsWindow).count();
  return s;
}

std::vector<SlotState> Scheduler::slot_states() const {
  std::lock_guard lock(mutex_);
  return slot_states_;
}

void Scheduler::publish_slots() {
  slot_states_.resize(slots_.size());
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    SlotState& st = slot_states_[i];
    st = {.id = i, .processing = bool(s.seq), .tokens = uint32_t(s.cached.size())};
    if (!s.seq) continue;
    st.tokens = s.seq->n_cached();
    st.prompt_tokens = s.seq->usage().prompt_tokens;
    st.cached_tokens = s.seq->usage().cached_tokens;
    st.generated_tokens = s.seq->generated();
  }
  if (const RecurrentCache* r = engine_.recurrent_cache())
    for (uint32_t i = 0; i < slots_.size(); ++i) slot_states_[i].checkpoint_tokens = r->checkpoint(i);
}

void Scheduler::shutdown(std::chrono::milliseconds grace) {
  {
    std::unique_lock lock(mutex_);
    accepting_ = false;
    wake_.wait_for(lock, grace, [&] { return queue_.empty() && stats_.running == 0; });
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// The idle slot for a prompt: the longest shared prefix, then the least recently used. `reuse`:
// how many of its cached tokens the request keeps (at least one prompt token is evaluated again,
// for the logits; a hybrid model keeps only what the slot's checkpoint covers; nothing from the
// first image on, whose tokens are zeros in the prompt whatever the image).
uint32_t Scheduler::pick_slot(const GenerationRequest& request, uint32_t& reuse) const {
  const std::vector<int32_t>& prompt = request.prompt;
  size_t before_image = request.images.empty() ? prompt.size() : request.images.front().at;
  uint32_t best = UINT32_MAX;
  size_t best_prefix = 0;
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.seq) continue;
    size_t shared = std::min({common_prefix(s.cached, prompt), prompt.size() - 1, before_image});
    size_t prefix = engine_.resumable(uint32_t(shared), i, uint32_t(s.cached.size()));
    if (best == UINT32_MAX || prefix > best_prefix || (prefix == best_prefix && s.last_used < slots_[best].last_used))
      best = i, best_prefix = prefix;
  }
  reuse = uint32_t(best_prefix);
  return best;
}

void Scheduler::admit() {
  // Requests whose clients left while waiting give their place in the queue up at once.
  std::erase_if(queue_, [&](Waiting& w) {
    if (!w.handle->cancelled()) return false;
    w.handle->push({.done = true, .finish = RequestFinish::Cancelled});
    ++stats_.cancelled;
    return true;
  });
  while (!queue_.empty()) {
    Waiting& w = queue_.front();
    uint32_t reuse = 0, slot = pick_slot(w.request, reuse);
    if (slot == UINT32_MAX) return;
    Waiting taken = std::move(w);
    queue_.pop_front();
    try {  // a failure here ends this request with it (a 500), not the ones behind it
      start(slot, reuse, std::move(taken.request), taken.handle);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: the engine failed: %s\n", e.what());
      taken.handle->push(
          {.done = true, .finish = RequestFinish::Fault, .error = std::string("the engine failed: ") + e.what()});
      if (dynamic_cast<const DeviceLost*>(&e)) throw;
    }
  }
}

void Scheduler::start(uint32_t slot, uint32_t reuse, GenerationRequest request,
                      std::shared_ptr<GenerationHandle> handle) {
  inject_.hit(InjectedFault::Admit);
  auto submitted = handle->created();
  auto seq = std::make_unique<Sequence>(std::move(request), std::move(handle), engine_.tokenizer(), engine_.n_ctx());
  seq->reuse(reuse);
  engine_.resume(slot, reuse, uint32_t(slots_[slot].cached.size()));  // hybrids: maybe from the checkpoint
  stats_.prompt_tokens += seq->usage().prompt_tokens;                 // the mutex is held (admit())
  stats_.cached_tokens += reuse;
  ++stats_.running;
  stats_.histograms.queue_time.observe(std::chrono::duration<double>(Clock::now() - submitted).count());
  slots_[slot].submitted = submitted;
  slots_[slot].seq = std::move(seq);
  slots_[slot].cached.clear();
  order_.push_back(slot);
}

// Frees a finished or cancelled sequence's slot; its tokens stay cached for prefix reuse, up to its
// first image (an image's tokens are zeros, whatever the image; a hybrid model's state covers
// the images, so it keeps nothing then).
void Scheduler::release(uint32_t slot, bool completed) {
  Slot& s = slots_[slot];
  auto now = Clock::now();
  uint32_t prompt = s.seq->usage().prompt_tokens, generated = s.seq->generated();
  auto all = s.seq->tokens();
  uint32_t keep = s.seq->n_cached();
  if (s.seq->first_image() < keep) keep = engine_.recurrent_cache() ? 0 : s.seq->first_image();
  s.cached.assign(all.begin(), all.begin() + keep);
  s.last_used = ++clock_;
  s.seq.reset();
  order_.erase(std::find(order_.begin(), order_.end(), slot));
  std::lock_guard lock(mutex_);
  --stats_.running;
  ++stats_.finished;
  if (!completed) return;
  RequestHistograms& h = stats_.histograms;
  h.e2e_latency.observe(std::chrono::duration<double>(now - s.submitted).count());
  h.prompt_tokens.observe(prompt);
  h.generation_tokens.observe(generated);
}

void Scheduler::observe_token(uint32_t slot, bool first) {
  Slot& s = slots_[slot];
  auto now = Clock::now();
  std::lock_guard lock(mutex_);
  if (first)
    stats_.histograms.time_to_first_token.observe(std::chrono::duration<double>(now - s.submitted).count());
  else
    stats_.histograms.time_per_output_token.observe(std::chrono::duration<double>(now - s.last_token).count());
  s.last_token = now;
}

void Scheduler::drop_cancelled() {
  for (uint32_t slot : std::vector<uint32_t>(order_))
    if (slots_[slot].seq->cancelled()) {
      slots_[slot].seq->finish(RequestFinish::Cancelled);
      release(slot);
      std::lock_guard lock(mutex_);
      ++stats_.cancelled;
    }
}

void Scheduler::record_tokens(uint64_t n) {
  auto now = Clock::now();
  std::lock_guard lock(mutex_);
  stats_.generated_tokens += n;
  recent_.emplace_back(now, n);
  while (!recent_.empty() && now - recent_.front().first > kTpsWindow) recent_.pop_front();
}

// An image's rows are a step of one sequence (the transformer's rule), in chunks of the batch as
// Engine::eval_image and mtmd's helpers decode them; the encoder runs here, on the GPU's thread.
void Scheduler::run_images() {
  std::vector<uint32_t> finished;
  const bool mrope = engine_.uses_mrope();
  const uint32_t dim = engine_.config().dim, most = engine_.max_batch();
  for (uint32_t slot : order_) {
    Sequence& seq = *slots_[slot].seq;
    const PromptImage* im = seq.pending_image();
    if (!im) continue;
    ENSURE(options_.encoder, "an image came to a scheduler without a vision encoder");
    std::vector<float> rows = options_.encoder->encode(im->input.grid, im->input.pixels);
    const uint32_t n = im->tokens();
    ENSURE(rows.size() == size_t(n) * dim,
           fmt::format("the projector gives rows of {} values and the model takes {}", rows.size() / n, dim));
    std::vector<int32_t> zeros(std::min(n, most), 0);
    const int32_t shift = seq.rope_shift(mrope);
    std::span<const float> logits;
    for (uint32_t i = 0; i < n; i += most) {
      uint32_t k = std::min(most, n - i);
      SeqChunk c{.slot = slot,
                 .pos0 = seq.n_cached(),
                 .tokens = std::span<const int32_t>(zeros).first(k),
                 .embd = std::span<const float>(rows).subspan(size_t(i) * dim, size_t(k) * dim),
                 .attention = options_.encoder->config().image_attention(dim),
                 .grid_x = mrope ? im->input.grid.tokens_x : 0,
                 .grid_first = i,
                 .rope_shift = shift};
      logits = engine_.step({&c, 1});
      seq.evaluated(k);
    }
    if (!seq.pending().empty()) continue;  // text follows (a prompt rarely ends with an image)
    engine_.checkpoint(slot, seq.n_cached());
    if (!seq.sample(logits.first(engine_.config().vocab_size))) finished.push_back(slot);
  }
  for (uint32_t slot : finished) release(slot);
}

// One forward: every sequence that sampled gives its one token, then the sequences still
// reading their prompt give chunks, first come first served, until the batch is full.
void Scheduler::step() {
  run_images();
  batch_.clear();
  for (uint32_t slot : order_)
    if (slots_[slot].seq->pending().size() == 1) batch_.add(slot, *slots_[slot].seq, true);
  for (uint32_t slot : order_)
    if (slots_[slot].seq->pending().size() > 1) batch_.add(slot, *slots_[slot].seq);
  if (batch_.empty()) return;
  auto t0 = Clock::now();
  inject_.hit(InjectedFault::Step);
  inject_.hit(InjectedFault::DeviceLost);
  std::span<const float> logits = engine_.step(batch_.chunks());
  uint32_t vocab = engine_.config().vocab_size;
  uint64_t sampled = 0;
  std::vector<uint32_t> finished;
  for (size_t i = 0; i < batch_.chunks().size(); ++i) {
    Sequence& seq = batch_.sequence(i);
    seq.evaluated(uint32_t(batch_.chunks()[i].tokens.size()));
    if (!seq.pending().empty()) continue;  // more of its prompt to read
    // Hybrids: the state at the end of the prompt, from which the talk's next turn can go on.
    if (seq.usage().completion_tokens == 0) engine_.checkpoint(batch_.chunks()[i].slot, seq.n_cached());
    ++sampled;
    uint32_t slot = batch_.chunks()[i].slot, before = seq.generated();
    bool more = seq.sample(logits.subspan(i * vocab, vocab));
    if (seq.generated() > before) observe_token(slot, before == 0);
    if (!more) finished.push_back(slot);
  }
  for (uint32_t slot : finished) release(slot, true);
  record_tokens(sampled);
  uint64_t step_tokens = 0;
  for (const auto& c : batch_.chunks()) step_tokens += c.tokens.size();
  std::lock_guard lock(mutex_);
  ++stats_.steps;
  stats_.histograms.iteration_tokens.observe(double(step_tokens));
  stats_.pipelines = engine_.pipelines();
  stats_.busy_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

// The engine failed under the running requests: they end with the fault (a 500) rather than hang.
void Scheduler::fail_running(const std::string& why) {
  for (uint32_t slot : std::vector<uint32_t>(order_)) {
    slots_[slot].seq->finish(RequestFinish::Fault, why);
    slots_[slot].cached.clear();
    release(slot);
  }
}

void Scheduler::lose_device(const std::string& why) {
  std::fprintf(stderr, "error: device lost: %s\n", why.c_str());
  std::string fault = "the GPU was lost (" + why + "); the server is stopping";
  {  // first, so that /health says so before any client hears of the loss
    std::lock_guard lock(mutex_);
    fault_ = fault;
    accepting_ = false;
    fail_waiting({.done = true, .finish = RequestFinish::Fault, .error = fault},
                 std::make_exception_ptr(std::runtime_error(fault)));
  }
  fail_running(fault);
  if (options_.on_device_lost) options_.on_device_lost(fault);
}

void Scheduler::fail_waiting(const GenerationEvent& last, std::exception_ptr job_error) {
  for (Waiting& w : queue_) w.handle->push(last);
  queue_.clear();
  for (auto& job : attention_) job->result.set_exception(job_error);
  attention_.clear();
  for (auto& job : embed_) job->result.set_exception(job_error);
  embed_.clear();
}

std::string Scheduler::fault() const {
  std::lock_guard lock(mutex_);
  return fault_;
}

void Scheduler::round() {
  run_attention();  // before admitting, so that a steady queue of requests cannot starve it
  run_embed();
  {
    std::lock_guard lock(mutex_);
    admit();
  }
  drop_cancelled();
  step();
}

// Every exception of a round is caught here: a lost device ends the loop (nothing can run on it
// again), anything else fails the running requests and the loop goes on.
void Scheduler::loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || !queue_.empty() || !order_.empty() || !attention_.empty() || !embed_.empty();
      });
      if (stopping_) {
        fail_waiting({.done = true, .finish = RequestFinish::Cancelled},
                     std::make_exception_ptr(QueueFull("the server is stopping")));
        break;
      }
    }
    bool lost = false;
    try {
      round();
    } catch (const DeviceLost& e) {
      lose_device(e.what());
      lost = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: the engine failed: %s\n", e.what());
      fail_running(std::string("the engine failed: ") + e.what());
    }
    {
      std::lock_guard lock(mutex_);
      publish_slots();
    }
    wake_.notify_all();  // shutdown() waits for the work to drain
    if (lost) return;
  }
  for (uint32_t slot : std::vector<uint32_t>(order_)) {
    slots_[slot].seq->finish(RequestFinish::Cancelled);
    release(slot);
  }
}

InjectedFault InjectedFault::from_env() {
  const char* env = std::getenv("VKLLM_INJECT_FAULT");
  if (!env) return {};
  std::string spec = env;
  size_t colon = spec.find(':');
  std::string where = spec.substr(0, colon);
  uint64_t at = colon == std::string::npos ? 1 : std::strtoull(spec.c_str() + colon + 1, nullptr, 10);
  Where w = where == "admit" ? Admit : where == "step" ? Step : where == "device_lost" ? DeviceLost : None;
  ENSURE(w != None && at > 0, fmt::format("VKLLM_INJECT_FAULT={}: expected admit:N, step:N or device_lost:N", spec));
  return {.where = w, .at = at};
}

void InjectedFault::hit(Where w) {
  if (w != where || ++count != at) return;
  if (w == DeviceLost)
    throw vkllm::DeviceLost(VK_ERROR_DEVICE_LOST, "an injected fault (VKLLM_INJECT_FAULT)", __FILE__, __LINE__);
  throw std::runtime_error("an injected fault (VKLLM_INJECT_FAULT)");
}

}  // namespace vkllm
