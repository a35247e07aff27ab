// Every family of the fixture registry (tests/engine_fixtures.h) on the GPU vs the CPU reference
// model: logits at every position (f32 KV cache, NMSE <= 1e-5) and 32 greedy tokens, and in the
// other tensor layouts llama.cpp reads the logits of a prefill and a decode step; chunked
// prefill and experts spread over many weight buffers for the mixtures of experts; the bring-up
// check that names the first diverging activation. Which families exist is the registry's
// business: a test here never lists them.
#include <fmt/format.h>

#include <algorithm>

#include "arch/architecture.h"
#include "catch.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "gguf/reader.h"
#include "harness.h"
#include "reference/model.h"

using namespace vkllm;

namespace {

using test::best;
using test::load;
using test::Loaded;
using test::some_tokens;

void check_family(const test::EngineFixture& f) {
  Loaded l = load(f.spec, {.kv_type = DType::F32});
  ref::Model reference(l.file, l.engine->config());
  auto tokens = some_tokens(29, f.spec.vocab_size, 1);
  test::check_nmse(l.engine->eval_all(tokens), reference.forward(tokens), 1e-5, "logits " + f.name);

  test::Greedy g = test::greedy_both(l, reference, f.spec.vocab_size, 32);
  INFO(f.name);
  INFO(g.describe());
  CHECK(g.agree());
}

// The registry's fixtures with experts (moe) or without.
std::vector<test::EngineFixture> fixtures(bool moe) {
  std::vector<test::EngineFixture> out;
  for (const test::EngineFixture& f : test::family_fixtures(DType::F16))
    if ((f.spec.n_experts > 0) == moe) out.push_back(f);
  return out;
}

}  // namespace

TEST_CASE("every registered architecture has a fixture in the registry", "[families]") {
  std::vector<test::EngineFixture> all = test::family_fixtures(DType::F16);
  for (const Architecture* a : architectures()) {
    INFO(a->name);
    CHECK(std::any_of(all.begin(), all.end(), [&](const test::EngineFixture& f) { return f.spec.arch == a->name; }));
  }
}

TEST_CASE("dense families match the reference", "[families]") {
  for (const test::EngineFixture& f : fixtures(false)) check_family(f);
}

TEST_CASE("mixture-of-experts families match the reference", "[families][moe]") {
  for (const test::EngineFixture& f : fixtures(true)) check_family(f);
}

// The same families in the other tensor layouts llama.cpp reads (fused QKV and expert gate/up,
// optional biases; test::layout_fixtures): the logits, in two steps (a prefill, then decode of one
// token), against the reference, which reads each layout its own way.
TEST_CASE("families in their other tensor layouts match the reference", "[families][layouts]") {
  for (const test::EngineFixture& f : test::layout_fixtures(DType::F16)) {
    Loaded l = load(f.spec, {.kv_type = DType::F32});
    ref::Model reference(l.file, l.engine->config());
    auto tokens = some_tokens(13, f.spec.vocab_size, 4);
    std::vector<float> want = reference.forward(tokens);
    l.engine->eval(std::span(tokens).first(12));
    std::span<const float> last = l.engine->eval(std::span(tokens).last(1));
    test::check_nmse(std::vector<float>(last.begin(), last.end()),
                     std::vector<float>(want.end() - f.spec.vocab_size, want.end()), 1e-5, "last logits " + f.name);
  }
}

TEST_CASE("MoE prefill in chunks and experts over many weight buffers change nothing", "[families][moe]") {
  for (const test::EngineFixture& f : fixtures(true)) {
    auto tokens = some_tokens(23, f.spec.vocab_size, 3);
    Loaded whole = load(f.spec), chunked = load(f.spec, {.batch = 6}),
           spread = load(f.spec, {.max_weight_buffer = 16 << 10});
    std::vector<float> want = whole.engine->eval_all(tokens);
    // A hybrid's linear layers run the chunked delta rule over other chunks, and a sliding window
    // starts a chunk's key tiles elsewhere (gpt-oss, gemma4): f32 rounding moves, and routers
    // that weigh experts by a softmax over wide logits carry it on (gemma4-moe: 4.8e-10).
    ModelConfig c = fixture_config(f.spec);
    double bound = c.sliding_window ? 1e-9 : c.hybrid() ? 1e-10 : 1e-12;
    test::check_nmse(chunked.engine->eval_all(tokens), want, test::batching_bound({6, 5, 23}, bound),
                     "chunks of 6 vs one batch, " + f.name);
    CHECK(spread.engine->memory().weight_buffers > 8);
    test::check_nmse(spread.engine->eval_all(tokens), want, 0.0, "16 KiB weight buffers, " + f.name);
  }
}

TEST_CASE("the check names the first activation that diverges", "[families][check]") {
  test::EngineFixture f = test::family_fixture("qwen3moe", DType::F16);
  std::vector<CheckReport> reports;
  Loaded l = load(
      f.spec, {.kv_type = DType::F32, .check = true, .on_check = [&](const CheckReport& r) { reports.push_back(r); }});
  auto tokens = some_tokens(9, f.spec.vocab_size, 4);
  l.engine->eval(tokens);
  l.engine->eval(std::span(tokens).first(1));  // a decode step: rows at position 9
  REQUIRE(reports.size() == 2);
  for (const CheckReport& r : reports) {
    INFO(r.summary());
    CHECK(r.first_bad < 0);
    // inp_embd; attn_norm ffn_inp ffn_moe_logits ffn_moe_weights l_out; logits (attn_out is the
    // output projection's product, which its epilogue adds to the residual without storing it)
    CHECK(r.rows.size() == 1 + 2 * 5 + 1);
  }
  // The same comparison with one GPU activation spoiled: it is the one named.
  ref::Model reference(l.file, l.engine->config());
  std::vector<Tap> taps;
  Loaded plain = load(f.spec, {.kv_type = DType::F32});
  std::span<const float> logits = plain.engine->transformer().forward_tapped(tokens, 0, OutputMode::Last, taps);
  for (Tap& t : taps)
    if (t.layer == 1 && t.name == "ffn_inp") t.values[3] += 1.0f;
  CheckReport r = compare_with_reference(reference, tokens, 0, taps, logits, 2);
  CHECK(r.first_bad >= 0);
  CHECK_THAT(r.summary(), Catch::Contains("first at layer 1 ffn_inp"));
}
