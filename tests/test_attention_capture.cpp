// The attention capture of the whole model: Engine::attention_probabilities (GPU, the forward's
// own Q and cached K) against ref::Model::attention_probabilities (the reference forward; MLA in
// its decompressed form) on the MHA, GQA, MQA and MLA fixtures and every family fixture (q/k
// norms, windows, soft-caps, MoE layers below the captured one) with an f16 KV cache: largest
// absolute error <= 1e-3 (docs/decisions.md "Issue 15"), rows that sum to 1, zeros after the
// query; prefill chunks smaller than the sequence; quantised caches; and the normal forward
// unchanged by a capture.
#include <fmt/format.h>

#include <cmath>

#include "arch/architecture.h"
#include "catch.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "error.h"
#include "gguf/reader.h"
#include "harness.h"
#include "reference/model.h"

using namespace vkllm;

namespace {

std::vector<int32_t> some_tokens(size_t n, uint32_t vocab) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = int32_t((i * 2654435761u + 13) % vocab);
  return t;
}

// Every row a distribution over keys 0 .. query (with attention sinks, part of one: the sink
// takes the rest); returns the largest deviation from that.
double causal_rows_error(const std::vector<float>& p, size_t heads, size_t n, bool sinks) {
  double worst = 0;
  for (size_t h = 0; h < heads; ++h)
    for (size_t q = 0; q < n; ++q) {
      double sum = 0;
      for (size_t k = 0; k < n; ++k) {
        float v = p[(h * n + q) * n + k];
        if (k > q) worst = std::max(worst, double(std::fabs(v)));
        sum += v;
      }
      worst = std::max(worst, sinks ? std::max(0.0, sum - 1) : std::fabs(sum - 1));
    }
  return worst;
}

// GPU vs reference for one fixture, layer and KV type; returns the largest absolute error.
double capture_error(const test::EngineFixture& f, uint32_t layer, DType kv, size_t n, uint32_t batch) {
  GgufFile file = GgufFile::parse(make_fixture_model(f.spec), "fixture");
  Engine engine(test::gpu(), file, {.batch = batch, .kv_type = kv});
  auto tokens = some_tokens(n, f.spec.vocab_size);
  std::vector<float> got = engine.attention_probabilities(tokens, layer);
  std::vector<float> want = ref::Model(file, engine.config(), kv).attention_probabilities(tokens, layer);
  REQUIRE(got.size() == size_t(engine.config().n_heads) * n * n);
  REQUIRE(want.size() == got.size());
  test::Comparison c = test::compare(got, want);
  std::string what =
      fmt::format("{} layer {} {} KV, {} tokens in chunks of {}", f.name, layer, info(kv).name, n, batch);
  std::printf("attention capture %s: max |diff| %.3e, nmse %.3e\n", what.c_str(), c.max_abs, c.nmse);
  INFO(what);
  CHECK(c.extra_nonfinite == 0);
  CHECK(causal_rows_error(got, engine.config().n_heads, n, engine.config().architecture().recipe.attention.sinks) <
        1e-5);
  return c.max_abs;
}

}  // namespace

TEST_CASE("attention probabilities of the GPU forward match the reference model", "[transformer][probs]") {
  // f16 KV cache: the reference stores K (MLA: the latent row) f16-rounded too.
  for (const test::EngineFixture& f : test::engine_fixtures(DType::Q8_0)) {
    CHECK(capture_error(f, 1, DType::F16, 37, 16) <= 1e-3);  // three chunks, the last of 5
    if (f.name.starts_with("mha")) CHECK(capture_error(f, 0, DType::F16, 1, 16) <= 1e-3);  // one token
  }
}

TEST_CASE("attention probabilities over a q8_0 and a q4_0 KV cache match the reference", "[transformer][probs]") {
  for (const test::EngineFixture& f : test::engine_fixtures(DType::Q8_0)) {
    if (f.name.starts_with("gqa")) CHECK(capture_error(f, 0, DType::Q8_0, 20, 512) <= 1e-3);
    if (f.name.starts_with("mla ")) CHECK(capture_error(f, 1, DType::Q4_0, 20, 512) <= 1e-3);
  }
}

TEST_CASE("an attention capture leaves the forward unchanged and refuses bad requests", "[transformer][probs]") {
  test::EngineFixture f = test::engine_fixtures(DType::Q8_0)[1];  // GQA
  GgufFile file = GgufFile::parse(make_fixture_model(f.spec), "fixture");
  Engine engine(test::gpu(), file, {.n_ctx = 64});
  auto tokens = some_tokens(12, f.spec.vocab_size);
  std::vector<float> before = engine.eval_all(tokens);
  engine.attention_probabilities(tokens, 1);
  CHECK(engine.n_past() == 0);
  std::vector<float> after = engine.eval_all(tokens);
  CHECK(before == after);
  CHECK_THROWS_WITH(engine.attention_probabilities(tokens, 2), Catch::Contains("the model has 2 layers (0 to 1)"));
  CHECK_THROWS_WITH(engine.attention_probabilities({}, 0), Catch::Contains("nothing to evaluate"));
  CHECK_THROWS_WITH(engine.attention_probabilities(some_tokens(65, f.spec.vocab_size), 0),
                    Catch::Contains("65 tokens do not fit the context of 64 tokens"));
  CHECK_THROWS_WITH(engine.attention_probabilities(std::vector<int32_t>{1, 99999}, 0),
                    Catch::Contains("outside the vocabulary"));
}

// Issue 16's families: q/k head norms (qwen3), sliding windows shorter than the sequence and the
// soft-cap (gemma2, gemma3), fused projections (phi3), and MoE blocks below the captured layer.
TEST_CASE("attention probabilities of every family match the reference model", "[transformer][probs][family]") {
  for (const test::EngineFixture& f : test::family_fixtures(DType::Q8_0)) {
    ModelConfig c = fixture_config(f.spec);
    for (uint32_t layer = 0; layer < f.spec.n_layers; ++layer)
      if (c.has_attention(layer)) CHECK(capture_error(f, layer, DType::F16, 21, 8) <= 1e-3);  // maps: attention
  }
}
