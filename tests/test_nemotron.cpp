// The Mamba-2 hybrids (nemotron_h, nemotron_h_moe) beyond what every family gets (test_families,
// the batch tests, the llama.cpp agreement) and what test_hybrid checks of every hybrid (prefill in
// chunks, in one batch and token by token; checkpoints; serve): K/V only in attention blocks and the
// exact state; `vkllm info` shows each block's kind and the constant state per sequence.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "harness.h"

using namespace vkllm;

namespace {

test::EngineFixture nemotron(const std::string& name, DType type = DType::F16) {
  return test::family_fixture(name, type);
}

// Per Mamba-2 block of the fixtures: conv (4 - 1) x (128 + 2·2·16) and 8 heads x 16 x 16 floats.
constexpr uint64_t kMambaBytes = 4 * (3 * 192 + 8 * 16 * 16);

}  // namespace

TEST_CASE("a Mamba-2 hybrid keeps K/V only for attention blocks and its exact state", "[nemotron]") {
  test::EngineFixture f = nemotron("nemotron_h_moe");
  test::Loaded l = test::load(f.spec, {.n_ctx = 64, .slots = 2});
  const ModelConfig& c = l.engine->config();
  CHECK(attention_layers(c) == "2");  // M E * E M
  CHECK(c.n_recurrent_layers() == 2);
  CHECK(c.recurrent_bytes_per_sequence() == 2 * kMambaBytes);
  REQUIRE(l.engine->recurrent_cache());
  CHECK(l.engine->recurrent_cache()->bytes_per_sequence() == 2 * kMambaBytes);
  CHECK(l.engine->kv_cache().bytes_per_token() == c.kv_bytes_per_token(DType::F16));
  CHECK_THROWS_WITH(l.engine->kv_cache().k(1), Catch::Contains("layer 1 has no KV cache (it is an FFN-only block)"));
  CHECK_THROWS_WITH(l.engine->attention_probabilities(test::some_tokens(4, f.spec.vocab_size, 1), 0),
                    "layer 0 is a Mamba-2 state-space mixer, which has no attention map (layers with one: 2)");
}

TEST_CASE("vkllm info shows a Mamba-2 hybrid's block kinds and its constant state per sequence", "[nemotron][cli]") {
  test::TempFile file("nemotron_info");
  file.write(make_fixture_model(nemotron("nemotron_h").spec));
  test::CliResult r = test::run_vkllm(fmt::format("info -m {}", file.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("mixers      0 mamba2, 1 ffn, 2 mamba2, 3 attention, 4 ffn, 5 mamba2\n"));
  CHECK_THAT(r.out, Catch::Contains("(f32 conv and recurrent state of 3 layers)"));
  nlohmann::json j = test::info_json(file.path);
  CHECK(j["recurrent_bytes_per_sequence"] == 3 * kMambaBytes);
  CHECK(j["layers"][0]["mixer"] == "mamba2");
  CHECK(j["layers"][0]["ffn"] == false);
  CHECK(j["layers"][0]["state_bytes_per_sequence"] == kMambaBytes);
  CHECK(j["layers"][1]["mixer"] == "none");
  CHECK(j["layers"][1]["ffn"] == true);
  CHECK(j["layers"][3]["mixer"] == "attention");
  CHECK(j["layers"][3]["rope"] == false);
  CHECK(j["linear_attention"] == nullptr);
}
