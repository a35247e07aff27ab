// The worked attention examples in tests/data/ (copied from the project's shared test data):
//   mha_worked_example.json: T=3, d_model=4, 2 heads of d_k=2, no mask, then W_O; 4 decimals.
//   causal_attention_example.json: N=5, d=8, one head, causal; weights 3 decimals, output 6.
// The CPU path (reference ops plus plain x @ W loops) runs everywhere. The GPU path builds the
// same attention from kernels: projections and Q K^T and A V by ops::matmul, the causal mask by
// ops::add, ops::softmax_rows, the concatenation by buffer copies; it is compiled only where
// ops_matmul.h exists.
#include <fmt/format.h>
#include <cmath>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"
#if __has_include("ops_matmul.h")
#include "ops_matmul.h"
#define VKLLM_HAVE_MATMUL 1
#endif

using namespace vkllm;
using json = nlohmann::json;

namespace {

struct Mat {
  size_t rows = 0, cols = 0;
  std::vector<float> v;  // row-major
  float at(size_t r, size_t c) const { return v[r * cols + c]; }
};

Mat read_mat(const json& j) {
  Mat m{j.size(), j.at(0).size(), {}};
  for (const json& row : j)
    for (const json& x : row) m.v.push_back(x.get<float>());
  return m;
}

Mat transpose(const Mat& m) {
  Mat t{m.cols, m.rows, std::vector<float>(m.v.size())};
  for (size_t r = 0; r < m.rows; ++r)
    for (size_t c = 0; c < m.cols; ++c) t.v[c * m.rows + r] = m.at(r, c);
  return t;
}

// One attention example: per-head projections (x @ W convention, W is (d_model, d_k)), an
// optional output projection, causal or not.
struct Example {
  json expected;
  Mat x;
  std::vector<Mat> wq, wk, wv;
  std::optional<Mat> wo;
  bool causal = false;
};

Example read_example(const char* file) {
  std::ifstream in(std::string(VKLLM_SOURCE_DIR) + "/tests/data/" + file);
  REQUIRE(in.good());
  json j = json::parse(in);
  Example e{.expected = j.at("expected"), .x = read_mat(j.at("X"))};
  if (j.contains("W_Q")) {  // one head
    e.wq = {read_mat(j["W_Q"])}, e.wk = {read_mat(j["W_K"])}, e.wv = {read_mat(j["W_V"])};
    e.causal = true;
  }
  for (int h = 1; j.contains(fmt::format("W_Q{}", h)); ++h) {
    e.wq.push_back(read_mat(j[fmt::format("W_Q{}", h)]));
    e.wk.push_back(read_mat(j[fmt::format("W_K{}", h)]));
    e.wv.push_back(read_mat(j[fmt::format("W_V{}", h)]));
  }
  if (j.contains("W_O")) e.wo = read_mat(j["W_O"]);
  return e;
}

struct ExampleResult {
  std::vector<Mat> weights, heads;  // per head: softmax weights (T, T), output (T, d_k)
  Mat concat, output;
};

void check_close(const Mat& got, const json& want, double margin, const std::string& what) {
  Mat w = read_mat(want);
  REQUIRE(got.rows == w.rows);
  REQUIRE(got.cols == w.cols);
  double worst = 0;
  for (size_t i = 0; i < w.v.size(); ++i) worst = std::max(worst, std::abs(double(got.v[i]) - w.v[i]));
  fmt::print("{}: max |diff| {:.2e} (allowed {:.1e})\n", what, worst, margin);
  CHECK(worst <= margin);
}

// Expected values are rounded to `decimals`, so a right answer is within half a unit of the last.
double rounded(int decimals) { return 0.5 * std::pow(10.0, -decimals) + 1e-6; }

void check_result(const ExampleResult& r, const Example& e, const std::string& path) {
  const json& x = e.expected;
  if (x.contains("weights")) {  // the causal example: one head, no W_O
    check_close(r.weights[0], x["weights"], rounded(3), path + " causal weights");
    check_close(r.heads[0], x["output"], rounded(6), path + " causal output");
    return;
  }
  for (size_t h = 0; h < e.wq.size(); ++h) {
    check_close(r.weights[h], x[fmt::format("A{}", h + 1)], rounded(4), fmt::format("{} mha A{}", path, h + 1));
    check_close(r.heads[h], x[fmt::format("head{}", h + 1)], rounded(4), fmt::format("{} mha head{}", path, h + 1));
  }
  check_close(r.concat, x["concat"], rounded(4), path + " mha concat");
  check_close(r.output, x["output"], rounded(4), path + " mha output");
}

// --- CPU path

// y(n, m) = x(n, k) @ w(k, m), accumulated in double.
Mat matmul_xw(const Mat& x, const Mat& w) {
  Mat y{x.rows, w.cols, std::vector<float>(x.rows * w.cols)};
  for (size_t n = 0; n < x.rows; ++n)
    for (size_t m = 0; m < w.cols; ++m) {
      double acc = 0;
      for (size_t k = 0; k < x.cols; ++k) acc += double(x.at(n, k)) * w.at(k, m);
      y.v[n * w.cols + m] = float(acc);
    }
  return y;
}

Mat concat_heads(const std::vector<Mat>& heads) {
  size_t rows = heads[0].rows, width = heads[0].cols;
  Mat c{rows, width * heads.size(), {}};
  for (size_t r = 0; r < rows; ++r)
    for (const Mat& h : heads) c.v.insert(c.v.end(), h.v.begin() + r * width, h.v.begin() + (r + 1) * width);
  return c;
}

ExampleResult cpu_forward(const Example& e) {
  ExampleResult r;
  for (size_t h = 0; h < e.wq.size(); ++h) {
    Mat q = matmul_xw(e.x, e.wq[h]), k = matmul_xw(e.x, e.wk[h]), v = matmul_xw(e.x, e.wv[h]);
    Mat a = matmul_xw(q, transpose(k));
    if (e.causal)
      for (size_t i = 0; i < a.rows; ++i)
        for (size_t j = i + 1; j < a.cols; ++j) a.v[i * a.cols + j] = -INFINITY;
    ref::softmax_rows(a.v.data(), a.v.data(), a.rows, a.cols, float(1 / std::sqrt(double(q.cols))));
    r.heads.push_back(matmul_xw(a, v));
    r.weights.push_back(std::move(a));
  }
  r.concat = concat_heads(r.heads);
  if (e.wo) r.output = matmul_xw(r.concat, *e.wo);
  return r;
}

}  // namespace

