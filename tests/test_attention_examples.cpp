// The two worked examples of tests/data through ops::attention (flash) and ops::attention_naive,
// whose softmax output also gives the attention weights. The projections X.W are plain CPU loops
// here; the fully GPU version with matmul lives with the model tests.
#include <fmt/format.h>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "push.h"

using namespace vkllm;
using Matrix = std::vector<std::vector<double>>;

namespace {

nlohmann::json load_example(const char* name) {
  std::ifstream f(std::string(VKLLM_SOURCE_DIR "/tests/data/") + name);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

Matrix matrix(const nlohmann::json& j) { return j.get<Matrix>(); }

Matrix matmul(const Matrix& a, const Matrix& b) {
  Matrix c(a.size(), std::vector<double>(b[0].size(), 0.0));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < b.size(); ++k)
      for (size_t j = 0; j < b[0].size(); ++j) c[i][j] += a[i][k] * b[k][j];
  return c;
}

// Per-head projections (tokens, d) laid out as (tokens, heads, d), the Q layout; K and V use
// the same numbers in the KV-cache layout (heads, tokens, d).
std::vector<float> token_major(const std::vector<Matrix>& heads) {
  std::vector<float> out;
  for (size_t t = 0; t < heads[0].size(); ++t)
    for (const Matrix& h : heads)
      for (double x : h[t]) out.push_back(float(x));
  return out;
}

std::vector<float> head_major(const std::vector<Matrix>& heads) {
  std::vector<float> out;
  for (const Matrix& h : heads)
    for (const auto& row : h)
      for (double x : row) out.push_back(float(x));
  return out;
}

struct Result {
  std::vector<float> o;        // (tokens, heads, d)
  std::vector<float> weights;  // (heads, tokens, tokens), from the naive path
};

Result run(const std::vector<Matrix>& q, const std::vector<Matrix>& k, const std::vector<Matrix>& v, bool causal,
           bool naive) {
  Context& ctx = test::gpu();
  uint32_t heads = uint32_t(q.size()), tokens = uint32_t(q[0].size()), d = uint32_t(q[0][0].size());
  ops::AttentionShape sh{.n_q = tokens,
                         .n_heads = heads,
                         .n_kv_heads = heads,
                         .dk = d,
                         .dv = d,
                         .kv_type = DType::F32,
                         .causal = causal,
                         .max_kv = tokens};
  Buffer gq = test::to_gpu(token_major(q)), gk = test::to_gpu(head_major(k)), gv = test::to_gpu(head_major(v));
  Buffer go(ctx, size_t(tokens) * heads * d * 4, Memory::Device, "o"), step(ctx, 16, Memory::Host, "step");
  push::StepParams sp{.pos0 = 0, .n_tokens = tokens, .n_kv = tokens};
  step.upload(&sp, sizeof(sp));
  uint64_t scratch_bytes = naive ? ops::attention_naive_scratch_bytes(sh) : ops::attention_scratch_bytes(ctx, sh);
  Buffer scratch(ctx, std::max<uint64_t>(scratch_bytes, 4), Memory::Device, "scratch");
  ops::clear_attention_scratch(ctx, scratch);
  Stream s(ctx);
  if (naive)
    ops::attention_naive(s, sh, gq, gk, gv, step, go, scratch);
  else
    ops::attention(s, sh, gq, gk, gv, step, go, scratch);
  s.submit_wait();
  Result r{.o = test::from_gpu(go)};
  if (naive) r.weights = scratch.download<float>(size_t(heads) * tokens * tokens);
  return r;
}

double g_max_diff = 0;  // largest |got - want| since the last report

// |got - want| within the rounding of the expected values (`decimals` places) plus f32 slack.
void check_close(float got, double want, int decimals, const std::string& what) {
  double tol = 0.5 * std::pow(10.0, -decimals) + 2e-7;
  INFO(fmt::format("{}: got {:.8f} want {:.8f} (tolerance {:.1e})", what, got, want, tol));
  CHECK(std::abs(got - want) <= tol);
  g_max_diff = std::max(g_max_diff, std::abs(got - want));
}

void report(const std::string& what) {
  fmt::print("{}: max |diff| {:.2e}\n", what, g_max_diff);
  g_max_diff = 0;
}

}  // namespace

TEST_CASE("attention reproduces the two-head worked example", "[attention]") {
  nlohmann::json ex = load_example("mha_worked_example.json");
  Matrix x = matrix(ex["X"]), wo = matrix(ex["W_O"]);
  std::vector<Matrix> q, k, v;
  for (const char* h : {"1", "2"}) {
    q.push_back(matmul(x, matrix(ex[std::string("W_Q") + h])));
    k.push_back(matmul(x, matrix(ex[std::string("W_K") + h])));
    v.push_back(matmul(x, matrix(ex[std::string("W_V") + h])));
  }
  const nlohmann::json& want = ex["expected"];
  for (bool naive : {false, true}) {
    Result r = run(q, k, v, /*causal=*/false, naive);
    std::string path = naive ? "naive" : "flash";
    // O (3 tokens, 2 heads, 2) is the concatenation of the heads; output = concat . W_O.
    Matrix concat(3, std::vector<double>(4));
    for (size_t t = 0; t < 3; ++t)
      for (size_t j = 0; j < 4; ++j) {
        concat[t][j] = r.o[t * 4 + j];
        check_close(r.o[t * 4 + j], want["concat"][t][j].get<double>(), 4,
                    fmt::format("{} concat[{}][{}]", path, t, j));
      }
    Matrix out = matmul(concat, wo);
    for (size_t t = 0; t < 3; ++t)
      for (size_t j = 0; j < 4; ++j)
        check_close(float(out[t][j]), want["output"][t][j].get<double>(), 4,
                    fmt::format("{} output[{}][{}]", path, t, j));
    report("worked example (4 decimals) " + path + " concat and output");
    for (size_t h = 0; naive && h < 2; ++h)
      for (size_t t = 0; t < 3; ++t)
        for (size_t u = 0; u < 3; ++u)
          check_close(r.weights[(h * 3 + t) * 3 + u], want[h == 0 ? "A1" : "A2"][t][u].get<double>(), 4,
                      fmt::format("A{}[{}][{}]", h + 1, t, u));
    if (naive) report("worked example (4 decimals) naive weights A1 A2");
  }
}

TEST_CASE("attention reproduces the causal single-head example", "[attention]") {
  nlohmann::json ex = load_example("causal_attention_example.json");
  Matrix x = matrix(ex["X"]);
  std::vector<Matrix> q{matmul(x, matrix(ex["W_Q"]))}, k{matmul(x, matrix(ex["W_K"]))}, v{matmul(x, matrix(ex["W_V"]))};
  const nlohmann::json& want = ex["expected"];
  for (bool naive : {false, true}) {
    Result r = run(q, k, v, /*causal=*/true, naive);
    std::string path = naive ? "naive" : "flash";
    for (size_t t = 0; t < 5; ++t)
      for (size_t j = 0; j < 8; ++j)
        check_close(r.o[t * 8 + j], want["output"][t][j].get<double>(), 6,
                    fmt::format("{} output[{}][{}]", path, t, j));
    report("causal example (6 decimals) " + path + " output");
    for (size_t t = 0; naive && t < 5; ++t)
      for (size_t u = 0; u < 5; ++u)
        check_close(r.weights[t * 5 + u], want["weights"][t][u].get<double>(), 3, fmt::format("weights[{}][{}]", t, u));
    if (naive) report("causal example (3 decimals) naive weights");
  }
}
