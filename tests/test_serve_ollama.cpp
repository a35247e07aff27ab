// Ollama's API on `vkllm serve` (the embedded default model): the model list and facts, /api/chat
// and /api/generate whole and as NDJSON streams (the same text as the OpenAI route at temperature
// 0), options, format (a JSON schema, through constrained decoding), model names, Ollama-shaped
// errors, the routes vkllm does not have; then Ollama's own client, ollama-js
// (tests/ollama_client.cjs), skipped without npm.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "harness.h"
#include "serve_process.h"

using namespace vkllm;
using namespace vkllm::test;
using json = nlohmann::json;

namespace {

const json kQuestion = json::array({{{"role", "user"}, {"content", "Who begat Enos?"}}});

void check_ollama_error(const HttpResult& r, int status, const std::string& says) {
  INFO("body: " << r.body);
  CHECK(r.status == status);
  json j = r.json();
  REQUIRE(j.contains("error"));
  REQUIRE(j["error"].is_string());
  CHECK(j["error"].get<std::string>().find(says) != std::string::npos);
}

}  // namespace

TEST_CASE("vkllm serve speaks Ollama's API: models, chat, generate, streams, options, format, errors",
          "[serve][ollama]") {
  ServeProcess s("--parallel 2");
  json tags = get(s, "/api/tags").json();
  REQUIRE(tags["models"].size() == 1);
  const json& m = tags["models"][0];
  CHECK(m["name"] == "default:latest");
  CHECK(m["details"]["format"] == "gguf");
  CHECK(m["details"]["family"] == "llama");
  CHECK(m["size"].get<uint64_t>() > 1000000);
  CHECK(m["digest"].get<std::string>().size() == 64);
  CHECK(get(s, "/api/version").json()["version"].is_string());
  json ps = get(s, "/api/ps").json();
  CHECK(ps["models"][0]["context_length"].get<uint32_t>() > 0);
  json show = post(s, "/api/show", R"({"model": "default"})").json();
  CHECK(show["model_info"]["general.architecture"] == "llama");
  CHECK(show["capabilities"][0] == "completion");

  // Whole, then streamed: the same text, and the same text as the OpenAI route.
  json chat = {{"model", "default:latest"},
               {"messages", kQuestion},
               {"stream", false},
               {"options", {{"temperature", 0}, {"num_predict", 10}}}};
  json whole = post(s, "/api/chat", chat.dump()).json();
  INFO(whole.dump());
  CHECK(whole["done"] == true);
  CHECK(whole["done_reason"] == "length");
  CHECK(whole["eval_count"] == 10);
  CHECK(whole["prompt_eval_count"].get<int>() > 5);
  CHECK(whole["total_duration"].get<int64_t>() >= whole["eval_duration"].get<int64_t>());
  CHECK(whole["eval_duration"].get<int64_t>() > 0);
  CHECK(whole["message"]["role"] == "assistant");
  std::string text = whole["message"]["content"];
  CHECK(!text.empty());
  json openai =
      post(s, "/v1/chat/completions", json{{"messages", kQuestion}, {"max_tokens", 10}, {"temperature", 0}}.dump())
          .json();
  CHECK(openai["choices"][0]["message"]["content"] == text);

  chat.erase("stream");  // Ollama streams by default
  HttpResult streamed = post(s, "/api/chat", chat.dump());
  std::vector<json> lines = parse_ndjson(streamed.body);
  REQUIRE(lines.size() >= 2);
  std::string joined;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    CHECK(lines[i]["done"] == false);
    joined += lines[i]["message"]["content"].get<std::string>();
  }
  CHECK(joined == text);
  CHECK(lines.back()["done"] == true);
  CHECK(lines.back()["eval_count"] == 10);

  // generate: raw is the completion prompt as is; a prompt-less request "loads" the model.
  json gen = post(s, "/api/generate",
                  R"({"model": "default", "prompt": "In the beginning", "raw": true, "stream": false,
                      "options": {"temperature": 0, "num_predict": 6, "stop": ["\n"]}})")
                 .json();
  CHECK(gen["done"] == true);
  CHECK(gen["response"].is_string());
  json completion =
      post(s, "/v1/completions", R"({"prompt": "In the beginning", "max_tokens": 6, "temperature": 0, "stop": ["\n"]})")
          .json();
  CHECK(gen["response"] == completion["choices"][0]["text"]);
  CHECK(post(s, "/api/generate", R"({"model": "default"})").json()["done_reason"] == "load");

  // format: a JSON schema, through constrained decoding.
  json schema = json::parse(R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1,
      "maximum": 9}}, "required": ["n"], "additionalProperties": false})");
  json formatted = post(s, "/api/chat",
                        json{{"model", "default"},
                             {"messages", kQuestion},
                             {"stream", false},
                             {"format", schema},
                             {"options", {{"temperature", 0}, {"num_predict", 32}}}}
                            .dump())
                       .json();
  json value = json::parse(formatted["message"]["content"].get<std::string>());
  CHECK(value["n"].get<int>() >= 1);
  CHECK(value["n"].get<int>() <= 9);

  check_ollama_error(post(s, "/api/chat", R"({"model": "llama3:8b", "messages": []})"), 404, "default:latest");
  check_ollama_error(post(s, "/api/chat", R"({"messages": []})"), 400, "'model' is required");
  check_ollama_error(post(s, "/api/chat", R"({"model": "default", "messages": [], "format": 3})"), 400, "format");
  check_ollama_error(post(s, "/api/chat", R"({"model": "default", "messages": [{"role": "user", "content": "x",
      "images": ["aGk="]}]})"),
                     400, "images");
  check_ollama_error(post(s, "/api/generate", R"({"model": "default", "prompt": "x", "options": {"top_k": "a"}})"), 400,
                     "top_k");
  check_ollama_error(post(s, "/api/pull", R"({"model": "llama3"})"), 501, "this is vkllm");
  check_ollama_error(post(s, "/api/create", R"({"model": "x"})"), 501, "this is vkllm");
  check_ollama_error(get(s, "/api/chat"), 405, "does not accept GET");
}

