// POST /v1/attention and GET /v1/info, the demo page's routes: at the Api level with a recording
// generator (what each input form tokenizes to, the 512-token limit, bad layers and bodies), and
// over HTTP on the default model (the same probabilities as `vkllm attention`, beside a running
// generation; the same KV numbers as `vkllm info`).
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "recording_generator.h"
#include "serve/api.h"
#include "serve_process.h"
#include "text/chat_template.h"

using namespace vkllm;
using json = nlohmann::json;

namespace {

struct AttentionServer {
  std::vector<std::byte> bytes =
      make_fixture_model({.dim = 128, .n_layers = 3, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 512});
  GgufFile file = GgufFile::parse(bytes, "attention fixture");
  test::RecordingGenerator gen{Tokenizer::from_gguf(file), ModelConfig::from_gguf(file), 1024};
  serve::Api api{gen,
                 {.model_id = "fixture",
                  .chat_template = std::make_shared<const ChatTemplate>(ChatTemplate::from_gguf(file)),
                  .device = "a GPU",
                  .kv_type = DType::Q8_0}};
  serve::HttpReply post(const std::string& path, const json& body) {
    return api.handle({.method = "POST", .path = path, .body = body.dump()}, [] { return true; });
  }
};

void check_400(const serve::HttpReply& r, const std::string& says) {
  INFO(r.body);
  CHECK(r.status == 400);
  CHECK(json::parse(r.body)["error"]["message"].get<std::string>().find(says) != std::string::npos);
}

std::vector<int32_t> many_tokens(size_t n) { return std::vector<int32_t>(n, 7); }

}  // namespace

TEST_CASE("POST /v1/attention takes messages, a prompt or tokens and answers the map", "[serve][probs]") {
  AttentionServer s;
  json messages = {{{"role", "user"}, {"content", "Hi there"}}};
  REQUIRE(s.post("/v1/chat/completions", {{"messages", messages}}).status == 200);
  std::vector<int32_t> chat_prompt = s.gen.prompt;
  serve::HttpReply r = s.post("/v1/attention", {{"messages", messages}, {"layer", 2}});
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(s.gen.prompt == chat_prompt);  // rendered by the chat template, as a chat request
  CHECK(s.gen.attention_layer == 2);
  json j = json::parse(r.body);
  CHECK(j["layer"] == 2);
  CHECK(j["tokens"] == chat_prompt);
  size_t n = chat_prompt.size();
  REQUIRE(j["pieces"].size() == n);
  CHECK(j["pieces"][0] == s.gen.tokenizer().piece(chat_prompt[0]));
  REQUIRE(j["heads"].size() == 4);
  REQUIRE(j["heads"][3].size() == n);
  REQUIRE(j["heads"][3][n - 1].size() == n);
  CHECK(j["heads"][3][n - 1][0] == 1.0);
  CHECK(j["heads"][3][n - 1][1] == 0);

  REQUIRE(s.post("/v1/attention", {{"prompt", "In the beginning"}, {"layer", 0}}).status == 200);
  CHECK(s.gen.prompt == s.gen.tokenizer().encode("In the beginning", true, true));
  REQUIRE(s.post("/v1/attention", {{"tokens", {1, 5, 9}}, {"layer", 1}}).status == 200);
  CHECK(s.gen.prompt == std::vector<int32_t>{1, 5, 9});
  CHECK(s.post("/v1/attention", {{"tokens", many_tokens(512)}, {"layer", 0}}).status == 200);
}

TEST_CASE("POST /v1/attention refuses long inputs, bad layers and bad bodies", "[serve][probs]") {
  AttentionServer s;
  check_400(s.post("/v1/attention", {{"tokens", many_tokens(513)}, {"layer", 0}}),
            "the input is 513 tokens; the attention view takes at most 512");
  check_400(s.post("/v1/attention", {{"tokens", {1, 2}}, {"layer", 3}}),
            "layer 3 does not exist: the model has 3 layers (0 to 2)");
  check_400(s.post("/v1/attention", {{"tokens", {1, 2}}, {"layer", -1}}), "layer -1 does not exist");
  check_400(s.post("/v1/attention", {{"tokens", {1, 2}}}), "'layer' is required");
  check_400(s.post("/v1/attention", {{"tokens", {1, 2}}, {"layer", "1"}}), "'layer' must be an integer");
  check_400(s.post("/v1/attention", {{"layer", 0}}), "exactly one of 'messages', 'prompt' or 'tokens'");
  check_400(s.post("/v1/attention", {{"tokens", {1}}, {"prompt", "x"}, {"layer", 0}}), "exactly one");
  check_400(s.post("/v1/attention", {{"tokens", json::array()}, {"layer", 0}}), "non-empty array");
  check_400(s.post("/v1/attention", {{"tokens", {1, 512}}, {"layer", 0}}), "'tokens' must be token ids in 0..511");
  check_400(s.post("/v1/attention", {{"messages", json::array()}, {"layer", 0}}), "must not be empty");
  CHECK(s.api.handle({.method = "GET", .path = "/v1/attention"}, [] { return true; }).status == 405);
}

