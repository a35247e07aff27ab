// Token sampling on the host.
#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "error.h"

namespace vkllm {

int32_t argmax(std::span<const float> logits) {
  ENSURE(!logits.empty(), "argmax over no logits");
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

Sampler::Sampler(const SamplerOptions& options) : options_(options), rng_(options.seed) {
  ENSURE(options.temperature >= 0, "temperature must be >= 0");
  ENSURE(options.top_k >= 0, "top-k must be >= 0");
  ENSURE(options.top_p > 0 && options.top_p <= 1, "top-p must be in (0, 1]");
  ENSURE(options.min_p >= 0 && options.min_p < 1, "min-p must be in [0, 1)");
  ENSURE(options.repeat_penalty > 0, "repeat penalty must be > 0");
  ENSURE(std::isfinite(options.presence_penalty) && std::isfinite(options.frequency_penalty),
         "presence and frequency penalties must be finite");
}

void Sampler::reset() {
  rng_.seed(options_.seed);
  recent_.clear();
}

void Sampler::accept(int32_t token) {
  if (options_.repeat_last_n <= 0) return;
  recent_.push_back(token);
  while (recent_.size() > static_cast<size_t>(options_.repeat_last_n)) recent_.pop_front();
}

// A double in [0, 1) from 53 random bits: the same on every platform, unlike std distributions.
double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

// Logit bias, then the penalties of the tokens seen recently (candidates are still in id order).
void Sampler::penalise(std::vector<Candidate>& c) const {
  for (auto [id, bias] : options_.logit_bias)
    if (id >= 0 && size_t(id) < c.size()) c[size_t(id)].logit += bias;
  const SamplerOptions& o = options_;
  if (o.repeat_penalty == 1.0f && o.presence_penalty == 0 && o.frequency_penalty == 0) return;
  std::unordered_map<int32_t, int> seen;
  for (int32_t id : recent_) ++seen[id];
  for (auto [id, count] : seen) {
    if (id < 0 || size_t(id) >= c.size()) continue;
    float& l = c[size_t(id)].logit;
    l = l > 0 ? l / o.repeat_penalty : l * o.repeat_penalty;
    l -= o.presence_penalty + float(count) * o.frequency_penalty;
  }
}

namespace {

// Best first: the higher logit, then the lower id (a strict order, so every sort agrees).
bool better(float la, int32_t a, float lb, int32_t b) { return la > lb || (la == lb && a < b); }

}  // namespace

void Sampler::candidates(std::span<const float> logits) {
  ENSURE(!logits.empty(), "sampling from no logits");
  work_.resize(logits.size());  // (Candidate's constructor writes nothing: the loop writes each once)
  for (size_t i = 0; i < logits.size(); ++i) work_[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
  penalise(work_);
}

void Sampler::keep_allowed(const std::vector<uint64_t>& allowed) {
  ENSURE(allowed.size() * 64 >= work_.size(), "a token mask smaller than the vocabulary");
  std::erase_if(work_, [&](const Candidate& c) {
    return !(allowed[size_t(c.id) >> 6] >> (c.id & 63) & 1) || c.logit == -INFINITY;
  });
  ENSURE(!work_.empty(),
         "the grammar allows no token here: the vocabulary cannot spell what it needs, or the tokens it allows "
         "are banned (ignore_eos, logit_bias)");
}

int32_t Sampler::sample(std::span<const float> logits, const std::vector<uint64_t>* allowed) {
  candidates(logits);
  if (allowed) keep_allowed(*allowed);
  return choose();
}

int32_t Sampler::sample(std::span<const float> logits, TokenFilter& filter) {
  candidates(logits);
  if (filter.mask_cached() || !keep_best_allowed(filter)) keep_allowed(*filter.mask());
  return choose();
}

// Greedy and top-k read only the k best allowed candidates, and those are the first k allowed
// ones in best-first order. So the best few candidates are sorted and asked one by one; when k of
// them are allowed, they are all the draw needs (the same tokens, in the same order, as the whole
// mask leaves). Otherwise false, with work_'s candidates intact (their order aside).
bool Sampler::keep_best_allowed(TokenFilter& filter) {
  size_t k = options_.temperature == 0.0f ? 1 : size_t(options_.top_k);
  if (k == 0) return false;  // top-k off: the draw sees every allowed token
  auto order = [](const Candidate& a, const Candidate& b) { return better(a.logit, a.id, b.logit, b.id); };
  if (k == 1) {  // greedy: the best candidate alone first, which a model that fits the grammar picks
    Candidate best = *std::min_element(work_.begin(), work_.end(), order);
    if (best.logit != -INFINITY && filter.allows(best.id)) {
      work_.assign(1, best);
      return true;
    }
  }
  size_t window = std::min(work_.size(), std::max<size_t>(64, 4 * k));
  std::partial_sort(work_.begin(), work_.begin() + ptrdiff_t(window), work_.end(), order);
  best_.clear();
  for (size_t i = 0; i < window && best_.size() < k; ++i) {
    if (window < work_.size() && best_.size() + (window - i) < k) return false;  // cannot reach k here
    if (work_[i].logit != -INFINITY && filter.allows(work_[i].id)) best_.push_back(work_[i]);
  }
  if (best_.size() < k && window < work_.size()) return false;
  if (best_.empty()) return false;           // none allowed at all: the mask's path says so
  work_.assign(best_.begin(), best_.end());  // (work_ keeps its capacity for the next vocabulary)
  return true;
}

int32_t Sampler::choose() {
  auto order = [](const Candidate& a, const Candidate& b) { return better(a.logit, a.id, b.logit, b.id); };
  if (options_.temperature == 0.0f) return std::min_element(work_.begin(), work_.end(), order)->id;

  // Keep the k best (all when k is 0), sorted best first.
  size_t k = options_.top_k > 0 ? std::min<size_t>(options_.top_k, work_.size()) : work_.size();
  std::partial_sort(work_.begin(), work_.begin() + k, work_.end(), order);
  work_.resize(k);

  // Probabilities at temperature 1 decide the top-p and min-p cut-offs, as llama.cpp does.
  auto softmax = [this](float temp) {
    double max = work_.front().logit, sum = 0;
    for (Candidate& c : work_) sum += (c.p = static_cast<float>(std::exp((c.logit - max) / temp)));
    for (Candidate& c : work_) c.p = static_cast<float>(c.p / sum);
  };
  softmax(1.0f);
  double cumulative = 0;
  size_t keep = 0;
  while (keep < work_.size() && (keep == 0 || cumulative < options_.top_p)) cumulative += work_[keep++].p;
  float floor = options_.min_p * work_.front().p;
  while (keep > 1 && work_[keep - 1].p < floor) --keep;
  work_.resize(keep);

  softmax(options_.temperature);
  double r = uniform(), acc = 0;
  for (const Candidate& c : work_)
    if ((acc += c.p) > r) return c.id;
  return work_.back().id;
}

}  // namespace vkllm
