// Issue 28's attention layouts beyond what every family gets (test_families, the batch tests, the
// llama.cpp agreement): Gemma 4's per-layer head sizes and shared-KV layers in the cache's exact
// bytes, `vkllm info` naming each family's layout (sliding layers, head sizes, shared KV and its
// saving, sinks, NoPE layers, the attention temperature), and the sinks' share per head in
// `vkllm attention`.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "harness.h"

using namespace vkllm;

namespace {

test::CliResult info_of(const std::string& family, const std::string& flags = "") {
  test::TempFile file(family + "_info");
  file.write(make_fixture_model(test::family_fixture(family, DType::F16).spec));
  return test::run_vkllm(fmt::format("info -m {} {}", file.path, flags));
}

}  // namespace

// The gemma4 fixture: layers 0 and 2 slide (2 KV heads of 32), 1 and 3 are global (1 KV head of
// 64); 2 and 3 share the caches of 0 and 1.
TEST_CASE("gemma4's cache holds per-layer rows and nothing for its shared layers", "[layout]") {
  test::EngineFixture f = test::family_fixture("gemma4", DType::F16);
  test::Loaded l = test::load(f.spec, {.n_ctx = 32, .slots = 2});
  const ModelConfig& c = l.engine->config();
  CHECK(c.kv_layer(2) == 0);
  CHECK(c.kv_layer(3) == 1);
  for (uint32_t layer = 0; layer < 4; ++layer) CHECK(c.has_kv(layer) == (layer < 2));
  CHECK(c.attention_of(0).head_dim == 32);
  CHECK(c.attention_of(3).head_dim == 64);
  CHECK(c.attention_of(3).n_kv_heads == 1);
  uint64_t sliding = 2 * (32 + 32) * 2, global = 1 * (64 + 64) * 2;  // f16
  CHECK(c.kv_bytes_per_token(DType::F16) == sliding + global);
  CHECK(c.shared_kv_saving_per_token(DType::F16) == sliding + global);
  CHECK(l.engine->kv_cache().bytes_per_token() == c.kv_bytes_per_token(DType::F16));
  CHECK(l.engine->kv_cache().k(3).buffer == l.engine->kv_cache().k(1).buffer);
  CHECK(l.engine->kv_cache().k(2).buffer == l.engine->kv_cache().k(0).buffer);
}

TEST_CASE("vkllm info shows Gemma 4's sliding and global heads and its shared KV layers", "[layout][cli]") {
  test::CliResult r = info_of("gemma4");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("sliding window 8 on 2 of 4 layers"));
  CHECK_THAT(r.out, Catch::Contains("sliding layers: heads 4 x 32, 2 KV; global layers: 4 x 64, 1 KV"));
  CHECK_THAT(r.out,
             Catch::Contains("layers 2, 3 reuse earlier layers' KV cache: 512 B per token saved (50% of 1.0 KiB)"));
  CHECK_THAT(r.out, Catch::Contains("per-layer embeddings of 16 per layer"));
  CHECK_THAT(r.out, Catch::Contains("kv cache    512 bytes per token in f16"));
  test::CliResult js = info_of("gemma4", "--json");
  REQUIRE(js.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(js.out);
  CHECK(j["kv_bytes_per_token"] == 512);
  CHECK(j["kv_shared_saving_bytes_per_token"] == 512);
  REQUIRE(j["layers"].size() == 4);
  CHECK(j["layers"][1]["attention"] == "global");
  CHECK(j["layers"][1]["head_dim"] == 64);
  CHECK(j["layers"][2]["attention"] == "sliding");
  CHECK(j["layers"][2]["kv_layer"] == 0);
  CHECK(j["layers"][3]["kv_layer"] == 1);
  CHECK(j["layers"][3]["kv_bytes_per_token"] == 0);
}

TEST_CASE("vkllm info names gpt-oss's sinks, Mistral 3's temperature and SmolLM3's NoPE layers", "[layout][cli]") {
  test::CliResult gpt = info_of("gpt-oss");
  INFO(gpt.err);
  REQUIRE(gpt.exit_code == 0);
  for (const char* s : {"attention sinks (one logit per head)", "attention output bias", "qkv bias",
                        "sliding window 8 on 2 of 3 layers", "clamped SwiGLU (alpha 1.702, limit 7, up + 1)",
                        "2 of 8 per token by softmax of the chosen"})
    CHECK_THAT(gpt.out, Catch::Contains(s));
  test::CliResult mistral = info_of("mistral3");
  REQUIRE(mistral.exit_code == 0);
  CHECK_THAT(mistral.out, Catch::Contains("attention temperature 1 + 0.1·ln(floor(pos / 8) + 1)"));
  test::CliResult smol = info_of("smollm3");
  REQUIRE(smol.exit_code == 0);
  CHECK_THAT(smol.out, Catch::Contains("no rope in layers 3"));
}

// Each row of a head with a sink sums to 1 minus what the sink takes; the report gives the mean.
TEST_CASE("vkllm attention reports each head's sink share on gpt-oss", "[layout][cli][sinks]") {
  test::TempFile file("gpt_oss_attention");
  file.write(make_fixture_model(test::family_fixture("gpt-oss", DType::F16).spec));
  test::CliResult r =
      test::run_vkllm(fmt::format("attention -m {} --tokens 5,9,13,17,21,25 --layer 1 --json", file.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["sink_share"].size() == 4);
  for (size_t h = 0; h < 4; ++h) {
    double mean = 0;
    for (size_t q = 0; q < 6; ++q) {
      double sum = 0;
      for (size_t k = 0; k <= q; ++k) sum += j["heads"][h][q][k].get<double>();
      CHECK(sum < 1.0);
      mean += 1 - sum;
    }
    CHECK(j["sink_share"][h].get<double>() == Approx(mean / 6).margin(1e-5));
  }
  test::CliResult text = test::run_vkllm(fmt::format("attention -m {} --tokens 5,9,13 --layer 0", file.path));
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("% on average)"));
}
