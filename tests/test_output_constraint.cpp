// A grammar on a generation: the sampler draws only what the mask allows (greedy and at a
// temperature) and says so when nothing is left, and asking the best candidates one by one gives
// the tokens the whole mask gives; OutputConstraint masks from the first token, or
// lazily from a trigger that may be split over tokens, and gives up when a trigger that must open
// the reply comes after text; log-probabilities are the model's own softmax.
#include <cmath>
#include <random>
#include <set>

#include "engine/logprobs.h"
#include "engine/output_constraint.h"
#include "engine/sampler.h"
#include "error.h"
#include "grammar_walk.h"

using namespace vkllm;
using namespace vkllm::test;

namespace {

std::vector<int32_t> ids(const Tokenizer& tok, const std::vector<std::string>& pieces) {
  std::vector<int32_t> out;
  for (const std::string& p : pieces) {
    std::vector<int32_t> some = tok.encode(p, false, false);
    out.insert(out.end(), some.begin(), some.end());
  }
  return out;
}

}  // namespace

TEST_CASE("sampler: a mask keeps the draw to the allowed tokens", "[output_constraint]") {
  std::vector<float> logits = {5, 1, 4, 3, 2, -1};
  grammar::TokenMask mask = {(1u << 2) | (1u << 4)};
  Sampler greedy(SamplerOptions{.temperature = 0});
  CHECK(greedy.sample(logits, &mask) == 2);
  Sampler hot(SamplerOptions{.temperature = 5, .top_k = 0, .top_p = 1, .min_p = 0, .seed = 3});
  std::set<int32_t> seen;
  for (int i = 0; i < 400; ++i) seen.insert(hot.sample(logits, &mask));
  CHECK(seen == std::set<int32_t>{2, 4});
  grammar::TokenMask none = {0};
  CHECK_THROWS_WITH(greedy.sample(logits, &none), Catch::Contains("the grammar allows no token"));
}

namespace {

// A fixed mask that counts how it is asked: token by token, or whole.
struct CountingFilter final : TokenFilter {
  std::shared_ptr<const std::vector<uint64_t>> bits;
  bool cached = false;
  int asked = 0, masks = 0;
  bool allows(int32_t t) override { return ++asked, grammar::allowed(*bits, t); }
  bool mask_cached() override { return cached; }
  std::shared_ptr<const std::vector<uint64_t>> mask() override { return ++masks, bits; }
};

}  // namespace

TEST_CASE("sampler: the best candidates asked one by one give the whole mask's tokens", "[output_constraint]") {
  std::mt19937_64 rng(11);
  std::normal_distribution<float> noise(0.0f, 2.0f);
  const size_t vocab = 3000;
  struct Case {
    SamplerOptions o;
    double share;    // of the vocabulary allowed
    bool by_tokens;  // expected: the draw needed no mask
  };
  const Case cases[] = {
      {{.temperature = 0}, 0.9, true},
      {{.temperature = 0.8f, .top_k = 40, .seed = 5}, 0.9, true},
      {{.temperature = 1.5f, .top_k = 8, .top_p = 1, .min_p = 0, .seed = 6}, 0.5, true},
      {{.temperature = 0.8f, .top_k = 40, .seed = 5}, 0.01, false},  // too few of the best allowed
      {{.temperature = 0.8f, .top_k = 0, .seed = 5}, 0.9, false},    // top-k off: every allowed token counts
      {{.temperature = 0}, 0.002, false},
  };
  for (const Case& c : cases) {
    Sampler by_mask(c.o), by_filter(c.o);
    int fast = 0;
    for (int step = 0; step < 60; ++step) {
      std::vector<float> logits(vocab);
      for (float& l : logits) l = std::round(noise(rng) * 4) / 4;  // ties, which must break alike
      auto bits = std::make_shared<std::vector<uint64_t>>((vocab + 63) / 64);
      for (size_t i = 0; i < vocab; ++i)
        if (std::uniform_real_distribution<double>(0, 1)(rng) < c.share) (*bits)[i >> 6] |= uint64_t(1) << (i & 63);
      (*bits)[7 >> 6] |= 1u << 7;  // never empty
      logits[9] = -INFINITY;       // banned (logit_bias) yet allowed: never drawn
      (*bits)[0] |= 1u << 9;
      CountingFilter f;
      f.bits = bits;
      int32_t want = by_mask.sample(logits, bits.get());
      CHECK(by_filter.sample(logits, f) == want);
      fast += f.masks == 0;
      by_mask.accept(want), by_filter.accept(want);
    }
    INFO("temperature " << c.o.temperature << " top_k " << c.o.top_k << " share " << c.share);
    CHECK((fast > 50) == c.by_tokens);
  }
  // A cached mask is used as it is; a mask with nothing left says so either way.
  CountingFilter cached;
  cached.bits = std::make_shared<std::vector<uint64_t>>(1, uint64_t(1) << 3);
  cached.cached = true;
  Sampler greedy(SamplerOptions{.temperature = 0});
  CHECK(greedy.sample(std::vector<float>{5, 1, 4, 3}, cached) == 3);
  CHECK((cached.asked == 0 && cached.masks == 1));
  CountingFilter none;
  none.bits = std::make_shared<std::vector<uint64_t>>(1, 0);
  CHECK_THROWS_WITH(greedy.sample(std::vector<float>{5, 1, 4, 3}, none),
                    Catch::Contains("the grammar allows no token"));
}

