// Embeddings through `vkllm serve` on the Qwen3-Embedding fixture (F32): POST /v1/embeddings and
// POST /api/embed over plain HTTP (shapes, usage, dimensions, errors), then the official `openai`
// npm SDK's embeddings.create (and ollama-js's embed where installed), skipped with a message
// where build/npm has no openai package.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "catch.h"
#include "cli.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"
#include "harness.h"
#include "serve_process.h"

using namespace vkllm;
using namespace vkllm::test;
using json = nlohmann::json;

namespace {

constexpr uint32_t kCtx = 64;

// The preset written to a file and served with two slots.
struct Served {
  TempFile file{"serve-embedding.gguf"};
  std::unique_ptr<ServeProcess> server;
  uint32_t width = 0;
  Served() {
    FixtureSpec spec = family_fixture("qwen3-embedding", DType::F32).spec;
    file.write(make_fixture_model(spec));
    width = spec.dim;
    server = std::make_unique<ServeProcess>(fmt::format("-m {} --parallel 2 --ctx {}", file.path, kCtx));
  }
};

double norm(const json& v) {
  double s = 0;
  for (const json& x : v) s += x.get<double>() * x.get<double>();
  return std::sqrt(s);
}

void check_error(const HttpResult& r, const std::string& says) {
  INFO("body: " << r.body);
  CHECK(r.status == 400);
  CHECK(r.body.find(says) != std::string::npos);
}

}  // namespace

TEST_CASE("vkllm serve: POST /v1/embeddings and /api/embed answer in OpenAI's and Ollama's shapes", "[serve][embed]") {
  Served s;
  const ServeProcess& p = *s.server;
  json r = post(p, "/v1/embeddings", R"({"model": "x", "input": ["In the beginning", [1, 2, 3]]})").json();
  INFO(r.dump());
  CHECK(r["object"] == "list");
  REQUIRE(r["data"].size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(r["data"][i]["object"] == "embedding");
    CHECK(r["data"][i]["index"] == i);
    CHECK(r["data"][i]["embedding"].size() == s.width);
    CHECK(norm(r["data"][i]["embedding"]) == Approx(1).epsilon(1e-5));
  }
  CHECK(r["usage"]["prompt_tokens"].get<int>() > 3);
  CHECK(r["usage"]["total_tokens"] == r["usage"]["prompt_tokens"]);
  json one = post(p, "/v1/embeddings", R"({"input": [1, 2, 3], "dimensions": 8})").json();
  REQUIRE(one["data"].size() == 1);
  CHECK(one["data"][0]["embedding"].size() == 8);
  CHECK(norm(one["data"][0]["embedding"]) == Approx(1).epsilon(1e-5));
  CHECK(one["usage"]["prompt_tokens"] == 3);

  json o = post(p, "/api/embed", R"({"model": "x", "input": ["In the beginning", "other"]})").json();
  INFO(o.dump());
  CHECK(o["model"] == "x");
  REQUIRE(o["embeddings"].size() == 2);
  CHECK(o["embeddings"][0] == r["data"][0]["embedding"]);  // the same text, the same vector
  CHECK(o["prompt_eval_count"].get<int>() > 2);
  CHECK(o["total_duration"].get<int64_t>() > 0);
  CHECK(o.contains("load_duration"));
  std::string long_text(400, 'x');
  json cut = post(p, "/api/embed", json{{"input", long_text}}.dump()).json();  // truncated to the context
  CHECK(cut["prompt_eval_count"] == kCtx);
  HttpResult refused = post(p, "/api/embed", json{{"input", long_text}, {"truncate", false}}.dump());
  CHECK(refused.status == 400);
  CHECK(refused.json()["error"].is_string());  // Ollama's clients read a string

  check_error(post(p, "/v1/embeddings", R"({"input": ""})"), "empty string");
  check_error(post(p, "/v1/embeddings", R"({"input": []})"), "'input' is empty");
  check_error(post(p, "/v1/embeddings", R"({})"), "'input' is required");
  check_error(post(p, "/v1/embeddings", R"({"input": [true]})"), "'input' must be");
  check_error(post(p, "/v1/embeddings", R"({"input": [1, 99999]})"), "token ids must be integers in 0..");
  check_error(post(p, "/v1/embeddings", json{{"input", long_text}}.dump()), "a slot's context holds 64");
  check_error(post(p, "/v1/embeddings", R"({"input": "a", "dimensions": 100000})"), "'dimensions' must be");
  check_error(post(p, "/v1/embeddings", R"({"input": "a", "encoding_format": "int8"})"), "'encoding_format'");
}

TEST_CASE("vkllm serve: the openai npm SDK's embeddings.create", "[serve][embed]") {
  std::string npm = VKLLM_BUILD_DIR "/npm";
  if (!std::filesystem::exists(npm + "/node_modules/openai") || std::system("command -v node >/dev/null") != 0)
    return skip("no openai npm package in build/npm (scripts/test installs it where npm is present)");
  Served s;
  std::string out = VKLLM_BUILD_DIR "/embeddings_client.out";
  std::string cmd =
      fmt::format("node {}/tests/embeddings_client.cjs {} {} >{} 2>&1", VKLLM_SOURCE_DIR, npm, s.server->port(), out);
  int rc = std::system(cmd.c_str());
  std::string text = read_file(out);
  INFO(text);
  REQUIRE(rc == 0);
  json r = json::parse(text);
  CHECK(r["count"] == 3);
  CHECK(r["width"] == s.width);
  CHECK(r["cos_same"].get<double>() == Approx(1).epsilon(1e-6));
  CHECK(r["cos_different"].get<double>() < 0.999);
  CHECK(r["norm"].get<double>() == Approx(1).epsilon(1e-5));
  CHECK(r["base64_diff"].get<double>() <= 1e-6);  // the same floats, only shortened by the JSON
  CHECK(r["sdk_default_diff"].get<double>() <= 1e-6);
  CHECK(r["batch_vs_single"].get<double>() <= 1e-5);
  CHECK(r["dims_length"] == 8);
  CHECK(r["dims_norm"].get<double>() == Approx(1).epsilon(1e-5));
  WARN(fmt::format("openai SDK: cosine of different texts {:.4f}, batch vs one by one {:.3g}",
                   r["cos_different"].get<double>(), r["batch_vs_single"].get<double>()));
  if (r["ollama"].is_null()) {
    WARN("ollama-js not installed in build/npm: its embed was not tried");
  } else {
    CHECK(r["ollama"]["count"] == 3);
    CHECK(r["ollama"]["diff"].get<double>() <= 1e-6);
  }
}
