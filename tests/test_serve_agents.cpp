// Agents against a real `vkllm serve` on the embedded model (a King James Bible model that never
// learnt tools or JSON): with tool_choice required its reply is a well-formed call whose
// arguments validate, because the sampler can draw nothing else; the stream reassembles to the
// same call; response_format json_schema gives JSON of the schema, and one cut by max_tokens says
// length; logprobs are those of `vkllm run --json --logprobs`. Then the real clients: the official
// `openai` SDK's tool loop and Vercel's `ai` (tests/agent_clients.mjs), skipped without npm; and
// the openai SDK's loop on a Gemma 4 fixture, whose calls are Gemma 4's own syntax.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"
#include "harness.h"
#include "json_schema_check.h"
#include "serve_process.h"

using namespace vkllm;
using namespace vkllm::test;
using json = nlohmann::ordered_json;

namespace {

const json kWeather = json::parse(R"({"type": "object", "properties": {
    "city": {"type": "string", "maxLength": 12}, "unit": {"enum": ["celsius", "fahrenheit"]},
    "days": {"type": "integer", "minimum": 1, "maximum": 7}},
  "required": ["city", "unit"], "additionalProperties": false})");

// Nested objects, arrays, enums, $ref, booleans/numbers/anyOf with null: every string and array
// bounded, so that a reply always completes.
const json kSchemas = json::parse(R"([
  {"type": "object", "properties": {"book": {"type": "string", "maxLength": 16},
     "chapter": {"type": "object", "properties": {"number": {"type": "integer", "minimum": 1, "maximum": 150},
       "verses": {"type": "integer", "minimum": 1, "maximum": 176}}, "required": ["number", "verses"],
       "additionalProperties": false}}, "required": ["book", "chapter"], "additionalProperties": false},
  {"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string", "maxLength": 10},
     "minItems": 1, "maxItems": 3}}, "required": ["names"], "additionalProperties": false},
  {"type": "object", "properties": {"tribe": {"enum": ["Judah", "Levi", "Benjamin"]},
     "count": {"type": "integer", "minimum": 0, "maximum": 12}}, "required": ["tribe", "count"],
   "additionalProperties": false},
  {"$defs": {"person": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
     "age": {"type": "integer", "minimum": 1, "maximum": 999}}, "required": ["name", "age"],
     "additionalProperties": false}},
   "type": "object", "properties": {"father": {"$ref": "#/$defs/person"}, "son": {"$ref": "#/$defs/person"}},
   "required": ["father", "son"], "additionalProperties": false},
  {"type": "object", "properties": {"kept": {"type": "boolean"}, "weight": {"type": "number", "minimum": 0,
     "maximum": 1000}, "place": {"anyOf": [{"type": "string", "maxLength": 10}, {"type": "null"}]}},
   "required": ["kept", "weight", "place"], "additionalProperties": false}
])");

