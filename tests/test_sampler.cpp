// Sampler: greedy, each filter's effect, the repetition penalty, and determinism per seed.
#include <map>

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
