// Token sampling on the host.
#include "engine/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <unordered_map>

#include "error.h"

namespace vkllm {

int32_t argmax(std::span<const float> logits) {
  ENSURE(!logits.empty(), "argmax over no logits");
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

namespace {

[[noreturn]] void nothing_allowed() {
  throw_error(
      "the grammar allows no token here: the vocabulary cannot spell what it needs, or the tokens it allows are "
      "banned (ignore_eos, logit_bias)");
}

// The largest of 64 floats, eight lanes at a time (the compiler vectorises it); NaNs are passed over.
float block_max(const float* l) {
  float lane[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < 64; i += 8)
    for (size_t j = 0; j < 8; ++j) lane[j] = l[i + j] > lane[j] ? l[i + j] : lane[j];
  float m = -INFINITY;
  for (float x : lane) m = x > m ? x : m;
  return m;
}

}  // namespace

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

// Best first: the higher logit, then the lower id (a strict order, so every sort agrees).
bool Sampler::before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Logit bias, then the penalties of the tokens seen recently, on a copy of the logits: the few
// tokens they touch are changed in place, and every other stays the model's.
void Sampler::adjust(std::span<const float> logits) {
  ENSURE(!logits.empty(), "sampling from no logits");
  logits_.assign(logits.begin(), logits.end());
  for (auto [id, bias] : options_.logit_bias)
    if (id >= 0 && size_t(id) < logits_.size()) logits_[size_t(id)] += bias;
  const SamplerOptions& o = options_;
  if (o.repeat_penalty == 1.0f && o.presence_penalty == 0 && o.frequency_penalty == 0) return;
  std::unordered_map<int32_t, int> seen;
  for (int32_t id : recent_) ++seen[id];
  for (auto [id, count] : seen) {
    if (id < 0 || size_t(id) >= logits_.size()) continue;
    float& l = logits_[size_t(id)];
    l = l > 0 ? l / o.repeat_penalty : l * o.repeat_penalty;
    l -= o.presence_penalty + float(count) * o.frequency_penalty;
  }
}

// Where a mask allows few tokens (a literal, a number, punctuation), work_ gets them (those with
// a finite logit) by its set bits, and true; a dense one is left to ban_disallowed (false).
bool Sampler::gather_allowed(const std::vector<uint64_t>& allowed) {
  size_t n = logits_.size(), words = (n + 63) / 64, count = 0;
  ENSURE(allowed.size() >= words, "a token mask smaller than the vocabulary");
  for (size_t w = 0; w < words; ++w) count += size_t(std::popcount(allowed[w]));
  if (count * 16 > n) return false;
  work_.clear();
  for (size_t w = 0; w < words; ++w)
    for (uint64_t bits = allowed[w]; bits; bits &= bits - 1) {
      size_t i = w * 64 + size_t(std::countr_zero(bits));
      if (i < n && logits_[i] != -INFINITY) work_.push_back({int32_t(i), logits_[i], 0.0f});
    }
  return true;
}

// A token the mask leaves out gets -inf, like a banned one: a masked draw then takes only finite
// logits (a banned token stays out even where the grammar allows it).
void Sampler::ban_disallowed(const std::vector<uint64_t>& allowed) {
  ENSURE(allowed.size() * 64 >= logits_.size(), "a token mask smaller than the vocabulary");
  for (size_t w = 0, n = logits_.size(); w * 64 < n; ++w) {
    uint64_t bits = allowed[w];
    if (bits == ~uint64_t(0)) continue;
    if (bits == 0) {
      std::fill(logits_.begin() + ptrdiff_t(w * 64), logits_.begin() + ptrdiff_t(std::min(n, w * 64 + 64)), -INFINITY);
      continue;
    }
    for (size_t i = w * 64, end = std::min(n, i + 64); i < end; ++i)
      if (!(bits >> (i & 63) & 1)) logits_[i] = -INFINITY;
  }
}

// The largest adjusted logit's token, the lowest id on ties; -1 when finite_only and none is
// finite. The maximum by blocks, then its first index.
int32_t Sampler::best(bool finite_only) const {
  const float* l = logits_.data();
  size_t n = logits_.size(), i = 0;
  float m = -INFINITY;
  for (; i + 64 <= n; i += 64) m = std::max(m, block_max(l + i));
  for (; i < n; ++i) m = l[i] > m ? l[i] : m;
  if (m == -INFINITY) return finite_only ? -1 : 0;  // (every logit -inf or NaN)
  for (i = 0; i < n; ++i)
    if (l[i] == m) return int32_t(i);
  return 0;  // unreachable: m is one of the logits
}

// work_: the k best tokens of the adjusted logits (only finite ones when asked), best first. One
// pass keeps the k best so far in a heap whose top is the worst of them; a later token replaces
// it only when strictly greater (an equal one has a higher id, so it is worse).
void Sampler::select(size_t k, bool finite_only) {
  work_.clear();
  size_t n = logits_.size(), i = 0;
  for (; i < n && work_.size() < k; ++i)
    if (!finite_only || logits_[i] != -INFINITY) work_.push_back({int32_t(i), logits_[i], 0.0f});
  std::make_heap(work_.begin(), work_.end(), before);
  if (work_.size() == k) {
    float worst = work_.front().logit;
    auto consider = [&](size_t t) {
      if (!(logits_[t] > worst)) return;
      std::pop_heap(work_.begin(), work_.end(), before);
      work_.back() = {int32_t(t), logits_[t], 0.0f};
      std::push_heap(work_.begin(), work_.end(), before);
      worst = work_.front().logit;
    };
    for (; i < n && i % 64; ++i) consider(i);
    for (; i + 64 <= n; i += 64)  // a block whose largest logit cannot enter is passed over whole
      if (block_max(logits_.data() + i) > worst)
        for (size_t t = i; t < i + 64; ++t) consider(t);
    for (; i < n; ++i) consider(i);
  }
  std::sort_heap(work_.begin(), work_.end(), before);
}

int32_t Sampler::sample(std::span<const float> logits, const std::vector<uint64_t>* allowed) {
  adjust(logits);
  return sample_adjusted(allowed);
}

int32_t Sampler::sample_adjusted(const std::vector<uint64_t>* allowed) {
  if (allowed && gather_allowed(*allowed)) {  // a sparse mask: its tokens are the candidates
    if (work_.empty()) nothing_allowed();
    if (options_.temperature == 0.0f) return std::min_element(work_.begin(), work_.end(), before)->id;
    size_t k = options_.top_k > 0 ? std::min<size_t>(options_.top_k, work_.size()) : work_.size();
    std::partial_sort(work_.begin(), work_.begin() + ptrdiff_t(k), work_.end(), before);
    work_.resize(k);
    return draw();
  }
  if (allowed) ban_disallowed(*allowed);
  bool masked = allowed != nullptr;
  if (options_.temperature == 0.0f) {
    int32_t id = best(masked);
    if (id < 0) nothing_allowed();
    return id;
  }
  select(options_.top_k > 0 ? size_t(options_.top_k) : logits_.size(), masked);
  if (work_.empty()) nothing_allowed();
  return draw();
}

int32_t Sampler::sample(std::span<const float> logits, TokenFilter& filter) {
  adjust(logits);
  if (!filter.mask_cached() && keep_best_allowed(filter)) return options_.temperature == 0.0f ? work_[0].id : draw();
  return sample_adjusted(filter.mask().get());
}

// Greedy and top-k read only the k best allowed candidates, and those are the first k allowed
// ones in best-first order. So the best few are asked one by one (greedy: the best alone first,
// which a model that fits the grammar picks); when k of them are allowed, work_ holds them, the
// same tokens in the same order as the whole mask leaves. Otherwise false.
bool Sampler::keep_best_allowed(TokenFilter& filter) {
  size_t k = options_.temperature == 0.0f ? 1 : size_t(options_.top_k);
  if (k == 0) return false;  // top-k off: the draw sees every allowed token
  if (k == 1) {
    int32_t id = best(true);
    if (id >= 0 && filter.allows(id)) {
      work_.assign(1, {id, logits_[size_t(id)], 0.0f});
      return true;
    }
  }
  size_t window = std::min(logits_.size(), std::max<size_t>(64, 4 * k));
  select(window, false);
  size_t kept = 0;  // the allowed ones move to the front, in order (a failure leaves work_ to be rebuilt)
  for (size_t i = 0; i < work_.size() && kept < k; ++i) {
    if (window < logits_.size() && kept + (window - i) < k) return false;  // cannot reach k here
    if (work_[i].logit != -INFINITY && filter.allows(work_[i].id)) work_[kept++] = work_[i];
  }
  if (kept == 0 || (kept < k && window < logits_.size())) return false;
  work_.resize(kept);
  return true;
}

// work_ holds the k best candidates, best first: top-p, min-p, then a draw at the temperature.
int32_t Sampler::draw() {
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
