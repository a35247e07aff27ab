// A generation request's text side: events to the client, stop strings, sampling and finishing.
#include "engine/sequence.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "error.h"

namespace vkllm {

const char* to_string(RequestFinish r) {
  switch (r) {
    case RequestFinish::Stop:
      return "stop";
    case RequestFinish::Length:
      return "length";
    case RequestFinish::Cancelled:
      return "cancelled";
    case RequestFinish::Error:
      return "error";
    case RequestFinish::Fault:
      return "fault";
    default:
      return "none";
  }
}

// --- GenerationHandle

bool GenerationHandle::next(GenerationEvent& out, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return false;
  out = std::move(events_.front());
  events_.pop_front();
  return true;
}

void GenerationHandle::push(GenerationEvent e) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(e));
  }
  ready_.notify_all();
}

// --- Sequence

namespace {

// ignore_eos bans the end-of-generation tokens, as llama.cpp does, rather than skipping them.
SamplerOptions sampling_of(const GenerationRequest& r, const Tokenizer& tokenizer) {
  SamplerOptions o = r.sampling;
  if (r.ignore_eos)
    for (int32_t id : tokenizer.end_of_generation()) o.logit_bias.emplace_back(id, -INFINITY);
  return o;
}

}  // namespace

Sequence::Sequence(GenerationRequest request, std::shared_ptr<GenerationHandle> handle, const Tokenizer& tokenizer,
                   uint32_t n_ctx)
    : request_(std::move(request)),
      handle_(std::move(handle)),
      tokenizer_(tokenizer),
      n_ctx_(n_ctx),
      tokens_(request_.prompt),
      sampler_(sampling_of(request_, tokenizer)),
      detok_(tokenizer),
      stop_(request_.stop),
      constraint_(request_.constraint, tokenizer) {
  ENSURE(!tokens_.empty() && tokens_.size() < n_ctx,
         fmt::format("a prompt of {} tokens does not fit the context of {} tokens with one to generate", tokens_.size(),
                     n_ctx));
  uint32_t end = 0;
  for (const PromptImage& im : request_.images) {
    ENSURE(im.tokens() > 0 && im.at >= end && im.at + uint64_t(im.tokens()) <= tokens_.size(),
           "a prompt's images lie apart within it");
    end = im.at + im.tokens();
  }
  for (int32_t t : tokens_) sampler_.accept(t);
  usage_.prompt_tokens = uint32_t(tokens_.size());
  admitted_ = std::chrono::steady_clock::now();
  usage_.queue_ms = std::chrono::duration<double, std::milli>(admitted_ - handle_->created()).count();
}

std::span<const int32_t> Sequence::pending_text() const {
  uint32_t end = uint32_t(tokens_.size());
  for (const PromptImage& im : request_.images)
    if (im.at >= n_cached_) {
      end = im.at;
      break;
    }
  return std::span(tokens_).subspan(n_cached_, end - n_cached_);
}

const PromptImage* Sequence::pending_image() const {
  for (const PromptImage& im : request_.images)
    if (im.at == n_cached_) return &im;
  return nullptr;
}

uint32_t Sequence::first_image() const { return request_.images.empty() ? UINT32_MAX : request_.images.front().at; }

int32_t Sequence::rope_shift(bool mrope) const {
  int32_t shift = 0;
  for (const PromptImage& im : request_.images)
    if (mrope && im.at + im.tokens() <= n_cached_)
      shift += int32_t(std::max(im.input.grid.tokens_x, im.input.grid.tokens_y)) - int32_t(im.tokens());
  return shift;
}

void Sequence::reuse(uint32_t n) {
  ENSURE(n_cached_ == 0 && n < tokens_.size(), "prefix reuse leaves at least one prompt token to evaluate");
  n_cached_ = usage_.cached_tokens = n;
}

bool Sequence::sample(std::span<const float> logits) {
  ENSURE(!done_ && pending().empty(), "a sequence samples once its pending tokens are evaluated");
  int32_t t = -1;
  try {  // a grammar that cannot go on ends this request, not the server's step
    t = constraint_.sample(sampler_, logits);
    constraint_.accept(t);
  } catch (const Error& e) {
    finish(RequestFinish::Error, e.what());
    return false;
  }
  if (generated_ == 0) first_token_ = std::chrono::steady_clock::now();
  if (request_.logprobs) logprobs_.push_back(token_logprob(logits, t, request_.top_logprobs));
  sampler_.accept(t);
  tokens_.push_back(t);
  ++generated_, ++unreported_;
  RequestFinish reason = RequestFinish::None;
  std::string text;
  if (!request_.ignore_eos && tokenizer_.is_end_of_generation(t)) {
    reason = RequestFinish::Stop;
  } else {
    text = stop_.push(detok_.push(t));
    if (stop_.stopped()) reason = RequestFinish::Stop;
  }
  if (reason == RequestFinish::None && request_.max_tokens && generated_ >= *request_.max_tokens)
    reason = RequestFinish::Length;
  // The new token is evaluated at position size - 1, which must fit the slot.
  if (reason == RequestFinish::None && tokens_.size() > n_ctx_) reason = RequestFinish::Length;
  if (reason != RequestFinish::None && !stop_.stopped()) {
    text += stop_.push(detok_.flush());
    if (stop_.stopped()) reason = RequestFinish::Stop;
    text += stop_.flush();
  }
  emit(std::move(text), reason);
  return !done_;
}

void Sequence::finish(RequestFinish reason, std::string error) {
  if (!done_) emit({}, reason, std::move(error));
}

void Sequence::emit(std::string text, RequestFinish reason, std::string error) {
  bool done = reason != RequestFinish::None;
  if (text.empty() && !done) return;  // held back; the tokens are counted with the next event
  usage_.completion_tokens = generated_;
  GenerationEvent e{.text = std::move(text), .tokens = unreported_, .done = done, .finish = reason};
  if (done) {
    using ms = std::chrono::duration<double, std::milli>;
    auto now = std::chrono::steady_clock::now();
    usage_.prompt_ms = ms((generated_ ? first_token_ : now) - admitted_).count();
    usage_.generation_ms = generated_ ? ms(now - first_token_).count() : 0;
    e.usage = usage_, done_ = true;
  }
  if (done && stop_.stopped()) e.stop = stop_.matched();
  e.logprobs = std::move(logprobs_);
  e.error = std::move(error);
  logprobs_.clear();
  unreported_ = 0;
  handle_->push(std::move(e));
}

}  // namespace vkllm
