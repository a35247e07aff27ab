// The whole model on the GPU vs the CPU reference model, for every attention kind and weight
// type: logits at every position, greedy generation, KV-cache consistency, chunking, limits.
#include <fmt/format.h>

#include <set>

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

}  // namespace

TEST_CASE("GPU logits match the reference model at every position", "[transformer]") {
  for (DType type : {DType::F16, DType::Q8_0, DType::Q4_0})
    for (const test::EngineFixture& f : test::engine_fixtures(type)) {
      Loaded l = load(f.spec);
      auto tokens = some_tokens(37, f.spec.vocab_size, 1);
      std::vector<float> got = l.engine->eval_all(tokens);
      std::vector<float> want = ref::Model(l.file, l.engine->config()).forward(tokens);
      test::check_nmse(got, want, 1e-4, "logits " + f.name);
    }
}

TEST_CASE("GPU logits match the reference on every quantisation mix", "[transformer][mix]") {
  for (const test::MixCase& m : test::mix_cases()) {
    FixtureSpec spec = test::mix_fixture(m.mix);
    Loaded l = load(spec, {.kv_type = DType::F32});
    std::vector<DType> types;
    for (const GgufTensor& t : l.file.tensors())
      if (t.n_dims > 1 && std::find(types.begin(), types.end(), t.type) == types.end()) types.push_back(t.type);
    std::sort(types.begin(), types.end());
    CHECK(types == m.types);
    auto tokens = some_tokens(21, spec.vocab_size, 9);
    std::vector<float> got = l.engine->eval_all(tokens);
    std::vector<float> want = ref::Model(l.file, l.engine->config()).forward(tokens);
    test::check_nmse(got, want, 1e-6, std::string("logits f32 KV, mix ") + m.mix);
  }
}

TEST_CASE("GPU logits match the reference with MXFP4 experts (the MXFP4_MOE mix)", "[transformer][mix][moe]") {
  // qwen2moe's experts are 96 wide: its ffn_down_exps rows are 3 blocks, 51 bytes, so expert rows
  // start at odd bytes. Prefill (matmul_id where tiled) and decode steps (matvec_id).
  for (const char* family : {"qwen3moe", "qwen2moe"}) {
    FixtureSpec spec = test::family_fixture(family, DType::F16).spec;
    spec.mix = "MXFP4_MOE";
    Loaded l = load(spec, {.kv_type = DType::F32});
    std::set<DType> types;
    for (const GgufTensor& t : l.file.tensors())
      if (t.n_dims > 1) types.insert(t.type);
    CHECK(types == std::set<DType>{DType::Q8_0, DType::MXFP4});
    auto tokens = some_tokens(24, spec.vocab_size, 12);
    std::vector<float> got = l.engine->eval_all(std::span(tokens).first(21));
    for (size_t t = 21; t < tokens.size(); ++t) {
      auto step = l.engine->eval(std::span(tokens).subspan(t, 1));
      got.insert(got.end(), step.begin(), step.end());
    }
    std::vector<float> want = ref::Model(l.file, l.engine->config()).forward(tokens);
    test::check_nmse(got, want, 1e-6, fmt::format("logits f32 KV, {} MXFP4_MOE", family));
  }
}

TEST_CASE("GPU logits match the reference with a q8_0 and q4_0 KV cache", "[transformer][kv_quant]") {
  // The reference stores each K/V (MLA: latent) row the same way (ref::round_trip), so only
  // arithmetic differs; every attention kind, the decode path included.
  int i = 0;
  for (const test::EngineFixture& f : test::engine_fixtures(DType::Q8_0))
    for (DType kv : {DType::Q8_0, DType::Q4_0}) {
      if (i++ % 2 && f.name.starts_with("mla-fused")) continue;
      Loaded l = load(f.spec, {.kv_type = kv});
      auto tokens = some_tokens(23, f.spec.vocab_size, 10);
      std::vector<float> got = l.engine->eval_all(std::span(tokens).first(20));
      for (size_t t = 20; t < tokens.size(); ++t) {  // three decode steps (split-K on some profiles)
        auto step = l.engine->eval(std::span(tokens).subspan(t, 1));
        got.insert(got.end(), step.begin(), step.end());
      }
      std::vector<float> want = ref::Model(l.file, l.engine->config(), kv).forward(tokens);
      test::check_nmse(got, want, 1e-6, fmt::format("logits {} KV, {}", info(kv).name, f.name));
    }
}

TEST_CASE("KV cache types against the f32 cache on a GQA and an MLA fixture", "[transformer][kv_quant]") {
  // What storing the cache costs in accuracy (printed; docs/decisions.md quotes it), bounded loosely.
  for (const test::EngineFixture& f : test::engine_fixtures(DType::Q8_0)) {
    if (!f.name.starts_with("gqa") && !f.name.starts_with("mla ")) continue;
    auto tokens = some_tokens(48, f.spec.vocab_size, 11);
    std::vector<float> exact = load(f.spec, {.kv_type = DType::F32}).engine->eval_all(tokens);
    for (auto [kv, bound] : {std::pair{DType::F16, 1e-5}, {DType::Q8_0, 1e-3}, {DType::Q4_0, 3e-2}}) {
      std::vector<float> got = load(f.spec, {.kv_type = kv}).engine->eval_all(tokens);
      test::check_nmse(got, exact, bound, fmt::format("{} KV vs f32 KV, {}", info(kv).name, f.name));
    }
  }
}

