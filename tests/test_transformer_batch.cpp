// Several sequences in one forward (continuous batching) against each sequence run alone: a
// schedule starts three sequences at different steps, prefills them in chunks alongside the
// others' decode tokens and decodes them greedily. Every sequence's logits at every sampled
// position must match the same sequence run alone (GPU, NMSE <= 1e-5) and the reference model's
// batched forward (NMSE <= 1e-4, the whole-model bound), and the greedy tokens must be the same;
// with f16 K/V on every fixture shape and every registered family, and with q8_0 (GQA, gemma2/3) and
// q4_0 (MLA) caches.
#include <fmt/format.h>

#include "catch.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "gguf/reader.h"
#include "harness.h"
#include "reference/model.h"

using namespace vkllm;

namespace {

struct Plan {
  uint32_t slot, start;  // joins at this step
  std::vector<int32_t> prompt;
  uint32_t chunk;  // prompt tokens per step
};

struct BatchRun {
  std::vector<std::vector<int32_t>> tokens;  // prompt + greedy tokens per sequence
  std::vector<std::vector<float>> logits;    // logits at each sampled position, concatenated
};

using test::best;
using test::some_tokens;

// Runs the plans together for `steps` steps. forward(chunks) returns the logits of each chunk's
// last token, (chunks, vocab).
template <class Forward>
BatchRun run_batched(const std::vector<Plan>& plans, uint32_t steps, uint32_t vocab, Forward forward) {
  BatchRun r{std::vector<std::vector<int32_t>>(plans.size()), std::vector<std::vector<float>>(plans.size())};
  std::vector<size_t> done(plans.size());  // tokens evaluated so far
  for (size_t i = 0; i < plans.size(); ++i) r.tokens[i] = plans[i].prompt;
  for (uint32_t step = 0; step < steps; ++step) {
    std::vector<size_t> who;
    std::vector<std::pair<size_t, size_t>> spans;  // (first, count) in r.tokens[who]
    for (size_t i = 0; i < plans.size(); ++i) {
      if (step < plans[i].start) continue;
      size_t pending = r.tokens[i].size() - done[i];
      size_t n = done[i] < plans[i].prompt.size() ? std::min<size_t>(pending, plans[i].chunk) : pending;
      who.push_back(i), spans.emplace_back(done[i], n);
    }
    std::vector<float> logits = forward(who, spans, r.tokens);
    for (size_t j = 0; j < who.size(); ++j) {
      size_t i = who[j];
      done[i] += spans[j].second;
      if (done[i] < r.tokens[i].size()) continue;  // still reading its prompt
      std::span<const float> row(&logits[j * vocab], vocab);
      r.logits[i].insert(r.logits[i].end(), row.begin(), row.end());
      r.tokens[i].push_back(best(row));
    }
  }
  return r;
}

// Three sequences scheduled together (KV cache of kv_type) against each alone and the reference.
void check_batched_equals_alone(const test::EngineFixture& f, DType kv_type) {
  GgufFile file = GgufFile::parse(make_fixture_model(f.spec), "fixture");
  uint32_t vocab = f.spec.vocab_size;
  std::vector<Plan> plans = {
      {1, 0, some_tokens(9, vocab, 1), 9}, {0, 1, some_tokens(6, vocab, 2), 6}, {2, 1, some_tokens(11, vocab, 3), 4}};
  const uint32_t steps = 10;

  Engine batched(test::gpu(), file, {.slots = 3, .kv_type = kv_type});
  BatchRun gpu = run_batched(plans, steps, vocab, [&](auto& who, auto& spans, auto& tokens) {
    std::vector<SeqChunk> chunks;
    for (size_t j = 0; j < who.size(); ++j)
      chunks.push_back({.slot = plans[who[j]].slot,
                        .pos0 = uint32_t(spans[j].first),
                        .tokens = std::span(tokens[who[j]]).subspan(spans[j].first, spans[j].second)});
    auto l = batched.step(chunks);
    return std::vector<float>(l.begin(), l.end());
  });

  ref::Model reference(file, batched.config(), kv_type);
  std::vector<ref::KvState> states(plans.size());
  BatchRun cpu = run_batched(plans, steps, vocab, [&](auto& who, auto& spans, auto& tokens) {
    std::vector<ref::Chunk> chunks;
    for (size_t j = 0; j < who.size(); ++j)
      chunks.push_back({&states[who[j]], std::span(tokens[who[j]]).subspan(spans[j].first, spans[j].second)});
    std::vector<float> all = reference.forward(chunks), last;
    size_t row = 0;
    for (auto& [first, n] : spans) row += n, last.insert(last.end(), &all[(row - 1) * vocab], &all[row * vocab]);
    return last;
  });

  Engine alone(test::gpu(), file, {.kv_type = kv_type});
  for (size_t i = 0; i < plans.size(); ++i) {
    INFO(f.name << ", sequence " << i);
    // The same sequence alone: its prompt, then its own greedy tokens one at a time.
    alone.reset();
    std::vector<int32_t> seq = plans[i].prompt;
    std::vector<float> logits;
    std::span<const float> l = alone.eval(seq);
    while (logits.size() < gpu.logits[i].size()) {
      logits.insert(logits.end(), l.begin(), l.end());
      seq.push_back(best(l));
      l = alone.eval(std::span(seq).last(1));
    }
    test::check_nmse(gpu.logits[i], logits, 1e-5, fmt::format("{} seq {}: batched vs alone", f.name, i));
    test::check_nmse(gpu.logits[i], cpu.logits[i], 1e-4, fmt::format("{} seq {}: batched vs reference", f.name, i));
    CHECK(gpu.tokens[i] == seq);
    CHECK(gpu.tokens[i] == cpu.tokens[i]);
  }
}

}  // namespace

