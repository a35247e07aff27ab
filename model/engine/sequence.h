// One generation request as the scheduler runs it: what a client asks for (GenerationRequest),
// what it hears back (GenerationEvent, through a GenerationHandle it holds), and the state of the
// running sequence (Sequence): its tokens, sampler, detokenizer and stop strings. Nothing here
// touches the GPU, so the server's request handling (and its fuzzer) can use it alone.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/model_config.h"
#include "engine/histogram.h"
#include "engine/logprobs.h"
#include "engine/output_constraint.h"
#include "engine/sampler.h"
#include "image/image_preprocess.h"
#include "text/stop_strings.h"
#include "text/tokenizer.h"

namespace vkllm {

// An image of a prompt: its encoder input, and where its tokens sit in the prompt (prompt[at, at +
// input.grid.tokens()) hold zeros in their place, the id gemma4's per-layer rows take for them).
struct PromptImage {
  uint32_t at = 0;
  VisionInput input;
  uint32_t tokens() const { return input.grid.tokens(); }
};

struct GenerationRequest {
  std::vector<int32_t> prompt;         // not empty, shorter than a slot's context
  std::vector<PromptImage> images;     // in prompt order, apart; the scheduler needs an encoder for them
  std::optional<uint32_t> max_tokens;  // none: until the context is full
  SamplerOptions sampling;             // penalties look at prompt and generated tokens
  std::vector<std::string> stop;       // generation ends before the first of these strings
  bool ignore_eos = false;             // end-of-generation tokens are never sampled
  ConstraintSpec constraint;           // a grammar the output must follow (none by default)
  bool logprobs = false;               // report each token's log-probability
  uint32_t top_logprobs = 0;           // and this many most likely alternatives
};

// stop: an end-of-generation token or a stop string; length: max_tokens or the context;
// cancelled: the client went away or the server is shutting down; error: generation could not go
// on because of the request (a grammar that no token of the vocabulary can continue); fault: the
// engine failed (a GPU error, a lost device). Error and Fault say why in the event's `error`.
enum class RequestFinish { None, Stop, Length, Cancelled, Error, Fault };
const char* to_string(RequestFinish r);

struct Usage {
  uint32_t prompt_tokens = 0, completion_tokens = 0;
  uint32_t cached_tokens = 0;  // prompt tokens whose keys and values were reused from a slot
  // Milliseconds: waiting for a slot (submit to admission), evaluating the prompt (admission to the
  // first sampled token: queue_ms + prompt_ms is the time to first token), and generating the rest.
  double queue_ms = 0, prompt_ms = 0, generation_ms = 0;
};

// New text in order; the last event has `done` set, with the finish reason and usage. Text never
// contains any part of a stop string, and is whole UTF-8 except for bytes the model generated
// that never became a character.
struct GenerationEvent {
  std::string text;
  uint32_t tokens = 0;  // tokens generated since the previous event
  bool done = false;
  RequestFinish finish = RequestFinish::None;
  Usage usage;
  std::vector<TokenLogprob> logprobs;  // of those tokens, when the request asked
  std::string error;                   // finish Error: why
  std::string stop;                    // finish Stop by a stop string: which one ("" for end-of-generation)
};

// The client's end of a request: events arrive from the scheduler's thread; cancel() asks it to
// stop (the slot is freed at the next step).
class GenerationHandle {
 public:
  // Waits up to `timeout` for the next event; false if none came.
  bool next(GenerationEvent& out, std::chrono::milliseconds timeout);
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }
  void push(GenerationEvent e);                                               // the scheduler's side
  std::chrono::steady_clock::time_point created() const { return created_; }  // when it was submitted

 private:
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<GenerationEvent> events_;
  std::atomic<bool> cancelled_{false};
};

// Counters since start, and the state now (the server's /metrics).
struct SchedulerStats {
  uint64_t requests = 0, rejected = 0, finished = 0, cancelled = 0;
  uint64_t prompt_tokens = 0, cached_tokens = 0, generated_tokens = 0, steps = 0;
  uint32_t queued = 0, running = 0, slots = 0;
  double generation_tps = 0;     // generated tokens per second over the last 10 s
  double busy_seconds = 0;       // time spent in forward steps
  uint64_t pipelines = 0;        // GPU pipelines compiled so far (the warm-up's and any since)
  RequestHistograms histograms;  // latencies and token counts of requests and steps
};

// A KV-cache slot as GET /slots shows it.
struct SlotState {
  uint32_t id = 0;
  bool processing = false;  // running a request (else idle, keeping its tokens for prefix reuse)
  uint32_t tokens = 0;      // tokens whose keys and values it holds
  // The running request's prompt tokens, those reused from the slot, and tokens generated so far.
  uint32_t prompt_tokens = 0, cached_tokens = 0, generated_tokens = 0;
  // Hybrid models: the tokens the slot's recurrent checkpoint covers (its live state always
  // covers `tokens`). Unset for models without recurrent layers.
  std::optional<uint32_t> checkpoint_tokens;
};

