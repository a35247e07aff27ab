// LFM2 (lfm2, lfm2moe: gated short convs beside GQA) beyond what every family and every hybrid gets
// (test_families, test_hybrid's prefill and checkpoint cases, the llama.cpp agreement): the KV
// cache only for the attention blocks and a conv state of exactly (L - 1)·dim floats per short
// conv, what `vkllm info` says of it, and the files refused (the server's prefix reuse is
// test_hybrid's).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "harness.h"

using namespace vkllm;

namespace {

test::EngineFixture lfm2(const std::string& name = "lfm2") { return test::family_fixture(name, DType::F16); }

// The registry's lfm2 fixture: dim 128, short convs of 3 taps in blocks 0, 1 and 3, attention
// (2 KV heads of 32) in block 2.
constexpr uint64_t kStatePerSequence = 3ull * (3 - 1) * 128 * 4;

}  // namespace

TEST_CASE("an LFM2 model keeps K/V for its attention blocks and (L - 1)·dim floats per short conv", "[lfm2]") {
  test::EngineFixture f = lfm2();
  test::Loaded l = test::load(f.spec, {.n_ctx = 64, .slots = 2});
  const ModelConfig& c = l.engine->config();
  CHECK(c.mixer(0) == Mixer::ShortConv);
  CHECK(c.mixer(2) == Mixer::Attention);
  CHECK(c.short_conv.kernel == 3);
  CHECK(attention_layers(c) == "2");
  CHECK(c.n_kv_heads == 2);  // head_count_kv is [0, 0, 2, 0]: the attention block's
  CHECK(c.kv_bytes_per_token(DType::F16) == 1ull * 2 * (32 + 32) * 2);
  CHECK(c.recurrent_bytes_per_sequence() == kStatePerSequence);
  REQUIRE(l.engine->recurrent_cache());
  CHECK(l.engine->recurrent_cache()->bytes_per_sequence() == kStatePerSequence);
  CHECK(l.engine->memory().recurrent == 2 * 2 * kStatePerSequence);  // 2 slots, each with its checkpoint
  CHECK_THROWS_WITH(l.engine->kv_cache().k(0), Catch::Contains("layer 0 has no KV cache (it is a gated short "
                                                               "convolution)"));
  CHECK_THROWS_WITH(l.engine->recurrent_cache()->state(0), Catch::Contains("keeps no state beside its conv's"));
}

TEST_CASE("vkllm info shows an LFM2 model's blocks and its constant state per sequence", "[lfm2][cli]") {
  test::TempFile file("lfm2_info");
  file.write(make_fixture_model(lfm2("lfm2moe").spec));
  test::CliResult r = test::run_vkllm(fmt::format("info -m {}", file.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("hybrid: GQA (2 query heads per KV head), gated short convolutions in 3 of 4 "
                                    "layers (conv 3); attention in layers 2"));
  CHECK_THAT(r.out, Catch::Contains("mixers      0-1 shortconv, 2 attention, 3 shortconv\n"));
  CHECK_THAT(r.out, Catch::Contains("linear      constant 3.0 KiB per sequence"));
  nlohmann::json info = test::info_json(file.path);
  CHECK(info["recurrent_bytes_per_sequence"] == kStatePerSequence);
  CHECK(info["layers"][1]["mixer"] == "shortconv");
  CHECK(info["layers"][1]["state_bytes_per_sequence"] == kStatePerSequence / 3);
}

TEST_CASE("LFM2 files vkllm cannot run are refused with one clear line", "[lfm2][cli]") {
  auto refused = [](const std::string& tag, const std::string& key, uint32_t value) {
    GgufFile f = GgufFile::parse(make_fixture_model(lfm2().spec), "lfm2");
    GgufWriter w;
    for (const GgufKv& kv : f.metadata())
      if (kv.key != key) w.add(std::string(kv.key), kv.value);
    w.add(key, value);
    for (const GgufTensor& t : f.tensors())
      w.add_tensor(t.name, t.shape(), t.type, std::vector<std::byte>(t.data.begin(), t.data.end()));
    test::TempFile file(tag);
    w.save(file.path);
    test::CliResult r = test::run_vkllm(fmt::format("logits -m {} --tokens 1,2", file.path));
    CHECK(r.exit_code != 0);
    return r.err;
  };
  CHECK_THAT(refused("lfm2_swa", "lfm2.attention.sliding_window", 64),
             Catch::Contains("attention.sliding_window = 64: LFM2's sliding-window attention (LFM2.5's audio "
                             "tokenizer) is not supported"));
  CHECK_THAT(refused("lfm2_taps", "lfm2.shortconv.l_cache", 9),
             Catch::Contains("shortconv.l_cache = 9 is out of range (2..8)"));
}
