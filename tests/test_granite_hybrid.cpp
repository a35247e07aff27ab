// Granite 4.0-H (granitehybrid: Mamba-2 beside GQA, every block with its FFN, Granite's four
// multipliers) beyond what every family and every hybrid gets (test_families, test_hybrid's
// prefill and checkpoint cases, the llama.cpp agreement): what the file's keys make of the model
// (mixers, the rope switch, the routing llama.cpp fixes, the multipliers, the state per sequence),
// that each multiplier acts where it should (and add_scaled, the residual multiplier's kernel), what `vkllm info` says
// of a file with Granite 4.0's chat template, and the file refused without the experts' gate.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "harness.h"
#include "ops.h"
#include "reference/model.h"

using namespace vkllm;

namespace {

test::EngineFixture granite(const std::string& name) { return test::family_fixture(name, DType::F32); }

// The registry's Mamba-2 blocks: a conv over x|B|C (256 + 2·16 channels, 3 rows kept) and 8 heads of
// 32 x 16 states, in f32.
constexpr uint64_t kMamba2Bytes = (3ull * 288 + 8ull * 32 * 16) * 4;

// Logits of the reference with the spec's multipliers changed by `change`.
std::vector<float> reference_logits(FixtureSpec s, void (*change)(Multipliers&), std::span<const int32_t> tokens) {
  change(s.multipliers);
  GgufFile f = GgufFile::parse(make_fixture_model(s), "granite");
  ModelConfig c = ModelConfig::from_gguf(f);
  return ref::Model(f, c, DType::F32).forward(tokens);
}

}  // namespace

TEST_CASE("a Granite 4.0-H file gives its blocks, rope switch, routing and multipliers", "[granite]") {
  test::EngineFixture moe = granite("granitehybrid-moe");
  test::Loaded l = test::load(moe.spec, {.n_ctx = 64, .slots = 2});
  const ModelConfig& c = l.engine->config();
  CHECK((c.mixer(0) == Mixer::Attention && c.mixer(1) == Mixer::Mamba2 && c.mixer(2) == Mixer::Mamba2));
  CHECK((c.has_ffn(1) && c.is_moe_layer(1)));  // every block has its FFN, a Mamba-2 one too
  CHECK(!c.rotates(0));                        // rope.scaling.finetuned false
  CHECK(fixture_config(granite("granitehybrid").spec).rotates(1));
  const MoeConfig& m = c.moe;
  CHECK((m.gating == MoeGating::Softmax && m.weights_norm && m.weights_scale == 1.0f));
  CHECK((m.expert_hidden_dim == 64 && m.shared_hidden_dim == 96));  // feed_forward_length; the shared key
  CHECK((c.multipliers.embedding == 10.0f && c.multipliers.residual == 0.25f));
  CHECK((c.multipliers.attention == 0.1f && c.multipliers.logit == 8.0f));
  CHECK(c.attention_scale(0) == Approx(0.1));
  CHECK(c.kv_bytes_per_token(DType::F16) == 1ull * 2 * (32 + 32) * 2);  // block 0's 2 KV heads of 32
  CHECK(c.recurrent_bytes_per_sequence() == 2 * kMamba2Bytes);
  REQUIRE(l.engine->recurrent_cache());
  CHECK(l.engine->memory().recurrent == 2 * 2 * 2 * kMamba2Bytes);  // 2 slots, each with its checkpoint
  CHECK_THROWS_WITH(l.engine->kv_cache().k(1), Catch::Contains("a Mamba-2 state-space mixer"));
}