TEST_CASE("every sequence of a mixed batch gets the logits and greedy tokens it gets alone", "[transformer][batch]") {
  for (const test::EngineFixture& f : test::engine_fixtures(DType::Q8_0)) check_batched_equals_alone(f, DType::F16);
}

// Issue 16's families: MoE routing is per token, so experts see the batch's tokens as any other;
// sliding windows, soft-caps and local rope bases hold per sequence, over its own slot.
TEST_CASE("a mixed batch of every registered family matches each sequence alone", "[transformer][batch][families]") {
  for (const test::EngineFixture& f : test::family_fixtures(DType::Q8_0)) check_batched_equals_alone(f, DType::F16);
}

TEST_CASE("a mixed batch over a quantised KV cache (q8_0, q4_0) matches each sequence alone", "[transformer][batch]") {
  std::vector<test::EngineFixture> fixtures = test::engine_fixtures(DType::Q8_0);
  for (const test::EngineFixture& f : fixtures)
    if (f.name.rfind("gqa ", 0) == 0) check_batched_equals_alone(f, DType::Q8_0);
  for (const test::EngineFixture& f : fixtures)
    if (f.name.rfind("mla ", 0) == 0) check_batched_equals_alone(f, DType::Q4_0);
  for (const test::EngineFixture& f : test::family_fixtures(DType::Q8_0))  // window, soft-cap, local rope
    if (f.name.rfind("gemma", 0) == 0) check_batched_equals_alone(f, DType::Q8_0);
}

TEST_CASE("the reference model's batched forward equals each sequence alone", "[transformer][batch]") {
  test::EngineFixture f = test::engine_fixtures(DType::F16)[3];  // MLA: the naive cache of decompressed heads
  GgufFile file = GgufFile::parse(make_fixture_model(f.spec), "fixture");
  ModelConfig config = ModelConfig::from_gguf(file);
  ref::Model model(file, config);
  auto a = some_tokens(7, f.spec.vocab_size, 4), b = some_tokens(5, f.spec.vocab_size, 5);
  ref::KvState sa, sb;
  ref::Chunk first[] = {{&sa, std::span(a).first(4)}};
  model.forward(first);
  ref::Chunk mixed[] = {{&sb, std::span(b)}, {&sa, std::span(a).subspan(4)}};
  std::vector<float> got = model.forward(mixed);
  std::vector<float> want_b = model.forward(b), want_a = model.forward(a);
  size_t v = f.spec.vocab_size;
  std::vector<float> want(want_b.begin(), want_b.end());
  want.insert(want.end(), want_a.end() - 3 * v, want_a.end());
  test::check_nmse(got, want, 1e-12, "reference batch vs alone");
  CHECK(sa.size() == 7);
  CHECK(sb.size() == 5);
}

TEST_CASE("a batch refuses a slot twice or out of range and positions past the context", "[transformer][batch]") {
  test::EngineFixture f = test::engine_fixtures(DType::F16)[0];
  GgufFile file = GgufFile::parse(make_fixture_model(f.spec), "fixture");
  Engine e(test::gpu(), file, {.n_ctx = 16, .slots = 2});
  std::vector<int32_t> t = some_tokens(4, f.spec.vocab_size, 6);
  SeqChunk twice[] = {{0, 0, t}, {0, 4, t}};
  REQUIRE_THROWS_WITH(e.step(twice), Catch::Contains("appears twice"));
  SeqChunk outside[] = {{2, 0, t}};
  REQUIRE_THROWS_WITH(e.step(outside), Catch::Contains("not one of the 2 KV-cache slots"));
  SeqChunk past[] = {{1, 13, t}};
  REQUIRE_THROWS_WITH(e.step(past), Catch::Contains("do not fit the context of 16 tokens"));
}