TEST_CASE("32 greedy tokens are the same on the GPU and the reference", "[transformer]") {
  for (const test::EngineFixture& f : test::engine_fixtures(DType::Q8_0)) {
    Loaded l = load(f.spec, {.kv_type = DType::F32});
    ref::Model reference(l.file, l.engine->config());
    test::Greedy g = test::greedy_both(l, reference, f.spec.vocab_size, 32);
    INFO(f.name);
    INFO(g.describe());
    CHECK(g.agree());
  }
}

TEST_CASE("prefill then decode equals one prefill and chunking changes nothing", "[transformer]") {
  for (const test::EngineFixture& f : test::engine_fixtures(DType::F16)) {
    auto tokens = some_tokens(40, f.spec.vocab_size, 3);
    Loaded whole = load(f.spec), chunked = load(f.spec, {.batch = 7});
    std::vector<float> want = whole.engine->eval_all(tokens);
    std::vector<float> got = chunked.engine->eval_all(tokens);
    test::check_nmse(got, want, test::batching_bound({7, 5, 40}, 1e-12), "chunks of 7 vs one batch, " + f.name);

    whole.engine->reset();
    whole.engine->eval(std::span(tokens).first(33));
    std::vector<float> stepwise;
    for (size_t i = 33; i < tokens.size(); ++i) {
      auto l = whole.engine->eval(std::span(tokens).subspan(i, 1));
      stepwise.insert(stepwise.end(), l.begin(), l.end());
    }
    std::vector<float> tail(want.end() - 7 * f.spec.vocab_size, want.end());
    test::check_nmse(stepwise, tail, test::batching_bound({33, 1, 40}, 1e-10),
                     "prefill 33 + decode 7 vs prefill 40, " + f.name);
  }
}

TEST_CASE("truncating the sequence lets a chat rewrite its tail", "[transformer]") {
  test::EngineFixture f = test::engine_fixtures(DType::F16)[1];
  Loaded l = load(f.spec);
  auto a = some_tokens(20, f.spec.vocab_size, 4), b = some_tokens(6, f.spec.vocab_size, 5);
  l.engine->eval(a);
  l.engine->truncate(12);
  std::vector<float> got = l.engine->eval_all(b);
  std::vector<int32_t> seq(a.begin(), a.begin() + 12);
  seq.insert(seq.end(), b.begin(), b.end());
  l.engine->reset();
  std::vector<float> all = l.engine->eval_all(seq);
  std::vector<float> want(all.end() - got.size(), all.end());
  test::check_nmse(got, want, test::batching_bound({20, 6, 18}, 1e-10), "truncate to 12 then 6 more");
}

TEST_CASE("the same seed samples the same tokens", "[transformer]") {
  test::EngineFixture f = test::engine_fixtures(DType::Q4_0)[0];
  Loaded l = load(f.spec);
  auto run = [&](uint64_t seed) {
    l.engine->reset();
    Sampler sampler({.temperature = 1.0f, .seed = seed});
    std::vector<int32_t> out;
    generate(*l.engine, sampler, some_tokens(4, f.spec.vocab_size, 6), 24, [&](int32_t t) {
      out.push_back(t);
      return true;
    });
    return out;
  };
  CHECK(run(7) == run(7));
  CHECK(run(7) != run(8));
}

TEST_CASE("a sequence longer than the context is a clear error", "[transformer]") {
  test::EngineFixture f = test::engine_fixtures(DType::F16)[0];
  Loaded l = load(f.spec, {.n_ctx = 16});
  REQUIRE_THROWS_WITH(l.engine->eval(some_tokens(17, f.spec.vocab_size, 7)),
                      Catch::Contains("do not fit the context of 16 tokens"));
  l.engine->eval(some_tokens(16, f.spec.vocab_size, 7));
  int32_t one = 1;
  REQUIRE_THROWS_WITH(l.engine->eval(std::span<const int32_t>(&one, 1)), Catch::Contains("context of 16"));
}

TEST_CASE("a model split across many weight buffers gives the same logits", "[transformer]") {
  test::EngineFixture f = test::engine_fixtures(DType::Q8_0)[1];
  Loaded one = load(f.spec), many = load(f.spec, {.max_weight_buffer = 64 << 10});
  CHECK(one.engine->memory().weight_buffers == 1);
  CHECK(many.engine->memory().weight_buffers > 4);
  auto tokens = some_tokens(9, f.spec.vocab_size, 8);
  test::check_nmse(many.engine->eval_all(tokens), one.engine->eval_all(tokens), 0.0, "64 KiB weight buffers");
}
