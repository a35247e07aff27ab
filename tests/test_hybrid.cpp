// Hybrid models (qwen35, qwen35moe: Gated DeltaNet beside gated attention; nemotron_h and
// nemotron_h_moe, Mamba-2 beside attention, where the test says so) beyond what every
// family gets (test_families, the batch tests, the llama.cpp agreement): the KV cache only for
// the attention layers and the recurrent state's exact bytes, prefill in chunks against decode
// token by token, a conversation resumed from a checkpoint giving the logits of a fresh one, and
// the clear refusals (rewinding past the checkpoint, an attention map of a linear layer).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "engine/chat_session.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "error.h"
#include "graph/recurrent_cache.h"
#include "harness.h"
#include "reference/model.h"
#include "serve_process.h"

using namespace vkllm;

namespace {

test::EngineFixture hybrid(const std::string& name = "qwen35") { return test::family_fixture(name, DType::F16); }

}  // namespace

TEST_CASE("a hybrid keeps K/V only for its attention layers and a recurrent state of exact size", "[hybrid]") {
  test::EngineFixture f = hybrid();
  test::Loaded l = test::load(f.spec, {.n_ctx = 64, .slots = 3});
  const ModelConfig& c = l.engine->config();
  REQUIRE(c.hybrid());
  CHECK(c.n_attention_layers() == 1);  // layers 0-2 and 4 linear, 3 attention
  CHECK(attention_layers(c) == "3");
  CHECK(l.engine->kv_cache().bytes_per_token() == c.kv_bytes_per_token(DType::F16));
  CHECK(c.kv_bytes_per_token(DType::F16) == 1ull * 2 * (64 + 64) * 2);  // 1 layer, 2 KV heads
  // 4 linear layers of (conv 3 x (2·2·32 + 4·32) + 4 heads x 32 x 32) floats.
  uint64_t per_sequence = 4ull * (3 * 256 + 4 * 32 * 32) * 4;
  CHECK(c.recurrent_bytes_per_sequence() == per_sequence);
  REQUIRE(l.engine->recurrent_cache());
  CHECK(l.engine->recurrent_cache()->bytes_per_sequence() == per_sequence);
  CHECK(l.engine->memory().recurrent == 2 * 3 * per_sequence);  // 3 slots, each with its checkpoint
  CHECK_THROWS_WITH(l.engine->kv_cache().k(0), Catch::Contains("layer 0 has no KV cache (it is linear attention)"));
}

TEST_CASE("a hybrid's prefill in chunks, in one batch and token by token agree", "[hybrid]") {
  // Gated DeltaNet (qwen35, qwen35moe), Mamba-2 (nemotron_h, nemotron_h_moe, granitehybrid-moe), short
  // convs (lfm2, lfm2moe).
  for (const char* name :
       {"qwen35", "qwen35moe", "nemotron_h", "nemotron_h_moe", "granitehybrid-moe", "lfm2", "lfm2moe"}) {
    test::EngineFixture f = hybrid(name);
    auto tokens = test::some_tokens(70, f.spec.vocab_size, 7);
    test::Loaded whole = test::load(f.spec, {.kv_type = DType::F32}),
                 chunks = test::load(f.spec, {.batch = 9, .kv_type = DType::F32});
    std::vector<float> want = whole.engine->eval_all(tokens);
    test::check_nmse(chunks.engine->eval_all(tokens), want, test::batching_bound({9, 7, 70}, 1e-10),
                     fmt::format("chunks of 9 vs one batch, {}", name));
    // Token by token (the recurrent kernel, never the chunked one).
    test::Loaded steps = test::load(f.spec, {.kv_type = DType::F32});
    std::vector<float> one;
    for (int32_t t : tokens) {
      std::span<const float> logits = steps.engine->eval(std::span<const int32_t>(&t, 1));
      one.insert(one.end(), logits.begin(), logits.end());
    }
    test::check_nmse(one, want, test::batching_bound({1, 70}, 1e-10),
                     fmt::format("decode steps vs one batch, {}", name));
  }
}

namespace {

void resumed_conversation(const std::string& name) {
  INFO(name);
  test::EngineFixture f = hybrid(name);
  uint32_t vocab = f.spec.vocab_size;
  auto turn1 = test::some_tokens(20, vocab, 1), reply = test::some_tokens(6, vocab, 2),
       turn2 = test::some_tokens(11, vocab, 3);
  test::Loaded l = test::load(f.spec, {.kv_type = DType::F32});
  Engine& e = *l.engine;
  e.eval(turn1);
  e.checkpoint(0, e.n_past());  // the end of turn one's prompt
  e.eval(reply);                // a reply the next prompt renders differently: it goes back to 20
  CHECK(e.resumable(23) == 20);
  CHECK(e.resumable(19) == 0);
  CHECK(e.resumable(40) == 26);
  CHECK_THROWS_WITH(e.truncate(23), Catch::Contains("a hybrid model cannot go back to 23 of its 26 tokens"));
  e.truncate(20);
  std::vector<float> resumed = e.eval_all(turn2);
  std::vector<int32_t> all = turn1;
  all.insert(all.end(), turn2.begin(), turn2.end());
  test::Loaded fresh = test::load(f.spec, {.kv_type = DType::F32});
  std::vector<float> want = fresh.engine->eval_all(all);
  test::check_nmse(resumed, std::vector<float>(want.end() - long(turn2.size() * vocab), want.end()), 1e-10,
                   "resumed turn two vs the whole talk fresh");
  // Going back to the start is always possible: the state of position 0 is zero.
  e.truncate(0);
  test::check_nmse(e.eval_all(all), want, 1e-10, "again from position 0");
}

}  // namespace

