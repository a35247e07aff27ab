// Sampler: greedy, each filter's effect, the repetition penalty, determinism per seed, and the
// same tokens as a plain reference (a candidate per token, sorted) over random logits, options and
// masks.
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <unordered_map>

#include "catch.h"
#include "engine/sampler.h"

using namespace vkllm;

namespace {

SamplerOptions plain(float temp) {
  return {.temperature = temp, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .repeat_penalty = 1.0f, .seed = 7};
}

std::map<int32_t, int> histogram(Sampler& s, const std::vector<float>& logits, int draws) {
  std::map<int32_t, int> h;
  for (int i = 0; i < draws; ++i) ++h[s.sample(logits)];
  return h;
}

}  // namespace

TEST_CASE("greedy picks the largest logit and the lowest id on ties", "[sampler]") {
  Sampler s(plain(0.0f));
  CHECK(s.sample(std::vector<float>{0.1f, 3.0f, -2.0f, 3.0f}) == 1);
  CHECK(argmax(std::vector<float>{-1.0f, -0.5f, -0.5f}) == 1);
}

TEST_CASE("top-k keeps only the k best tokens", "[sampler]") {
  SamplerOptions o = plain(5.0f);  // a high temperature flattens what is left
  o.top_k = 2;
  Sampler s(o);
  auto h = histogram(s, {1.0f, 4.0f, 3.0f, 0.5f, 2.0f}, 2000);
  CHECK(h.size() == 2);
  CHECK(h.count(1) == 1);
  CHECK(h.count(2) == 1);
}

TEST_CASE("top-p keeps the smallest set reaching p", "[sampler]") {
  SamplerOptions o = plain(1.0f);
  o.top_p = 0.5f;
  Sampler s(o);
  // Probabilities ~ 0.64, 0.24, 0.09, 0.03: the first token alone reaches 0.5.
  auto h = histogram(s, {3.0f, 2.0f, 1.0f, 0.0f}, 500);
  CHECK(h.size() == 1);
  CHECK(h.count(0) == 1);
}

TEST_CASE("min-p drops tokens far below the best", "[sampler]") {
  SamplerOptions o = plain(1.0f);
  o.min_p = 0.2f;
  Sampler s(o);
  // p ~ 0.47, 0.47, 0.06: the third is below 0.2 × 0.47.
  auto h = histogram(s, {2.0f, 2.0f, 0.0f}, 2000);
  CHECK(h.count(2) == 0);
  CHECK(h[0] > 800);
  CHECK(h[1] > 800);
}

TEST_CASE("temperature sampling follows the softmax distribution", "[sampler]") {
  Sampler s(plain(1.0f));
  auto h = histogram(s, {std::log(0.7f), std::log(0.2f), std::log(0.1f)}, 20000);
  CHECK(std::abs(h[0] / 20000.0 - 0.7) < 0.02);
  CHECK(std::abs(h[1] / 20000.0 - 0.2) < 0.02);
  CHECK(std::abs(h[2] / 20000.0 - 0.1) < 0.02);
}

TEST_CASE("the repetition penalty demotes recent tokens", "[sampler]") {
  SamplerOptions o = plain(0.0f);
  o.repeat_penalty = 2.0f;
  Sampler s(o);
  std::vector<float> logits{2.0f, 1.5f, -1.0f};
  CHECK(s.sample(logits) == 0);
  s.accept(0);  // 2.0 / 2 = 1.0 < 1.5
  CHECK(s.sample(logits) == 1);
  s.accept(1);  // 1.5 / 2 = 0.75 < 1.0
  CHECK(s.sample(logits) == 0);
}

TEST_CASE("the same seed gives the same tokens", "[sampler]") {
  SamplerOptions o;  // defaults: every filter on
  o.seed = 1234;
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(0.37f * i) * 3;
  auto run = [&](uint64_t seed) {
    o.seed = seed;
    Sampler s(o);
    std::vector<int32_t> out;
    for (int i = 0; i < 50; ++i) out.push_back(s.sample(logits)), s.accept(out.back());
    return out;
  };
  CHECK(run(1234) == run(1234));
  CHECK(run(1234) != run(99));
}

