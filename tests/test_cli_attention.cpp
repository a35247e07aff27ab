// `vkllm attention` as a user runs it on the default model: the JSON object (layer, tokens,
// pieces, heads [head][query][key]) equal to the reference model's probabilities (f16 KV cache,
// max abs error <= 1e-3), -p tokenized as `vkllm tokenize` does, the text view, and one `error:`
// line with a non-zero exit for a bad layer, no or empty input, and a sequence longer than the context.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "gguf/reader.h"
#include "harness.h"
#include "reference/model.h"

using json = nlohmann::json;
using vkllm::test::run_vkllm;

namespace {

std::vector<float> flat(const json& heads) {
  std::vector<float> out;
  for (const json& h : heads)
    for (const json& row : h)
      for (const json& p : row) out.push_back(p.get<float>());
  return out;
}

void check_one_error(const vkllm::test::CliResult& r, int code, const std::string& says) {
  INFO(r.err);
  CHECK(r.exit_code == code);
  CHECK(r.out.empty());
  CHECK(r.err.starts_with("error: "));
  CHECK(r.err.find(says) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("vkllm attention prints the reference model's probabilities", "[cli][probs]") {
  auto r = run_vkllm("attention --tokens 1,300,392,394,4049,953,386,298 --layer 5 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["layer"] == 5);
  std::vector<int32_t> ids = j["tokens"].get<std::vector<int32_t>>();
  CHECK(ids == std::vector<int32_t>{1, 300, 392, 394, 4049, 953, 386, 298});
  CHECK(j["pieces"].size() == ids.size());
  CHECK(j["pieces"][0] == "<s>");
  vkllm::GgufFile file = vkllm::GgufFile::open(VKLLM_SOURCE_DIR "/models/default.gguf");
  vkllm::ModelConfig config = vkllm::ModelConfig::from_gguf(file);
  REQUIRE(j["heads"].size() == config.n_heads);
  REQUIRE(j["heads"][0].size() == ids.size());
  std::vector<float> want = vkllm::ref::Model(file, config, vkllm::DType::F16).attention_probabilities(ids, 5);
  vkllm::test::Comparison c = vkllm::test::compare(flat(j["heads"]), want);
  std::printf("vkllm attention --json vs ref::Model, default model layer 5: max |diff| %.3e\n", c.max_abs);
  CHECK(c.max_abs <= 1e-3);
  CHECK(j["heads"][0][0][1] == 0);  // causal

  // -p is tokenized as tokenize does; the text view names each query's strongest keys.
  auto tok = run_vkllm("tokenize -p 'In the beginning God' --json");
  auto p = run_vkllm("attention -p 'In the beginning God' --layer 0 --json");
  REQUIRE(p.exit_code == 0);
  CHECK(json::parse(p.out)["tokens"] == json::parse(tok.out)["tokens"]);
  auto text = run_vkllm("attention -p 'In the beginning God' --layer 0");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.starts_with("layer 0 of default model: 4 heads, 5 tokens"));
  CHECK(text.out.find("head 3\n") != std::string::npos);
  CHECK(text.out.find("' God'") != std::string::npos);
}

TEST_CASE("vkllm attention refuses a bad layer, no input and a sequence past the context", "[cli][probs]") {
  check_one_error(run_vkllm("attention -p hi --layer 6"), 1, "--layer 6: default model has 6 layers (0 to 5)");
  check_one_error(run_vkllm("attention --layer 0"), 2, "give --tokens IDS or -p TEXT");
  check_one_error(run_vkllm("attention --layer 0 -p ''"), 1, "the text is empty");
  check_one_error(run_vkllm("attention --layer 0 --tokens ''"), 1, "no token ids");
  check_one_error(run_vkllm("attention --layer 0 --tokens 1,2,3 -p x"), 2, "excludes");
  check_one_error(run_vkllm("attention --layer 0 --tokens 1,2,3 -c 2"), 1, "3 tokens do not fit a context of 2");
  check_one_error(run_vkllm("attention --layer 0 --tokens 1,99999"), 1, "outside the vocabulary");
  check_one_error(run_vkllm("attention --tokens 1"), 2, "--layer");
}