TEST_CASE("output constraint: masks from the start, and a token the grammar refuses is an error",
          "[output_constraint]") {
  const GrammarVocab& v = grammar_vocab("qwen2");
  ConstraintSpec spec{.automaton = compile(R"(root ::= "yes" | "no")", v)};
  OutputConstraint c(spec, *v.tok);
  REQUIRE(c.active());
  std::shared_ptr<const grammar::TokenMask> m = c.mask();
  REQUIRE(m);
  int32_t yes = ids(*v.tok, {"yes"})[0], maybe = ids(*v.tok, {"maybe"})[0];
  CHECK(grammar::allowed(*m, yes));
  CHECK_FALSE(grammar::allowed(*m, maybe));
  CHECK_THROWS_WITH(c.accept(maybe), Catch::Contains("breaks the grammar"));
  c.accept(yes);
  for (int32_t eog : v.tok->end_of_generation()) CHECK(grammar::allowed(*c.mask(), eog));
}

TEST_CASE("output constraint: a lazy grammar starts at its trigger, even one split over tokens",
          "[output_constraint]") {
  const GrammarVocab& v = grammar_vocab("qwen2");
  const Tokenizer& tok = *v.tok;
  auto automaton = compile(R"(root ::= "<call>" [0-9]+ "</call>")", v);
  {
    OutputConstraint c({.automaton = automaton, .triggers = {"<call>"}}, tok);
    // " <" holds the trigger's first byte after a space: the grammar is fed the rest of that token
    for (int32_t t : ids(tok, {"Let", " me", " call", " <", "call", ">"})) {
      CHECK(c.mask() == nullptr);  // free text until the trigger is complete
      c.accept(t);
    }
    REQUIRE(c.active());
    std::shared_ptr<const grammar::TokenMask> m = c.mask();
    CHECK(grammar::allowed(*m, ids(tok, {"4"})[0]));
    CHECK_FALSE(grammar::allowed(*m, ids(tok, {"x"})[0]));
    c.accept(ids(tok, {"4"})[0]);
    CHECK_FALSE(grammar::allowed(*c.mask(), ids(tok, {" "})[0]));
  }
  {  // a trigger at a token's start, and the grammar's first digit in the same step
    OutputConstraint c({.automaton = automaton, .triggers = {"<call>"}}, tok);
    for (int32_t t : ids(tok, {"ok", "<", "call", ">1"})) c.accept(t);
    REQUIRE(c.active());
    CHECK(grammar::allowed(*c.mask(), ids(tok, {"2"})[0]));
  }
  {  // a trigger that must open the reply: text before it means the reply is text
    OutputConstraint c({.automaton = automaton, .triggers = {"<call>"}, .trigger_at_start = true}, tok);
    for (int32_t t : ids(tok, {"Sure", " <", "call", ">"})) c.accept(t);
    CHECK_FALSE(c.active());
    CHECK(c.failed_to_start());
    OutputConstraint after_think({.automaton = automaton, .triggers = {"<call>"}, .trigger_at_start = true}, tok);
    for (int32_t t : ids(tok, {"<think>", "hm", "</think>", "\n", "<", "call", ">"})) after_think.accept(t);
    CHECK(after_think.active());
  }
}

TEST_CASE("logprobs: the chosen token's log-softmax and the best alternatives", "[output_constraint]") {
  std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, -4.0f};
  TokenLogprob lp = token_logprob(logits, 2, 3);
  double z = 0;
  for (float l : logits) z += std::exp(double(l));
  CHECK(lp.token == 2);
  CHECK(std::abs(lp.logprob - (2.0 - std::log(z))) < 1e-12);
  REQUIRE(lp.top.size() == 3);
  CHECK(lp.top[0].first == 1);  // ties: the lower id first
  CHECK(lp.top[1].first == 3);
  CHECK(lp.top[2].first == 2);
  CHECK(std::abs(lp.top[2].second - lp.logprob) < 1e-15);
  CHECK(token_logprob(logits, 0, 0).top.empty());
  CHECK(token_logprob(logits, 0, 100).top.size() == logits.size());
}