json tools() {
  return json::array({{{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", kWeather}}}}});
}

json question() { return json::array({{{"role", "user"}, {"content", "What is the weather in Jerusalem?"}}}); }

void check_arguments(const std::string& arguments) {
  INFO("arguments " << arguments);
  json args = json::parse(arguments, nullptr, false);
  REQUIRE(args.is_object());
  CHECK(SchemaCheck(kWeather).check(args) == "");
}

void check_json(const std::string& content, const json& schema) {
  INFO("content " << content << "\nschema " << schema.dump());
  json v = json::parse(content, nullptr, false);
  REQUIRE(!v.is_discarded());
  CHECK(SchemaCheck(schema).check(v) == "");
}

}  // namespace

TEST_CASE("vkllm serve: forced tool calls, JSON replies and logprobs on the embedded model", "[serve][agents]") {
  ServeProcess s("--parallel 2 --ctx 2048");
  json body = {{"messages", question()}, {"tools", tools()}, {"tool_choice", "required"},
               {"temperature", 0},       {"seed", 7},        {"max_tokens", 400}};
  json r = post(s, "/v1/chat/completions", body.dump()).json();
  INFO(r.dump());
  const json& choice = r["choices"][0];
  CHECK(choice["finish_reason"] == "tool_calls");
  REQUIRE(choice["message"]["tool_calls"].size() == 1);
  const json& call = choice["message"]["tool_calls"][0]["function"];
  CHECK(call["name"] == "get_weather");
  check_arguments(call["arguments"]);

  body["stream"] = true;
  SseStream stream = parse_sse(post(s, "/v1/chat/completions", body.dump()).body);
  REQUIRE(stream.done);
  std::string name, arguments, finish;
  for (const auto& e : stream.events) {
    if (e["choices"].empty()) continue;
    for (const auto& d : e["choices"][0]["delta"].value("tool_calls", nlohmann::json::array())) {
      CHECK(d["index"] == 0);
      if (d["function"].contains("name")) name += d["function"]["name"].get<std::string>();
      arguments += d["function"].value("arguments", "");
    }
    if (!e["choices"][0]["finish_reason"].is_null()) finish = e["choices"][0]["finish_reason"];
  }
  CHECK(name == "get_weather");
  CHECK(arguments == call["arguments"].get<std::string>());
  CHECK(finish == "tool_calls");

  for (size_t i : {size_t(0), size_t(3)}) {  // nested objects; $ref
    json j = {{"messages", {{{"role", "user"}, {"content", "Answer in JSON."}}}},
              {"response_format",
               {{"type", "json_schema"}, {"json_schema", {{"name", "a"}, {"strict", true}, {"schema", kSchemas[i]}}}}},
              {"max_tokens", 1000},
              {"seed", 3}};
    json reply = post(s, "/v1/chat/completions", j.dump()).json();
    CHECK(reply["choices"][0]["finish_reason"] == "stop");
    check_json(reply["choices"][0]["message"]["content"], kSchemas[i]);
    j["max_tokens"] = 6;  // cut inside the JSON: length, never stop
    CHECK(post(s, "/v1/chat/completions", j.dump()).json()["choices"][0]["finish_reason"] == "length");
  }

  // logprobs: the same values `vkllm run --json --logprobs` reports for the same greedy tokens
  json c = post(s, "/v1/completions",
                json({{"prompt", "And God said"}, {"max_tokens", 6}, {"temperature", 0}, {"logprobs", 3}}).dump())
               .json();
  CliResult run = run_vkllm("run -p \"And God said\" -n 6 --temp 0 --json --logprobs 3");
  REQUIRE(run.exit_code == 0);
  json want = json::parse(run.out)["logprobs"];
  const json& got = c["choices"][0]["logprobs"];
  REQUIRE(got["token_logprobs"].size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("token " << i);
    CHECK(got["tokens"][i] == want[i]["text"]);
    CHECK(std::abs(got["token_logprobs"][i].get<double>() - want[i]["logprob"].get<double>()) < 1e-4);
    for (const json& alt : want[i]["top"])
      CHECK(std::abs(got["top_logprobs"][i][alt["text"].get<std::string>()].get<double>() -
                     alt["logprob"].get<double>()) < 1e-4);
  }
}

TEST_CASE("vkllm serve: the openai SDK's tool loop and Vercel's ai generateText with a tool", "[serve][agents]") {
  std::string npm = VKLLM_BUILD_DIR "/npm";
  for (const char* p : {"openai", "ai", "@ai-sdk/openai-compatible"})
    if (!std::filesystem::exists(npm + "/node_modules/" + p) || std::system("command -v node >/dev/null") != 0) {
      skip(fmt::format("no {} npm package in build/npm (scripts/test installs it where npm is present)", p));
      return;
    }
  ServeProcess s("--parallel 2 --ctx 2048");
  TempFile schemas("agent_schemas.json");
  schemas.write(kSchemas.dump());
  std::string out = VKLLM_BUILD_DIR "/agent_clients.out";
  int rc = std::system(fmt::format("node {}/tests/agent_clients.mjs {} {} {} >{} 2>&1", VKLLM_SOURCE_DIR, npm, s.port(),
                                   schemas.path, out)
                           .c_str());
  std::ifstream f(out);
  std::string line((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  INFO(line);
  REQUIRE(rc == 0);
  json r = json::parse(line);

  const json& o = r["openai"];  // openai: the call, the tool's result back, a final answer
  CHECK(o["finish"] == "tool_calls");
  REQUIRE(o["calls"].size() == 1);
  CHECK(o["calls"][0]["function"]["name"] == "get_weather");
  check_arguments(o["calls"][0]["function"]["arguments"]);
  CHECK(o["content"].is_null());
  CHECK(!o["final"].get<std::string>().empty());
  CHECK((o["final_finish"] == "stop" || o["final_finish"] == "length"));
  const json& st = r["openai_stream"];  // streamed: the deltas reassemble to the same call
  CHECK(st["finish"] == "tool_calls");
  REQUIRE(st["calls"].size() == 1);
  CHECK(st["calls"][0]["name"] == "get_weather");
  CHECK(st["calls"][0]["arguments"] == o["calls"][0]["function"]["arguments"]);

  REQUIRE(r["schemas"].size() == kSchemas.size());  // response_format json_schema, strict
  for (size_t i = 0; i < kSchemas.size(); ++i) {
    CHECK(r["schemas"][i]["finish"] == "stop");
    check_json(r["schemas"][i]["content"], kSchemas[i]);
  }

  const json& ai = r["ai"];  // ai: a call that the SDK executed, then the final step's text
  CHECK(ai["steps"].get<int>() >= 2);
  REQUIRE(ai["executed"].size() >= 1);
  CHECK(SchemaCheck(kWeather).check(ai["executed"][0]) == "");
  CHECK(ai["calls"][0]["name"] == "get_weather");
  CHECK(!ai["text"].get<std::string>().empty());
}

TEST_CASE("vkllm serve: the openai SDK's tool loop on a Gemma 4 fixture, in Gemma 4's own call syntax",
          "[serve][agents]") {
  std::string npm = VKLLM_BUILD_DIR "/npm";
  if (!std::filesystem::exists(npm + "/node_modules/openai") || std::system("command -v node >/dev/null") != 0) {
    skip("no openai npm package in build/npm (scripts/test installs it where npm is present)");
    return;
  }
  // The engine fixture of Gemma 4 (per-layer embeddings, shared KV) with Gemma 4's tokens and its
  // real chat template: the call must come in <|tool_call>call:NAME{...}<tool_call|>.
  FixtureSpec spec = family_fixture("gemma4", DType::F16).spec;
  spec.tokenizer = "gpt2", spec.vocab_size = 512, spec.seq_len = 4096, spec.chat = "gemma4";
  spec.chat_template = read_file(std::string(VKLLM_SOURCE_DIR) + "/tests/data/templates/google-gemma-4-31B-it.jinja");
  TempFile model("gemma4_tools.gguf");
  model.write(make_fixture_model(spec));
  ServeProcess s(fmt::format("-m {} --parallel 1 --ctx 4096", model.path));
  std::string out = VKLLM_BUILD_DIR "/agent_clients_gemma4.out";
  int rc = std::system(
      fmt::format("node {}/tests/agent_clients.mjs {} {} - openai >{} 2>&1", VKLLM_SOURCE_DIR, npm, s.port(), out)
          .c_str());
  std::string line = read_file(out);
  INFO(line);
  REQUIRE(rc == 0);
  json r = json::parse(line);
  const json& o = r["openai"];  // the call (forced), the tool's result back, an answer
  CHECK(o["finish"] == "tool_calls");
  REQUIRE(o["calls"].size() == 1);
  CHECK(o["calls"][0]["function"]["name"] == "get_weather");
  check_arguments(o["calls"][0]["function"]["arguments"]);
  CHECK((o["final_finish"] == "stop" || o["final_finish"] == "length"));
  const json& st = r["openai_stream"];
  CHECK(st["finish"] == "tool_calls");
  REQUIRE(st["calls"].size() == 1);
  CHECK(st["calls"][0]["arguments"] == o["calls"][0]["function"]["arguments"]);
}
