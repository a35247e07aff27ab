// `vkllm embed`: one vector a line (the model's width, unit length), the JSON and array forms,
// inputs from -p, -f and stdin, and one error line for bad input and flags.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catch.h"
#include "cli.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"

using namespace vkllm;
using test::run_vkllm;
using test::TempFile;

namespace {

// The Qwen3-Embedding preset as a file (F32 weights).
const TempFile& embed_model() {
  static TempFile f = [] {
    TempFile t("embed");
    t.write(make_fixture_model(test::family_fixture("qwen3-embedding", DType::F32).spec));
    return t;
  }();
  return f;
}

uint32_t width() { return test::family_fixture("qwen3-embedding", DType::F32).spec.dim; }

std::vector<std::vector<double>> vectors(const std::string& out) {
  std::vector<std::vector<double>> v;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    v.emplace_back();
    for (double x; in >> x;) v.back().push_back(x);
  }
  return v;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

}  // namespace

TEST_CASE("vkllm embed prints one unit vector a line, or JSON", "[cli][embed]") {
  TempFile inputs("embed-inputs");
  inputs.write("In the beginning\nIn the beginning\nsomething else\n");
  test::CliResult r = run_vkllm(fmt::format("embed -m {} -f {}", embed_model().path, inputs.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto v = vectors(r.out);
  REQUIRE(v.size() == 3);
  for (const auto& e : v) {
    CHECK(e.size() == width());
    CHECK(norm(e) == Approx(1).epsilon(1e-5));
  }
  CHECK(v[0] == v[1]);
  CHECK(v[0] != v[2]);

  test::CliResult piped = run_vkllm(fmt::format("embed -m {}", embed_model().path), "", inputs.path);  // stdin
  CHECK(piped.out == r.out);
  test::CliResult raw =
      run_vkllm(fmt::format("embed -m {} -p 'In the beginning' --embd-normalize -1", embed_model().path));
  REQUIRE(raw.exit_code == 0);
  CHECK(norm(vectors(raw.out)[0]) != Approx(1).epsilon(1e-3));

  test::CliResult j = run_vkllm(
      fmt::format("embed -m {} -p 'a<sep>b' --embd-separator '<sep>' --embd-output-format json+", embed_model().path));
  INFO(j.err);
  REQUIRE(j.exit_code == 0);
  nlohmann::json doc = nlohmann::json::parse(j.out);
  CHECK(doc["object"] == "list");
  REQUIRE(doc["data"].size() == 2);
  CHECK(doc["data"][1]["index"] == 1);
  CHECK(doc["data"][1]["embedding"].size() == width());
  CHECK(doc["cosineSimilarity"][0][0].get<double>() == Approx(1));
  test::CliResult a =
      run_vkllm(fmt::format("embed -m {} -p x --embd-output-format array --pooling mean", embed_model().path));
  REQUIRE(a.exit_code == 0);
  CHECK(nlohmann::json::parse(a.out)[0].size() == width());
}

TEST_CASE("vkllm embed refuses empty input, too long input and bad flags with one line", "[cli][embed]") {
  auto one_error = [](const test::CliResult& r, int code, const std::string& says) {
    INFO(r.err);
    CHECK(r.exit_code == code);
    CHECK(r.err.find(says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
  };
  one_error(run_vkllm(fmt::format("embed -m {} -p ''", embed_model().path)), 1, "the input is empty");
  TempFile blank("embed-blank");
  blank.write("a\n\nb\n");
  one_error(run_vkllm(fmt::format("embed -m {} -f {}", embed_model().path, blank.path)), 1, "input 2 (of 3) is empty");
  one_error(run_vkllm(fmt::format("embed -m {} --ctx 4 -p 'a longer text than four tokens'", embed_model().path)), 1,
            "the context holds 4");
  one_error(run_vkllm("embed -p x --pooling none"), 2, "pooling none gives a vector per token");
  one_error(run_vkllm("embed -p x --pooling rank"), 2, "reranker");
  one_error(run_vkllm("embed -p x --embd-normalize -2"), 2, "--embd-normalize");
  one_error(run_vkllm("embed -p x --embd-output-format csv"), 2, "csv");
}