TEST_CASE("mha worked example on the CPU reference", "[mha]") {
  Example e = read_example("mha_worked_example.json");
  REQUIRE(e.wq.size() == 2);
  check_result(cpu_forward(e), e, "cpu");
}

TEST_CASE("causal attention example on the CPU reference", "[mha]") {
  Example e = read_example("causal_attention_example.json");
  check_result(cpu_forward(e), e, "cpu");
}

#ifdef VKLLM_HAVE_MATMUL
namespace {

// --- GPU path. ops::matmul computes y(N, M) = x(N, K) . W(M, K)^T, so x @ W needs W^T uploaded.
ExampleResult gpu_forward(const Example& e) {
  Context& ctx = test::gpu();
  const uint32_t t = uint32_t(e.x.rows), d_model = uint32_t(e.x.cols), d_k = uint32_t(e.wq[0].cols);
  const uint32_t n_heads = uint32_t(e.wq.size());
  std::deque<Buffer> bufs;  // stable addresses; all live until the stream has run
  auto input = [&](const Mat& m) -> const Buffer& { return bufs.emplace_back(test::to_gpu(m.v)); };
  auto output = [&](size_t floats) -> const Buffer& {
    return bufs.emplace_back(ctx, floats * 4, Memory::Device, "attention");
  };
  Mat mask{t, t, std::vector<float>(t * t, 0.0f)};
  for (uint32_t i = 0; i < t; ++i)
    for (uint32_t j = i + 1; j < t; ++j) mask.v[i * t + j] = -INFINITY;

  Stream s(ctx);
  const Buffer& x = input(e.x);
  const Buffer& concat = output(t * n_heads * d_k);
  std::vector<const Buffer*> weights, heads;
  for (uint32_t h = 0; h < n_heads; ++h) {
    const Buffer &q = output(t * d_k), &k = output(t * d_k), &vt = output(d_k * t);
    const Buffer &a = output(t * t), &o = output(t * d_k);
    ops::matmul(s, DType::F32, input(transpose(e.wq[h])), x, q, d_k, t, d_model);   // Q = X W_Q
    ops::matmul(s, DType::F32, input(transpose(e.wk[h])), x, k, d_k, t, d_model);   // K = X W_K
    ops::matmul(s, DType::F32, x, input(transpose(e.wv[h])), vt, t, d_k, d_model);  // V^T = W_V^T X^T
    ops::matmul(s, DType::F32, k, q, a, t, t, d_k);                                 // scores = Q K^T
    if (e.causal) ops::add(s, a, input(mask), a, t * t);
    ops::softmax_rows(s, a, a, t, t, float(1 / std::sqrt(double(d_k))));
    ops::matmul(s, DType::F32, vt, a, o, d_k, t, t);  // O = A V
    for (uint32_t r = 0; r < t; ++r)
      s.copy(o.view(r * d_k * 4, d_k * 4), concat.view((r * n_heads + h) * d_k * 4, d_k * 4));
    weights.push_back(&a), heads.push_back(&o);
  }
  const Buffer* out = nullptr;
  if (e.wo) {
    out = &output(t * e.wo->cols);
    ops::matmul(s, DType::F32, input(transpose(*e.wo)), concat, *out, uint32_t(e.wo->cols), t, n_heads * d_k);
  }
  s.submit_wait();

  ExampleResult r;
  for (uint32_t h = 0; h < n_heads; ++h) {
    r.weights.push_back({t, t, test::from_gpu(*weights[h])});
    r.heads.push_back({t, d_k, test::from_gpu(*heads[h])});
  }
  r.concat = {t, n_heads * d_k, test::from_gpu(concat)};
  if (out) r.output = {t, e.wo->cols, test::from_gpu(*out)};
  return r;
}

}  // namespace

TEST_CASE("mha worked example on the GPU kernels", "[mha]") {
  Example e = read_example("mha_worked_example.json");
  test::for_each_profile([&](const Profile& profile) { check_result(gpu_forward(e), e, "gpu " + profile.name); });
}

TEST_CASE("causal attention example on the GPU kernels", "[mha]") {
  Example e = read_example("causal_attention_example.json");
  test::for_each_profile([&](const Profile& profile) { check_result(gpu_forward(e), e, "gpu " + profile.name); });
}
#endif
