// The embedded default model against what its training script computed in PyTorch/NumPy
// (models/default.json): greedy continuations token for token, and held-out perplexity.
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"

using vkllm::test::run_vkllm;

namespace {

nlohmann::json default_json() {
  std::ifstream in(VKLLM_SOURCE_DIR "/models/default.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("greedy text of the default model equals the training script's", "[default-model]") {
  for (const auto& sample : default_json()["samples"]) {
    if (sample["temp"].get<double>() != 0.0) continue;
    std::string prompt = sample["prompt"], want = sample["text"];
    auto r = run_vkllm(fmt::format("run -p \"{}\" -n {} --temp 0 --repeat-penalty 1", prompt, sample["ids"].size()));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == want + "\n");
  }
}

TEST_CASE("perplexity of the default model agrees with the training script", "[default-model]") {
  auto want = default_json()["evaluation"]["heldout_sample"];
  auto r = run_vkllm(fmt::format("perplexity -f {}/models/heldout_sample.txt --ctx {} --json", VKLLM_SOURCE_DIR,
                                 want["ctx"].get<int>()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto got = nlohmann::json::parse(r.out);
  double ppl = got["perplexity"], expected = want["ppl"];
  fmt::print("perplexity of heldout_sample.txt: vkllm {:.4f}, training script {:.4f} ({:+.3f}%)\n", ppl, expected,
             100 * (ppl / expected - 1));
  CHECK(got["scored"] == want["n_scored"]);
  CHECK(std::abs(ppl / expected - 1) < 0.01);
}
