// `vkllm run --grammar FILE | --json-schema FILE` on the embedded model: the output follows the
// grammar (and a cut one says length), JSON validates against its schema, and bad files are one
// error line; `vkllm chat --no-reasoning` leaves a thinking model's reasoning out.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "json_schema_check.h"

using namespace vkllm;
using test::run_vkllm;
using test::TempFile;

TEST_CASE("vkllm run --grammar and --json-schema constrain the output", "[cli-grammar]") {
  TempFile g("run_grammar.gbnf"), s("run_schema.json");
  g.write(std::string("root ::= \"Yea, \" [a-z ]{5,30} \".\"\n"));
  auto r = run_vkllm(fmt::format("run -p \"And the king said\" --grammar {} -n 60 --temp 0 --json", g.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  std::string text = j["text"];
  CHECK(std::regex_match(text, std::regex("Yea, [a-z ]{5,30}\\.")));
  CHECK(j["finish_reason"] == "eog");  // the grammar ended: only end-of-generation tokens were left
  auto cut = run_vkllm(fmt::format("run -p \"And the king said\" --grammar {} -n 3 --temp 0 --json", g.path));
  REQUIRE(cut.exit_code == 0);
  CHECK(nlohmann::json::parse(cut.out)["finish_reason"] == "length");

  nlohmann::ordered_json schema = nlohmann::ordered_json::parse(R"({"type": "object", "properties": {
      "king": {"enum": ["David", "Saul", "Solomon"]}, "years": {"type": "integer", "minimum": 1, "maximum": 99},
      "sons": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 2}},
    "required": ["king", "years"], "additionalProperties": false})");
  s.write(schema.dump());
  for (int seed : {1, 2, 3}) {
    auto out = run_vkllm(
        fmt::format("run -p \"And the king said\" --json-schema {} -n 200 --temp 0.8 -s {} --json", s.path, seed));
    INFO(out.err);
    REQUIRE(out.exit_code == 0);
    std::string reply = nlohmann::json::parse(out.out)["text"];
    INFO(reply);
    nlohmann::ordered_json value = nlohmann::ordered_json::parse(reply, nullptr, false);
    REQUIRE(value.is_object());
    CHECK(test::SchemaCheck(schema).check(value) == "");
  }
}

TEST_CASE("bad grammar and schema files give one error line", "[cli-grammar]") {
  TempFile bad("bad.gbnf"), bad_json("bad.json"), pattern("pattern.json"), empty("empty.gbnf");
  bad.write(std::string("root ::= ("));
  bad_json.write(std::string("{\"type\": "));
  pattern.write(std::string("{\"type\": \"string\", \"pattern\": \"a+\"}"));
  empty.write(std::string("# nothing\n"));
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {fmt::format("run -p hi --grammar {}", bad.path), "grammar: line 1"},
      {fmt::format("run -p hi --grammar {}", empty.path), "the grammar is empty"},
      {fmt::format("run -p hi --json-schema {}", bad_json.path), "not valid JSON"},
      {fmt::format("run -p hi --json-schema {}", pattern.path), "'pattern' is not supported"},
      {"run -p hi --grammar /nonexistent.gbnf", "/nonexistent.gbnf"},
      {fmt::format("run -p hi --grammar {} --json-schema {}", bad.path, pattern.path), "excludes"},
  };
  for (const auto& [args, message] : cases) {
    auto r = run_vkllm(args);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err.starts_with("error: "));
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("vkllm chat --no-reasoning leaves a thinking model's reasoning out", "[cli-grammar]") {
  // The template opens <think> and the random model never closes it: the whole reply is reasoning.
  TempFile model("think_model"), turns("think_turns");
  model.write(make_fixture_model({.vocab_size = 300, .tokenizer = "gpt2", .chat = "chatml-think"}));
  turns.write(std::string("hello\nagain\n"));
  auto raw = run_vkllm(fmt::format("chat -m {} -n 6 -s 3", model.path), "", turns.path);
  auto quiet = run_vkllm(fmt::format("chat -m {} -n 6 -s 3 --no-reasoning", model.path), "", turns.path);
  INFO(raw.err << quiet.err);
  REQUIRE(raw.exit_code == 0);
  REQUIRE(quiet.exit_code == 0);
  CHECK(raw.out.find_first_not_of("\n") != std::string::npos);  // piped without the flag: as written
  CHECK(quiet.out == "\n\n");                                   // one empty line per turn
}

TEST_CASE("vkllm-bench grammar replays a nested JSON document under its schema on real vocabularies", "[cli-grammar]") {
  // Not a timing test: the bench checks every token of the document against the mask and the
  // document's end against the grammar, and reports what it measured.
  auto r =
      test::run_bench(fmt::format("grammar --no-model --runs 1 --json --vocab {0}/ggml-vocab-qwen2.gguf --vocab "
                                  "{0}/ggml-vocab-llama-spm.gguf",
                                  VKLLM_SOURCE_DIR "/tests/data/vocab"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["vocabularies"].size() == 2);
  for (const auto& v : j["vocabularies"]) {
    CHECK(v["tokens"].get<int>() > 50);
    CHECK(v["states"].get<int>() > 10);
    CHECK(v["cold_us_per_token"].get<double>() > 0);
    CHECK(v["warm_us_per_token"].get<double>() > 0);
  }
  CHECK(j["vocabularies"][1]["vocab"] == "llama-spm");
  CHECK(j["model"].is_null());
}