// Something that runs generation requests: the Scheduler on the GPU, or a stand-in (fuzzing).
class Generator {
 public:
  virtual ~Generator() = default;
  // Queues a request; throws QueueFull when too many are waiting for a slot.
  virtual std::shared_ptr<GenerationHandle> submit(GenerationRequest request) = 0;
  virtual const Tokenizer& tokenizer() const = 0;
  virtual uint32_t n_ctx() const = 0;  // tokens per sequence
  virtual SchedulerStats stats() const = 0;
  virtual std::vector<SlotState> slot_states() const = 0;
  // Why the generator can no longer run anything (a lost device), or "" while it can.
  virtual std::string fault() const { return ""; }
  virtual const ModelConfig& config() const = 0;
  // The attention probabilities of every head of `layer` over a sequence from position 0
  // (Engine::attention_probabilities: (heads, n, n) f32), computed between forward steps in a
  // KV-cache slot no request is using (it waits for one); `images` in the tokens as a request's.
  // Throws Error for a bad layer, sequence or token id, QueueFull when the generator is stopping.
  virtual std::vector<float> attention(std::vector<int32_t> tokens, uint32_t layer,
                                       std::vector<PromptImage> images) = 0;
  // The pooled embeddings of several inputs (engine/embedding.h embed(): dim floats each, not
  // normalised), computed between forward steps in the KV-cache slots no request is using, all
  // of them at once (it waits for one). Throws Error for an empty or too long input or a bad
  // token id, QueueFull when the generator is stopping.
  virtual std::vector<std::vector<float>> embed(std::vector<std::vector<int32_t>> inputs, Pooling pooling) = 0;
};

// submit() refuses: too many requests wait for a slot, or the generator is stopping.
struct QueueFull : std::runtime_error {
  explicit QueueFull(const char* why = "the server is busy: too many requests are waiting; try again later")
      : std::runtime_error(why) {}
};

// A request while it runs: its tokens so far, how many are in its KV-cache slot, and the text
// machinery. The scheduler feeds it logits after each forward step that ended its pending tokens.
class Sequence {
 public:
  Sequence(GenerationRequest request, std::shared_ptr<GenerationHandle> handle, const Tokenizer& tokenizer,
           uint32_t n_ctx);

  // Tokens to evaluate next: the rest of the prompt, or the last sampled token.
  std::span<const int32_t> pending() const { return std::span(tokens_).subspan(n_cached_); }
  // The pending tokens before the next image's (text a step can take), and the image whose tokens
  // are pending first (null when text is).
  std::span<const int32_t> pending_text() const;
  const PromptImage* pending_image() const;
  // Where the prompt's first image starts (UINT32_MAX without one): the slot keeps its tokens for
  // a later prompt only before it.
  uint32_t first_image() const;
  // M-RoPE: how far the rope positions of the pending tokens run from their cache rows (each
  // earlier image of n tokens on an nx x ny grid moved them on by max(nx, ny) - n); 0 otherwise.
  int32_t rope_shift(bool mrope) const;
  std::span<const int32_t> tokens() const { return tokens_; }
  uint32_t n_cached() const { return n_cached_; }
  // The first n tokens are already in the slot (prefix reuse); at most prompt length - 1.
  void reuse(uint32_t n);
  void evaluated(uint32_t n) { n_cached_ += n; }  // n more pending tokens are in the slot
  // Samples the next token from the logits of the last evaluated token and reports its text;
  // returns false when the sequence has finished (the final event is sent).
  bool sample(std::span<const float> logits);
  // Ends the sequence now (cancelled, or zero tokens asked for; Error with its message).
  void finish(RequestFinish reason, std::string error = {});
  bool done() const { return done_; }
  uint32_t generated() const { return generated_; }
  bool cancelled() const { return handle_->cancelled(); }
  const Usage& usage() const { return usage_; }

 private:
  void emit(std::string text, RequestFinish reason, std::string error = {});

  GenerationRequest request_;
  std::shared_ptr<GenerationHandle> handle_;
  const Tokenizer& tokenizer_;
  uint32_t n_ctx_;
  std::vector<int32_t> tokens_;
  uint32_t n_cached_ = 0, generated_ = 0, unreported_ = 0;
  Sampler sampler_;
  Detokenizer detok_;
  StopStrings stop_;
  OutputConstraint constraint_;
  std::vector<TokenLogprob> logprobs_;  // not yet reported
  Usage usage_;
  std::chrono::steady_clock::time_point admitted_, first_token_;  // first_token_: set at the first sample
  bool done_ = false;
};

}  // namespace vkllm