namespace {

// The sampler written plainly: every token a candidate, bias and penalties, the mask's tokens kept,
// then greedy or a partial sort and the draw. Sampler must give the same token for the same state.
class ReferenceSampler {
 public:
  explicit ReferenceSampler(const SamplerOptions& o) : o_(o), rng_(o.seed) {}
  void accept(int32_t t) {
    recent_.push_back(t);
    while (recent_.size() > size_t(std::max(o_.repeat_last_n, 0))) recent_.pop_front();
  }
  int32_t sample(const std::vector<float>& logits, const std::vector<uint64_t>* allowed) {
    std::vector<C> c;
    for (size_t i = 0; i < logits.size(); ++i) c.push_back({int32_t(i), logits[i], 0});
    for (auto [id, bias] : o_.logit_bias) c[size_t(id)].logit += bias;
    if (o_.repeat_penalty != 1.0f || o_.presence_penalty != 0 || o_.frequency_penalty != 0) {
      std::unordered_map<int32_t, int> seen;
      for (int32_t id : recent_) ++seen[id];
      for (auto [id, count] : seen) {
        float& l = c[size_t(id)].logit;
        l = l > 0 ? l / o_.repeat_penalty : l * o_.repeat_penalty;
        l -= o_.presence_penalty + float(count) * o_.frequency_penalty;
      }
    }
    if (allowed)
      std::erase_if(
          c, [&](const C& x) { return !((*allowed)[size_t(x.id) >> 6] >> (x.id & 63) & 1) || x.logit == -INFINITY; });
    if (c.empty()) return -1;
    auto better = [](const C& a, const C& b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); };
    if (o_.temperature == 0) return std::min_element(c.begin(), c.end(), better)->id;
    size_t k = o_.top_k > 0 ? std::min<size_t>(o_.top_k, c.size()) : c.size();
    std::partial_sort(c.begin(), c.begin() + ptrdiff_t(k), c.end(), better);
    c.resize(k);
    auto softmax = [&](float temp) {
      double max = c.front().logit, sum = 0;
      for (C& x : c) sum += (x.p = float(std::exp((x.logit - max) / temp)));
      for (C& x : c) x.p = float(x.p / sum);
    };
    softmax(1.0f);
    double cumulative = 0;
    size_t keep = 0;
    while (keep < c.size() && (keep == 0 || cumulative < o_.top_p)) cumulative += c[keep++].p;
    float floor = o_.min_p * c.front().p;
    while (keep > 1 && c[keep - 1].p < floor) --keep;
    c.resize(keep);
    softmax(o_.temperature);
    double r = double(rng_() >> 11) * 0x1.0p-53, acc = 0;
    for (const C& x : c)
      if ((acc += x.p) > r) return x.id;
    return c.back().id;
  }

 private:
  struct C {
    int32_t id;
    float logit, p;
  };
  SamplerOptions o_;
  std::mt19937_64 rng_;
  std::deque<int32_t> recent_;
};

struct BitsFilter final : TokenFilter {
  std::shared_ptr<const std::vector<uint64_t>> bits;
  bool allows(int32_t t) override { return (*bits)[size_t(t) >> 6] >> (t & 63) & 1; }
  bool mask_cached() override { return false; }
  std::shared_ptr<const std::vector<uint64_t>> mask() override { return bits; }
};

}  // namespace

TEST_CASE("the sampler draws what a plain reference draws on random logits, options and masks", "[sampler]") {
  std::mt19937_64 rng(2026);
  auto uniform = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  int cases = 0;
  for (size_t vocab : {1, 7, 64, 65, 3001}) {
    for (int trial = 0; trial < 24; ++trial) {
      SamplerOptions o;
      o.temperature = trial % 4 == 0 ? 0.0f : float(uniform(0.2, 2.0));
      o.top_k = std::array{0, 1, 5, 40, 200}[rng() % 5];
      o.top_p = trial % 3 == 0 ? 1.0f : float(uniform(0.5, 1.0));
      o.min_p = trial % 2 == 0 ? 0.0f : float(uniform(0.0, 0.2));
      o.repeat_penalty = trial % 5 == 0 ? 1.0f : float(uniform(1.0, 1.5));
      o.presence_penalty = trial % 7 == 0 ? 0.5f : 0.0f;
      o.frequency_penalty = trial % 6 == 0 ? 0.25f : 0.0f;
      o.logit_bias = {{int32_t(rng() % vocab), -INFINITY}, {int32_t(rng() % vocab), 2.5f}};
      o.seed = rng();
      int masking = trial % 3;  // none, the mask, the filter
      double share = std::array{1.0, 0.5, 0.02}[rng() % 3];
      Sampler s(o);
      ReferenceSampler ref(o);
      for (int step = 0; step < 12; ++step) {
        std::vector<float> logits(vocab);
        for (float& l : logits) l = float(std::round(uniform(-8, 8) * 2) / 2);  // ties
        if (vocab > 3) logits[rng() % vocab] = -INFINITY;
        auto bits = std::make_shared<std::vector<uint64_t>>((vocab + 63) / 64);
        for (size_t i = 0; i < vocab; ++i)
          if (uniform(0, 1) < share) (*bits)[i >> 6] |= uint64_t(1) << (i & 63);
        int32_t want = ref.sample(logits, masking ? bits.get() : nullptr);
        INFO("vocab " << vocab << " trial " << trial << " step " << step << " masking " << masking);
        if (want < 0) {  // the mask leaves nothing finite
          CHECK_THROWS_WITH(masking == 1 ? s.sample(logits, bits.get()) : [&] {
            BitsFilter f;
            f.bits = bits;
            return s.sample(logits, f);
          }(), Catch::Contains("the grammar allows no token"));
          break;
        }
        BitsFilter f;
        f.bits = bits;
        int32_t got = masking == 0   ? s.sample(logits)
                      : masking == 1 ? s.sample(logits, bits.get())
                                     : s.sample(logits, f);
        REQUIRE(got == want);
        s.accept(got), ref.accept(got);
        ++cases;
      }
    }
  }
  CHECK(cases > 800);
}
