// `vkllm perplexity` on a small fixture: chunks of the model's own context by default, and one
// error line for a context or a text that cannot make a chunk.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"

using namespace vkllm;
using test::run_vkllm;
using test::TempFile;

namespace {

const TempFile& perplexity_model() {
  static TempFile f = [] {
    TempFile t("ppl");
    t.write(make_fixture_model(
        {.dim = 64, .n_layers = 1, .n_heads = 2, .n_kv_heads = 1, .head_dim = 32, .hidden_dim = 96, .seq_len = 32}));
    return t;
  }();
  return f;
}

}  // namespace

TEST_CASE("vkllm perplexity uses the model's context and rejects what cannot make a chunk", "[cli-perplexity]") {
  TempFile text("ppl_text"), short_text("ppl_short");
  std::string words;
  for (int i = 0; i < 40; ++i) words += "the quick brown fox ";
  text.write(words);
  short_text.write(std::string("hi"));
  auto r = run_vkllm(fmt::format("perplexity -m {} -f {} --json", perplexity_model().path, text.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ctx"] == 32);
  CHECK(j["chunks"] == j["tokens"].get<int>() / 32);
  CHECK(j["scored"] == j["chunks"].get<int>() * 31);

  auto wide = run_vkllm(fmt::format("perplexity -m {} -f {} -c 48", perplexity_model().path, text.path));
  CHECK(wide.exit_code == 0);
  CHECK(wide.err.find("warning: --ctx 48 is more than the 32 tokens") != std::string::npos);
  CHECK(wide.out.find(" chunks of 48") != std::string::npos);

  for (auto [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"-c 1 -f " + text.path, "--ctx 1: a chunk needs at least 2 tokens"},
           {"-f " + short_text.path, "fewer than one chunk of 32 (use a smaller --ctx)"},
           {"-f /nonexistent.txt", "/nonexistent.txt: no such file or directory"},
       }) {
    auto e = run_vkllm(fmt::format("perplexity -m {} {}", perplexity_model().path, args));
    INFO(args << "\n" << e.err);
    CHECK(e.exit_code == 1);
    CHECK(e.err.starts_with("error: "));
    CHECK(e.err.find(message) != std::string::npos);
    CHECK(std::count(e.err.begin(), e.err.end(), '\n') == 1);
  }
}