TEST_CASE("a hybrid conversation resumed from its checkpoint gives the logits of a fresh one", "[hybrid]") {
  // Gated DeltaNet, Mamba-2 and short-conv states.
  for (const char* name : {"qwen35", "nemotron_h", "granitehybrid", "lfm2"}) resumed_conversation(name);
}

TEST_CASE("a linear-attention layer has no attention map, and says which layers have one", "[hybrid]") {
  test::EngineFixture f = hybrid();
  test::Loaded l = test::load(f.spec);
  auto tokens = test::some_tokens(5, f.spec.vocab_size, 1);
  CHECK_THROWS_WITH(l.engine->attention_probabilities(tokens, 0),
                    "layer 0 is linear attention, which has no attention map (layers with one: 3)");
  std::vector<float> probs = l.engine->attention_probabilities(tokens, 3);
  CHECK(probs.size() == 4 * 5 * 5);
  test::TempFile file("hybrid");
  file.write(make_fixture_model(f.spec));
  test::CliResult r = test::run_vkllm(fmt::format("attention -m {} --tokens 1,2,3 --layer 1", file.path));
  CHECK(r.exit_code != 0);
  CHECK(r.err == fmt::format("error: --layer 1: that layer of {} is linear attention, which has no attention map "
                             "(layers with one: 3)\n",
                             file.path));
}