TEST_CASE("vkllm serve: Ollama's own client (ollama-js) lists, shows, chats, streams, generates and formats",
          "[serve][ollama]") {
  std::string npm = VKLLM_BUILD_DIR "/npm";
  if (!std::filesystem::exists(npm + "/node_modules/ollama") || std::system("command -v node >/dev/null") != 0) {
    skip("no ollama npm package in build/npm (scripts/test installs it where npm is present)");
    return;
  }
  ServeProcess s("--parallel 2");
  std::string out = VKLLM_BUILD_DIR "/ollama_client.out";
  int rc = std::system(
      fmt::format("node {}/tests/ollama_client.cjs {} {} default >{} 2>&1", VKLLM_SOURCE_DIR, npm, s.port(), out)
          .c_str());
  std::string line = read_file(out);
  INFO(line);
  REQUIRE(rc == 0);
  json r = json::parse(line);
  REQUIRE(r["models"].size() == 1);
  CHECK(r["models"][0]["name"] == "default:latest");
  CHECK(r["models"][0]["family"] == "llama");
  CHECK(r["show"]["architecture"] == "llama");
  CHECK(r["ps"][0]["name"] == "default:latest");
  CHECK(r["version"].is_string());
  CHECK(r["chat"]["done"] == true);
  CHECK(r["chat"]["done_reason"] == "length");
  CHECK(r["chat"]["eval_count"] == 12);
  CHECK(!r["chat"]["content"].get<std::string>().empty());
  CHECK(r["chat_stream"]["content"] == r["chat"]["content"]);
  CHECK(r["chat_stream"]["parts"].get<int>() > 2);
  CHECK(r["chat_stream"]["done"] == true);
  CHECK(r["generate"]["eval_count"].get<int>() > 0);
  const json& t = r["generate_templated"];  // generate() without raw gets its text, whole and streamed
  CHECK(!t["response"].get<std::string>().empty());
  CHECK(t["streamed"] == t["response"]);
  CHECK(t["parts"].get<int>() > 2);
  CHECK(t["done"] == true);
  CHECK(t["eval_count"] == 12);
  CHECK(t["context"].get<int>() > 12);
  json value = json::parse(r["format"]["content"].get<std::string>());
  CHECK(value["book"].is_string());
  CHECK(value["chapter"].is_number_integer());
  CHECK(r["missing"]["name"] == "ResponseError");
  CHECK(r["missing"]["status"] == 404);
}