TEST_CASE("each Granite multiplier acts where llama.cpp puts it", "[granite]") {
  FixtureSpec s = granite("granitehybrid").spec;
  auto tokens = test::some_tokens(6, s.vocab_size, 3);
  std::vector<float> want = reference_logits(
      s, [](Multipliers&) {}, tokens);
  // The logits are divided by logit_scale and by nothing else.
  std::vector<float> unscaled = reference_logits(
      s, [](Multipliers& m) { m.logit = 0; }, tokens);
  for (float& v : unscaled) v /= 6.0f;
  test::check_nmse(unscaled, want, 1e-12, "logits x 6 without logit_scale");
  // The others change the logits (each is off 1 in the fixture).
  for (auto change : {+[](Multipliers& m) { m.embedding = 0; }, +[](Multipliers& m) { m.residual = 0; },
                      +[](Multipliers& m) { m.attention = 0; }}) {
    std::vector<float> other = reference_logits(s, change, tokens);
    double diff = 0;
    for (size_t i = 0; i < want.size(); ++i) diff = std::max(diff, double(std::abs(other[i] - want[i])));
    CHECK(diff > 1e-3);
  }
}

TEST_CASE("add_scaled adds a block output times the residual multiplier", "[granite][elementwise]") {
  Context& ctx = test::gpu();
  for (uint32_t n : {1u, 7u, 4097u}) {
    auto a = test::random_floats(n, 1, -10, 10), b = test::random_floats(n, 2, -10, 10);
    std::vector<float> want(n);
    for (uint32_t i = 0; i < n; ++i) want[i] = a[i] + b[i] * 0.22f;
    Buffer ga = test::to_gpu(a), gb = test::to_gpu(b);
    Stream s(ctx);
    ops::add_scaled(s, ga, gb, ga, n, 0.22f);  // in place, as the residual stream
    s.submit_wait();
    test::check_nmse(test::from_gpu(ga), want, 1e-14, fmt::format("add_scaled n={}", n));
  }
  Buffer small(ctx, 16, Memory::Device, "small"), big(ctx, 64, Memory::Device, "big");
  Stream s(ctx);
  CHECK_THROWS_WITH(ops::add_scaled(s, big, small, big, 16, 0.5f), "add_scaled: b holds 16 bytes, needs 64");
}

TEST_CASE("vkllm info shows a Granite 4.0-H file's blocks, multipliers and chat template", "[granite][cli]") {
  FixtureSpec s = granite("granitehybrid-moe").spec;
  s.chat = "chatml";
  s.chat_template =
      test::read_file(std::string(VKLLM_SOURCE_DIR) + "/tests/data/templates/ibm-granite-granite-4.0.jinja");
  test::TempFile file("granite_info");
  file.write(make_fixture_model(s));
  test::CliResult r = test::run_vkllm(fmt::format("info -m {}", file.path));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("mixers      0 attention, 1-2 mamba2\n"));
  CHECK_THAT(r.out, Catch::Contains("query scale 0.1"));
  CHECK_THAT(r.out, Catch::Contains("embeddings x 10"));
  CHECK_THAT(r.out, Catch::Contains("block outputs x 0.25 before the residual adds"));
  CHECK_THAT(r.out, Catch::Contains("logits / 8"));
  CHECK_THAT(r.out, Catch::Contains("template    Granite (the file's chat template)\n"));
  CHECK_THAT(r.out, Catch::Contains("tool calls  hermes\n"));
  nlohmann::json info = test::info_json(file.path);
  CHECK(info["recurrent_bytes_per_sequence"] == 2 * kMamba2Bytes);
  CHECK(info["layers"][1]["mixer"] == "mamba2");
}

TEST_CASE("a Granite 4.0-H file without its experts' gate is refused with one clear line", "[granite][cli]") {
  GgufFile f = GgufFile::parse(make_fixture_model(granite("granitehybrid-moe").spec), "granite");
  GgufWriter w;
  for (const GgufKv& kv : f.metadata()) w.add(std::string(kv.key), kv.value);
  for (const GgufTensor& t : f.tensors())
    if (t.name != "blk.1.ffn_gate_exps.weight")
      w.add_tensor(t.name, t.shape(), t.type, std::vector<std::byte>(t.data.begin(), t.data.end()));
  test::TempFile file("granite_no_gate");
  w.save(file.path);
  test::CliResult r = test::run_vkllm(fmt::format("logits -m {} --tokens 1,2", file.path));
  CHECK(r.exit_code != 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains("blk.1.ffn_gate_exps.weight"));
}
