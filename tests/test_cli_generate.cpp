// `vkllm run` as llama.cpp and Ollama users drive it: the prompt from -f FILE, stdin or an
// argument; --stop, --ignore-eos, -n -1 up to a full context, random seeds that can be repeated,
// --json with log-probabilities, Ctrl-C.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"

using namespace vkllm;
using test::run_vkllm;
using test::TempFile;

namespace {

const TempFile& model() {
  static TempFile f = [] {
    TempFile t("generate");
    t.write(make_fixture_model({.dim = 64,
                                .n_layers = 1,
                                .n_heads = 2,
                                .n_kv_heads = 1,
                                .head_dim = 32,
                                .hidden_dim = 96,
                                .vocab_size = 300,
                                .seq_len = 64,
                                .weight_type = DType::Q8_0}));
    return t;
  }();
  return f;
}

nlohmann::json run_json(const std::string& args) {
  auto r = run_vkllm(fmt::format("run -m {} --json {}", model().path, args));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

std::string seed_of(const std::string& err) {
  std::smatch m;
  return std::regex_search(err, m, std::regex(R"(\(seed (\d+))")) ? m[1].str() : "";
}

}  // namespace

TEST_CASE("vkllm run takes the prompt from -p, -f FILE, -f - and an argument alike", "[cli-generate]") {
  TempFile prompt("prompt");
  prompt.write(std::string("hello world"));
  std::string base = fmt::format("run -m {} -n 6 -s 3", model().path);
  auto p = run_vkllm(base + " -p 'hello world'");
  auto f = run_vkllm(base + " -f " + prompt.path);
  auto in = run_vkllm(base + " -f -", "", prompt.path);
  auto arg = run_vkllm(base + " 'hello world'");
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  CHECK(p.out.starts_with("hello world"));
  for (const auto* r : {&f, &in, &arg}) {
    CHECK(r->exit_code == 0);
    CHECK(r->out == p.out);
  }
  auto missing = run_vkllm(fmt::format("run -m {} -f /nonexistent/prompt.txt", model().path));
  CHECK(missing.err == "error: /nonexistent/prompt.txt: no such file or directory\n");
  auto tok = run_vkllm(fmt::format("tokenize -m {} -f -", model().path), "", prompt.path);
  auto tok_p = run_vkllm(fmt::format("tokenize -m {} 'hello world'", model().path));
  CHECK(tok.exit_code == 0);
  CHECK(tok.out == tok_p.out);
}

TEST_CASE("vkllm run --json: text, tokens, log-probabilities, finish reason, timings", "[cli-generate]") {
  nlohmann::json j = run_json("-p hello -n 5 --temp 0 --logprobs 3");
  CHECK(j["prompt"] == "hello");
  CHECK(j["tokens"].size() <= 5);
  CHECK(j["logprobs"].size() == j["tokens"].size());
  CHECK(j["finish_reason"] == (j["tokens"].size() == 5 ? "length" : "eog"));
  for (const auto& e : j["logprobs"]) {
    REQUIRE(e["top"].size() == 3);
    CHECK(e["token"] == e["top"][0]["token"]);  // greedy: the most likely one
    CHECK(e["logprob"].get<double>() <= 0);
    CHECK(e["top"][0]["logprob"].get<double>() >= e["top"][1]["logprob"].get<double>());
  }
  CHECK(j["timings"]["generated_tokens"] == j["tokens"].size());
  CHECK(j.contains("seed"));
  auto det = run_vkllm(fmt::format("detokenize -m {} --json --tokens 1,2,3", model().path));
  CHECK(nlohmann::json::parse(det.out).contains("text"));
  auto tok = run_vkllm(fmt::format("tokenize -m {} --json --pieces -p hi", model().path));
  auto t = nlohmann::json::parse(tok.out);
  CHECK(t["tokens"].size() == t["pieces"].size());
}

TEST_CASE("vkllm run --stop ends before the stop text, which is not printed", "[cli-generate]") {
  // The default model's greedy continuation (docs/decisions.md): "In the beginning of the Son of man, ..."
  auto full = run_vkllm("run -p 'In the beginning' -n 8 --temp 0");
  INFO(full.err);
  REQUIRE(full.out.starts_with("In the beginning of the Son of man"));
  auto cut = run_vkllm("run -p 'In the beginning' -n 8 --temp 0 --stop zzz --stop ' man'");
  CHECK(cut.out == "In the beginning of the Son of\n");
  auto j = nlohmann::json::parse(run_vkllm("run -p 'In the beginning' -n 8 --temp 0 --stop Son --json").out);
  CHECK(j["text"] == " of the ");
  CHECK(j["finish_reason"] == "stop");
}

TEST_CASE("vkllm run -n -1 runs until the context is full and says so", "[cli-generate]") {
  auto r = run_vkllm(fmt::format("run -m {} -p hello -n -1 --ignore-eos -c 24", model().path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("stopped: the context of 24 tokens is full (use --ctx for more)") != std::string::npos);
  std::smatch m;
  std::regex counts(R"(prompt: (\d+) tokens?, .*generation: (\d+) tokens?)");
  REQUIRE(std::regex_search(r.err, m, counts));
  CHECK(std::stoi(m[1].str()) + std::stoi(m[2].str()) == 24 + 1);  // the last token needs no room
}

TEST_CASE("vkllm run --ignore-eos never samples an end-of-generation token", "[cli-generate]") {
  // Near-uniform sampling over 300 tokens: find a seed whose run ends at EOS, then rerun it with
  // --ignore-eos (same seed, so the same draws until then).
  std::string seed;
  for (int s = 1; s <= 40 && seed.empty(); ++s)
    if (run_json(fmt::format("-p hello -n -1 --temp 50 --top-k 0 --top-p 1 --min-p 0 -s {}", s))["finish_reason"] ==
        "eog")
      seed = std::to_string(s);
  REQUIRE(!seed.empty());
  nlohmann::json j = run_json("-p hello -n -1 --temp 50 --top-k 0 --top-p 1 --min-p 0 --ignore-eos -s " + seed);
  CHECK(j["finish_reason"] == "context");
  CHECK(std::count(j["tokens"].begin(), j["tokens"].end(), 2) == 0);  // EOS of the fixture vocabulary
}

TEST_CASE("vkllm run without a seed (or -s -1) prints the one it drew, which repeats the run", "[cli-generate]") {
  std::string base = fmt::format("run -m {} -p hello -n 8 --ignore-eos", model().path);
  auto a = run_vkllm(base), b = run_vkllm(base + " -s -1");
  std::string seed = seed_of(a.err);
  REQUIRE(!seed.empty());
  CHECK(!seed_of(b.err).empty());
  auto again = run_vkllm(base + " -s " + seed);
  CHECK(again.out == a.out);
}

TEST_CASE("Ctrl-C during vkllm run prints the statistics and the seed, exit 130", "[cli-generate]") {
  TempFile out("sigint_out"), err("sigint_err");
  // Interrupt once text has appeared (the handler is in place before the prompt is echoed).
  std::string script = fmt::format(
      "{} run -m {} -p hello -n -1 --ignore-eos -c 4096 -s 9 >{} 2>{} </dev/null & pid=$!; "
      "for i in $(seq 600); do [ -s {} ] && break; sleep 0.05; done; kill -INT $pid; wait $pid",
      VKLLM_BIN, model().path, out.path, err.path, out.path);
  int status = std::system(script.c_str());
  std::ifstream e(err.path);
  std::string text(std::istreambuf_iterator<char>(e), {});
  INFO(text);
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(text.find("prompt: ") != std::string::npos);
  CHECK(text.find("(seed 9; interrupted)") != std::string::npos);
}
