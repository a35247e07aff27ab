// Sampler: picks the next token from host logits. Logit bias and penalties, then the tokens a
// constraint allows (a grammar's mask), then greedy, or top-k → top-p → min-p → temperature → a
// draw from a seeded generator. Same seed, same tokens.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace vkllm {

struct SamplerOptions {
  float temperature = 0.8f;     // 0: greedy (argmax, lowest id on ties)
  int top_k = 40;               // 0: off
  float top_p = 0.95f;          // 1: off
  float min_p = 0.05f;          // 0: off; drops tokens below min_p × the best token's probability
  float repeat_penalty = 1.1f;  // 1: off; CTRL-style: divides positive logits, multiplies negative ones
  int repeat_last_n = 64;       // how many recent tokens the penalties look at
  // OpenAI's penalties over the same recent tokens: a token seen c > 0 times loses
  // presence_penalty + c * frequency_penalty from its logit (0: off).
  float presence_penalty = 0, frequency_penalty = 0;
  std::vector<std::pair<int32_t, float>> logit_bias;  // (token, added to its logit); -inf bans it
  uint64_t seed = 0;
};

// What a constraint allows next, as the sampler asks it: a token at a time (cheap: a grammar steps
// its bytes) or the whole mask (bit i of word i / 64 for token i; a grammar scans its vocabulary).
class TokenFilter {
 public:
  virtual ~TokenFilter() = default;
  virtual bool allows(int32_t token) = 0;  // the mask's bit, alone
  virtual bool mask_cached() = 0;          // mask() costs a lookup now
  virtual std::shared_ptr<const std::vector<uint64_t>> mask() = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplerOptions& options);
  // The next token; logits (vocab) are not modified. allowed: bit i of word i / 64 set when token
  // i may be drawn (a grammar's mask), null for all; throws Error when it allows none.
  int32_t sample(std::span<const float> logits, const std::vector<uint64_t>* allowed = nullptr);
  // The same token as sample(logits, filter.mask()), for the same state of the generator. Greedy and
  // top-k need only the best allowed candidates, so those are looked for among the best few
  // first, token by token; the whole mask is asked for only when they are not there (or top-k is
  // off, or the mask is cached anyway).
  int32_t sample(std::span<const float> logits, TokenFilter& filter);
  // Tells the sampler a token joined the sequence (prompt or generated), for the penalty.
  void accept(int32_t token);
  void reset();
  const SamplerOptions& options() const { return options_; }

 private:
  struct Candidate {
    int32_t id;
    float logit;
    float p;
  };
  static bool before(const Candidate& a, const Candidate& b);
  void adjust(std::span<const float> logits);
  int32_t sample_adjusted(const std::vector<uint64_t>* allowed);
  bool gather_allowed(const std::vector<uint64_t>& allowed);
  void ban_disallowed(const std::vector<uint64_t>& allowed);
  int32_t best(bool finite_only) const;
  void select(size_t k, bool finite_only);
  bool keep_best_allowed(TokenFilter& filter);
  int32_t draw();
  double uniform();

  SamplerOptions options_;
  std::mt19937_64 rng_;
  std::deque<int32_t> recent_;
  std::vector<float> logits_;  // this draw's logits after bias and penalties (and a mask: -inf)
  std::vector<Candidate> work_;
};

// Index of the largest value, lowest index on ties.
int32_t argmax(std::span<const float> logits);

}  // namespace vkllm