TEST_CASE("vkllm info shows a hybrid's layers and its constant state per sequence", "[hybrid][cli]") {
  test::TempFile file("hybrid_info");
  file.write(make_fixture_model(hybrid().spec));
  test::CliResult r = test::run_vkllm(fmt::format("info -m {} --parallel 2", file.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("hybrid: GQA (2 query heads per KV head, sigmoid output gate), Gated DeltaNet "
                                    "linear attention in 4 of 5 layers (2 key / 4 value heads of 32, conv 4); full "
                                    "attention in layers 3"));
  CHECK_THAT(r.out, Catch::Contains("linear      constant 76.0 KiB per sequence"));
  CHECK_THAT(r.out, Catch::Contains("mixers      0-2 deltanet, 3 attention, 4 deltanet\n"));
  CHECK_THAT(r.out, Catch::Contains("1 multi-token-prediction block (loaded from the file, not run)"));
  nlohmann::json j = test::info_json(file.path);
  CHECK(j["recurrent_bytes_per_sequence"] == 77824);
  CHECK(j["linear_attention"]["layers"] == nlohmann::json::array({0, 1, 2, 4}));
  CHECK(j["linear_attention"]["bytes_per_sequence"] == 77824);
  CHECK(j["linear_attention"]["value_heads"] == 4);
  CHECK(j["nextn_layers"] == 1);
  CHECK(j["layers"][0]["mixer"] == "deltanet");
  CHECK(j["layers"][0]["state_bytes_per_sequence"] == 77824 / 4);
  CHECK(j["layers"][3]["mixer"] == "attention");
  CHECK(j["layers"][3]["ffn"] == true);
  CHECK(j["kv_bytes_per_token_by_kind"]["hybrid"] == j["kv_bytes_per_token"]);
  CHECK(j["kv_by_kind_dims"]["hybrid_bytes_per_sequence"] == 77824);
  CHECK(j["memory"]["recurrent"] == 2 * 77824);
}

namespace {

// The server resumes the second turn from the checkpoint at the end of the first prompt (`name`'s
// fixture: attention only in block `attention`, `state` bytes of recurrent state per sequence,
// block 0 of kind `kind`).
void serve_resumes(const std::string& name, int attention, uint64_t state, const std::string& kind) {
  INFO(name);
  test::TempFile file("hybrid_serve_" + name);
  file.write(make_fixture_model(hybrid(name).spec));
  auto tokens = [](std::vector<int32_t> ids) { return nlohmann::json(ids).dump(); };
  std::vector<int32_t> first = test::some_tokens(24, 320, 11), next = first;
  for (int32_t t : test::some_tokens(9, 320, 12)) next.push_back(t);
  auto request = [&](const std::vector<int32_t>& prompt) {
    return fmt::format(R"({{"prompt": {}, "max_tokens": 8, "temperature": 0}})", tokens(prompt));
  };
  test::ServeProcess s(fmt::format("-m {} --parallel 2", file.path));
  REQUIRE(test::post(s, "/v1/completions", request(first)).status == 200);
  // The next turn starts with the first prompt, not with its reply: the live state (after the
  // reply) is too far, the checkpoint at the end of the prompt is where it goes on.
  nlohmann::json resumed = test::post(s, "/v1/completions", request(next)).json();
  CHECK(resumed["usage"]["prompt_tokens_details"]["cached_tokens"] == first.size());
  test::ServeProcess fresh(fmt::format("-m {} --parallel 1", file.path));
  nlohmann::json want = test::post(fresh, "/v1/completions", request(next)).json();
  CHECK(want["usage"]["prompt_tokens_details"]["cached_tokens"] == 0);
  CHECK(resumed["choices"][0]["text"] == want["choices"][0]["text"]);
  // GET /v1/info says which layers have attention and the state per sequence.
  nlohmann::json info = test::get(s, "/v1/info").json();
  CHECK(info["attention_layers"] == nlohmann::json::array({attention}));
  CHECK(info["recurrent_bytes_per_sequence"] == state);
  test::HttpResult bad = test::post(s, "/v1/attention", R"({"tokens": [1, 2, 3], "layer": 0})");
  CHECK(bad.status == 400);
  CHECK_THAT(bad.body, Catch::Contains(fmt::format("layer 0 is {}, which has no attention map (layers with one: {})",
                                                   kind, attention)));
}

}  // namespace

TEST_CASE("vkllm serve resumes a hybrid's conversation from the state at the end of its prompt", "[hybrid][serve]") {
  serve_resumes("qwen35", 3, 77824, "linear attention");
  serve_resumes("lfm2", 2, 3ull * (3 - 1) * 128 * 4, "a gated short convolution");  // 3 short convs of dim 128
  // 2 Mamba-2 blocks: conv (kernel 4 - 1) x (128 + 2 groups x 16) and 8 heads x 16 x 16 of state.
  serve_resumes("nemotron_h_moe", 2, 2ull * (3 * 192 + 8 * 16 * 16) * 4, "a Mamba-2 state-space mixer");
}

TEST_CASE("vkllm bench runs a hybrid at depth: each run goes back to the context's state", "[hybrid][cli]") {
  test::TempFile file("hybrid_bench");
  file.write(make_fixture_model(hybrid().spec));
  test::CliResult r = test::run_vkllm(fmt::format("bench -m {} -p 0 -n 3 -d 20 -r 2 --json", file.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["n_depth"] == 20);
  CHECK(j["generation_tokens_per_second"].get<double>() > 0);
}

TEST_CASE("the recurrent cache keeps each recurrent layer's conv and second state at its mixer's size", "[hybrid]") {
  // One block of each kind: sizes per layer come from the mixer's config, none for attention or
  // an FFN-only block.
  ModelConfig c;
  c.dim = 48, c.n_layers = 5;
  c.mixers = {Mixer::DeltaNet, Mixer::Mamba2, Mixer::ShortConv, Mixer::Attention, Mixer::None};
  c.ffn_layers = {1, 0, 1, 0, 1};
  c.linear = {.conv_kernel = 4, .k_heads = 2, .v_heads = 4, .head_dim = 8};
  c.ssm = {.conv_kernel = 4, .inner = 64, .state = 16, .heads = 8, .groups = 2};
  c.short_conv = {.kernel = 3};
  CHECK(c.recurrent_state(0).floats() == 3 * (2 * 16 + 32) + 4 * 8 * 8);
  CHECK(c.recurrent_state(1).conv_channels == 64 + 2 * 2 * 16);  // x | B | C
  CHECK(c.recurrent_state(1).floats() == 3 * 128 + 64 * 16);     // heads · head_dim · d_state
  CHECK(c.recurrent_state(2).floats() == 2 * 48);                // no second state
  CHECK(c.recurrent_state(2).state_floats == 0);
  CHECK(c.recurrent_state(3).floats() == 0);
  CHECK(c.recurrent_state(4).floats() == 0);
  CHECK(c.n_recurrent_layers() == 3);
  CHECK(c.n_attention_layers() == 1);
  CHECK(c.hybrid());
  CHECK(!c.has_ffn(1));
  CHECK(c.has_ffn(4));
  CHECK(!c.has_kv(4));
  uint64_t per_sequence = 4 * ((3 * 64 + 256) + (3 * 128 + 1024) + 96);
  CHECK(c.recurrent_bytes_per_sequence() == per_sequence);
  RecurrentCache cache(test::gpu(), c, 2);
  CHECK(cache.bytes_per_sequence() == per_sequence);
  CHECK(cache.conv(1).size == 2 * 4 * 3 * 128);
  CHECK(cache.state(1).size == 2 * 4 * 64 * 16);
  CHECK(cache.conv(2).size == 2 * 4 * 96);
  CHECK_THROWS_WITH(cache.state(2), Catch::Contains("layer 2 keeps no state beside its conv's"));
  CHECK_THROWS_WITH(cache.conv(3), Catch::Contains("layer 3 has no recurrent state"));
  CHECK_THROWS_WITH(cache.conv(4), Catch::Contains("layer 4 has no recurrent state"));
}
