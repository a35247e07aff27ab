// ops::ssm_conv vs ref::ssm_conv: the causal conv1d with SiLU of every sequence of a step, each
// continuing from its slot's state (or from zeros, pos0 = 0), over channel counts around the
// workgroup size, 2 to 4 taps, strided input rows (the conv input is part of a wider projection),
// with a bias (Mamba-2's), without SiLU, LFM2's gated short conv (y = c · conv(b · x)), one call or two (the state
// carries the sequence over), every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "linear_case.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

struct ConvCase {
  uint32_t channels, kernel, stride;  // stride: floats between input rows (>= channels)
  std::vector<test::StepSeq> seqs;
  bool bias = false, silu = true, gated = false;
  uint32_t slots = 4;

  std::string describe() const {
    return fmt::format("channels={} kernel={} stride={}{}{}{}{}", channels, kernel, stride, bias ? " bias" : "",
                       silu ? "" : " no silu", gated ? " gated" : "", test::describe(seqs));
  }
};

struct ConvResult {
  std::vector<float> y, state;
};

ConvResult reference(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                     const std::vector<float>& state, const std::vector<float>& bias) {
  uint32_t n = test::total_tokens(c.seqs);
  ConvResult r{std::vector<float>(size_t(n) * c.channels), state};
  size_t per_slot = size_t(c.kernel - 1) * c.channels, token0 = 0;
  for (const test::StepSeq& q : c.seqs) {
    float* st = r.state.data() + q.slot * per_slot;
    if (q.n == 0) continue;  // an unused entry: its slot is left alone
    if (q.pos0 == 0) std::fill_n(st, per_slot, 0.0f);
    std::vector<float> xs;  // the sequence's rows, packed
    size_t row = (c.gated ? 3 : 1) * c.channels;
    for (size_t t = token0; t < token0 + q.n; ++t)
      xs.insert(xs.end(), x.begin() + t * c.stride, x.begin() + t * c.stride + row);
    float* y = r.y.data() + token0 * c.channels;
    if (c.gated)
      ref::short_conv_gated(y, st, xs.data(), w.data(), q.n, c.channels, c.kernel);
    else
      ref::ssm_conv(y, st, xs.data(), w.data(), q.n, c.channels, c.kernel, c.silu, c.bias ? bias.data() : nullptr);
    token0 += q.n;
  }
  return r;
}

ConvResult run_gpu(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                   const std::vector<float>& state, const std::vector<float>& bias = {0.0f}) {
  Context& ctx = test::gpu();
  uint32_t n = test::total_tokens(c.seqs);
  Buffer gx = test::to_gpu(x, "x"), gw = test::to_gpu(w, "w"), gs = test::to_gpu(state, "state");
  Buffer gb = test::to_gpu(bias, "bias");
  Buffer step = test::step_buffer(c.seqs), gy(ctx, size_t(n) * c.channels * 4, Memory::Device, "y");
  Stream s(ctx);
  ops::ssm_conv(s, gx, gw, gs, step, gy,
                {.n_tokens = n,
                 .seqs = uint32_t(c.seqs.size()),
                 .channels = c.channels,
                 .kernel = c.kernel,
                 .token_stride = c.stride,
                 .silu = c.silu,
                 .gated = c.gated},
                c.bias ? BufferView(gb) : BufferView{});
  s.submit_wait();
  return {test::from_gpu(gy), test::from_gpu(gs)};
}

}  // namespace

TEST_CASE("ssm_conv matches the reference", "[ssm_conv]") {
  const ConvCase cases[] = {{1, 4, 1, {{0, 0, 1}}},
                            {37, 4, 40, {{1, 0, 7}, {0, 3, 1}}},
                            {300, 4, 300, {{2, 5, 63}, {0, 0, 64}, {3, 1, 1}}},
                            {257, 2, 300, {{1, 9, 65}, {3, 0, 0}, {2, 0, 2}}},
                            {128, 3, 200, {{3, 0, 130}, {0, 2, 3}}},
                            {300, 4, 340, {{2, 5, 9}, {0, 0, 3}}, true},
                            {70, 3, 70, {{1, 2, 5}}, false, false},
                            {257, 4, 300, {{0, 0, 4}, {1, 3, 2}}, true, false},
                            {70, 3, 215, {{1, 2, 5}, {0, 0, 9}}, false, false, true},
                            {300, 3, 900, {{3, 0, 2}}, false, false, true}};
  test::for_each_profile([&](const Profile& profile) {
    uint32_t seed = 10;
    for (const ConvCase& c : cases) {
      uint32_t n = test::total_tokens(c.seqs);
      auto x = test::random_floats(size_t(n) * c.stride, seed++, -3, 3);
      auto w = test::random_floats(size_t(c.channels) * c.kernel, seed++);
      auto state = test::random_floats(size_t(c.slots) * (c.kernel - 1) * c.channels, seed++, -3, 3);
      auto bias = test::random_floats(c.channels, seed++);
      ConvResult want = reference(c, x, w, state, bias), got = run_gpu(c, x, w, state, bias);
      std::string what = fmt::format("ssm_conv {} profile={}", c.describe(), profile.name);
      test::check_nmse(got.y, want.y, 1e-12, what + " y");
      test::check_nmse(got.state, want.state, 0.0, what + " state");
    }
  });
}

// A sequence's tokens in two calls (the second continuing from the state the first left) equal
// them in one call, including a first call shorter than the window (1 token, 4 taps).
TEST_CASE("ssm_conv carries the state over between calls", "[ssm_conv]") {
  const uint32_t channels = 70, kernel = 4, n = 40;
  auto x = test::random_floats(size_t(n) * channels, 20, -3, 3);
  auto w = test::random_floats(size_t(channels) * kernel, 21);
  auto state = test::random_floats(size_t(4) * (kernel - 1) * channels, 22);
  ConvCase one{channels, kernel, channels, {{2, 0, n}}};
  ConvResult whole = run_gpu(one, x, w, state);
  for (uint32_t a : {1u, 2u, 17u}) {
    ConvCase first{channels, kernel, channels, {{2, 0, a}}}, second{channels, kernel, channels, {{2, a, n - a}}};
    std::vector<float> x1(x.begin(), x.begin() + a * channels), x2(x.begin() + a * channels, x.end());
    ConvResult r1 = run_gpu(first, x1, w, state), r2 = run_gpu(second, x2, w, r1.state);
    r1.y.insert(r1.y.end(), r2.y.begin(), r2.y.end());
    test::check_nmse(r1.y, whole.y, 0.0, fmt::format("ssm_conv split at {} y", a));
    test::check_nmse(r2.state, whole.state, 0.0, fmt::format("ssm_conv split at {} state", a));
  }
}

TEST_CASE("ssm_conv rejects bad shapes", "[ssm_conv]") {
  Context& ctx = test::gpu();
  Buffer b(ctx, 4096, Memory::Device, "b");
  Stream s(ctx);
  CHECK_THROWS_WITH(ops::ssm_conv(s, b, b, b, b, b, {.n_tokens = 1, .channels = 8, .kernel = 1}),
                    "ssm_conv: kernel size 1 must be from 2 to 8");
  CHECK_THROWS_WITH(ops::ssm_conv(s, b, b, b, b, b, {.n_tokens = 1, .channels = 8, .token_stride = 4}),
                    "ssm_conv: token_stride 4 below 8 values a row");
}