TEST_CASE("GET /v1/info describes the model and the KV cache of every attention kind", "[serve][probs]") {
  AttentionServer s;
  serve::HttpReply r = s.api.handle({.method = "GET", .path = "/v1/info"}, [] { return true; });
  INFO(r.body);
  REQUIRE(r.status == 200);
  json j = json::parse(r.body);
  CHECK(j["model"] == "fixture");
  CHECK(j["architecture"] == "llama");
  CHECK(j["attention"] == "GQA");
  CHECK((j["n_layer"] == 3 && j["n_head"] == 4 && j["n_head_kv"] == 2 && j["head_dim"] == 32));
  CHECK((j["device"] == "a GPU" && j["n_ctx"] == 1024 && j["kv_type"] == "q8_0"));
  // q8_0: 34 bytes per 32 values; K and V rows of 32 per KV head and layer.
  CHECK(j["kv_bytes_per_token"] == 3 * 2 * 2 * 34);
  json k = j["kv_bytes_per_token_by_kind"];
  CHECK((k["mha"] == 3 * 4 * 2 * 34 && k["gqa"] == 3 * 2 * 2 * 34 && k["mqa"] == 3 * 2 * 34));
  CHECK(k["mla"] == 3 * 5 * 34);  // latent 4 x 32 + rope 16: 144 values, 5 whole blocks
  // hybrid: one GQA layer (every 4th, at least one) and 2 Gated DeltaNet layers, each keeping a
  // conv state of 3 x (2 x 2 + 4) x 32 and 4 heads of 32 x 32 floats per sequence.
  CHECK(k["hybrid"] == 1 * 2 * 2 * 34);
  CHECK(j["kv_by_kind_dims"] == json({{"gqa_n_head_kv", 2},
                                      {"mla_kv_lora_rank", 128},
                                      {"mla_rope_dim", 16},
                                      {"hybrid_attention_layers", 1},
                                      {"hybrid_bytes_per_sequence", 2 * (3 * 256 + 4 * 32 * 32) * 4}}));
  CHECK(j["recurrent_bytes_per_sequence"] == 0);
  CHECK(j["linear_attention"].is_null());
  CHECK(j["attention_layers"] == json({0, 1, 2}));
  CHECK(j["attention_max_tokens"] == 512);
}

TEST_CASE("vkllm serve answers /v1/attention as vkllm attention does, beside a generation", "[serve][probs]") {
  test::ServeProcess s("--parallel 1");
  // A generation holds the one slot meanwhile; the capture waits for it, then takes it.
  std::thread writer([&] {
    test::HttpResult g = test::post(s, "/v1/completions", R"({"prompt": "And God said", "max_tokens": 48})");
    CHECK(g.status == 200);
  });
  test::HttpResult r = test::post(s, "/v1/attention", R"({"prompt": "In the beginning God", "layer": 5})");
  writer.join();
  INFO(r.body);
  REQUIRE(r.status == 200);
  json served = r.json();
  test::CliResult cli = test::run_vkllm("attention -p 'In the beginning God' --layer 5 --json");
  REQUIRE(cli.exit_code == 0);
  json local = json::parse(cli.out);
  CHECK(served["tokens"] == local["tokens"]);
  CHECK(served["pieces"] == local["pieces"]);
  double worst = 0;
  for (size_t h = 0; h < local["heads"].size(); ++h)
    for (size_t q = 0; q < local["tokens"].size(); ++q)
      for (size_t k = 0; k < local["tokens"].size(); ++k)
        worst =
            std::max(worst, std::abs(served["heads"][h][q][k].get<double>() - local["heads"][h][q][k].get<double>()));
  CHECK(worst <= 1e-5);
  CHECK(post(s, "/v1/attention", R"({"messages": [{"role": "user", "content": "Hi"}], "layer": 0})").status == 200);
  test::HttpResult big = post(s, "/v1/attention", json({{"tokens", many_tokens(300)}, {"layer", 0}}).dump());
  CHECK(big.status == 400);
  CHECK(big.body.find("at most 256") != std::string::npos);  // the default model's context

  json info = get(s, "/v1/info").json();
  json cli_info = json::parse(test::run_vkllm("info --json").out);
  CHECK(info["n_layer"] == cli_info["n_layers"]);
  CHECK(info["kv_bytes_per_token"] == cli_info["kv_bytes_per_token"]);
  CHECK(info["kv_bytes_per_token_by_kind"] == cli_info["kv_bytes_per_token_by_kind"]);
  CHECK(info["kv_by_kind_dims"] == cli_info["kv_by_kind_dims"]);
  CHECK(info["device"] == cli_info["memory"]["device"]);
  CHECK(info["parallel"] == 1);
}
