// The Mamba-2 selective scan: ref::ssm_scan_chunked (the SSD form) against the recurrence
// ref::ssm_scan, and ops::ssm_scan against ref::ssm_scan: head sizes 4 to 64, state sizes 16 to
// 128 (48 too), one group or several, with and without the z gate, sequences of 1, 7, 64, 65 and
// 130 tokens in one step, each in its own slot, fresh (pos0 = 0: its slot's old state is ignored)
// or continuing, the state carried over between calls, every profile. Inputs laid out as the layer
// has them: x, B and C in the conv output's rows, dt and z in the input projection's.
#include <fmt/format.h>
#include <cmath>

#include "catch.h"
#include "harness.h"
#include "linear_case.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

struct ScanCase {
  uint32_t heads, head_dim, state, groups;
  std::vector<test::StepSeq> seqs;
  bool gate = true;
  uint32_t slots = 4;

  uint32_t d_inner() const { return heads * head_dim; }
  uint32_t bc() const { return groups * state; }
  uint32_t x_stride() const { return d_inner() + 2 * bc() + 3; }             // the conv output's row, padded
  uint32_t proj_stride() const { return 2 * d_inner() + 2 * bc() + heads; }  // z, xBC, dt
  std::string describe() const {
    return fmt::format("heads={} head_dim={} state={} groups={}{}{}", heads, head_dim, state, groups,
                       gate ? "" : " no gate", test::describe(seqs));
  }
};

struct ScanInputs {
  uint32_t n = 0;
  std::vector<float> xbc, proj, dt_bias, a, d, state;
};

ScanInputs make_inputs(const ScanCase& c, uint32_t seed) {
  ScanInputs in;
  in.n = test::total_tokens(c.seqs);
  in.xbc = test::random_floats(size_t(in.n) * c.x_stride(), seed, -2, 2);
  in.proj = test::random_floats(size_t(in.n) * c.proj_stride(), seed + 1, -3, 3);
  if (in.n > 2) in.proj[2 * c.proj_stride() - 1] = 25;  // a dt above 20: softplus's linear branch
  in.dt_bias = test::random_floats(c.heads, seed + 2, -1, 1);
  for (float x : test::random_floats(c.heads, seed + 3, -2, 1)) in.a.push_back(-std::exp(x));
  in.d = test::random_floats(c.heads, seed + 4);
  in.state = test::random_floats(size_t(c.slots) * c.d_inner() * c.state, seed + 5, -0.5, 0.5);
  return in;
}

struct ScanResult {
  std::vector<float> y, state;
};

// chunk 0: the recurrence, else the chunked form.
ScanResult reference(const ScanCase& c, const ScanInputs& in, size_t chunk = 0) {
  ScanResult r{std::vector<float>(size_t(in.n) * c.d_inner()), in.state};
  size_t token0 = 0, per_slot = size_t(c.d_inner()) * c.state;
  for (const test::StepSeq& q : c.seqs) {
    float* st = r.state.data() + q.slot * per_slot;
    if (q.n == 0) continue;  // an unused entry: its slot is left alone
    if (q.pos0 == 0) std::fill_n(st, per_slot, 0.0f);
    const float *x = in.xbc.data() + token0 * c.x_stride(), *p = in.proj.data() + token0 * c.proj_stride();
    ref::SsmScanInputs si{.x = x,
                          .b = x + c.d_inner(),
                          .c = x + c.d_inner() + c.bc(),
                          .dt = p + 2 * c.d_inner() + 2 * c.bc(),
                          .dt_bias = in.dt_bias.data(),
                          .a = in.a.data(),
                          .d = in.d.data(),
                          .z = c.gate ? p : nullptr};
    ref::SsmScanShape shape{.n_tokens = q.n,
                            .heads = c.heads,
                            .head_dim = c.head_dim,
                            .state = c.state,
                            .groups = c.groups,
                            .x_stride = c.x_stride(),
                            .bc_stride = c.x_stride(),
                            .dt_stride = c.proj_stride(),
                            .z_stride = c.proj_stride()};
    float* y = r.y.data() + token0 * c.d_inner();
    if (chunk)
      ref::ssm_scan_chunked(y, st, si, shape, chunk);
    else
      ref::ssm_scan(y, st, si, shape);
    token0 += q.n;
  }
  return r;
}

ScanResult run_gpu(const ScanCase& c, const ScanInputs& in) {
  Context& ctx = test::gpu();
  Buffer gx = test::to_gpu(in.xbc, "xbc"), gp = test::to_gpu(in.proj, "proj"), gs = test::to_gpu(in.state, "state");
  Buffer gdt = test::to_gpu(in.dt_bias, "dt_bias"), ga = test::to_gpu(in.a, "a"), gd = test::to_gpu(in.d, "d");
  Buffer step = test::step_buffer(c.seqs), gy(ctx, size_t(in.n) * c.d_inner() * 4, Memory::Device, "y");
  Stream s(ctx);
  ops::ssm_scan(s, gx, gp, gdt, ga, gd, gs, step, gy,
                {.n_tokens = in.n,
                 .seqs = uint32_t(c.seqs.size()),
                 .heads = c.heads,
                 .head_dim = c.head_dim,
                 .state = c.state,
                 .groups = c.groups,
                 .x_stride = c.x_stride(),
                 .b_offset = c.d_inner(),
                 .c_offset = c.d_inner() + c.bc(),
                 .dt_stride = c.proj_stride(),
                 .dt_offset = 2 * c.d_inner() + 2 * c.bc(),
                 .z_offset = 0,
                 .gate = c.gate});
  s.submit_wait();
  return {test::from_gpu(gy), test::from_gpu(gs)};
}

const ScanCase kScanCases[] = {{1, 4, 16, 1, {{0, 0, 1}}},
                               {4, 8, 32, 2, {{1, 0, 7}, {0, 3, 1}}},
                               {3, 16, 48, 1, {{2, 5, 65}, {0, 0, 64}, {3, 1, 1}}, false},
                               {8, 4, 128, 4, {{1, 9, 130}, {3, 0, 0}, {2, 0, 2}}},
                               {2, 64, 64, 2, {{3, 0, 9}, {0, 2, 3}}}};

}  // namespace

TEST_CASE("the chunked Mamba-2 scan equals the recurrence", "[ssm_scan]") {
  uint32_t seed = 30;
  for (const ScanCase& c : kScanCases) {
    ScanInputs in = make_inputs(c, seed += 10);
    ScanResult want = reference(c, in);
    for (size_t chunk : {1, 16, 64}) {
      ScanResult got = reference(c, in, chunk);
      std::string what = fmt::format("ssm_scan_chunked chunk={} {}", chunk, c.describe());
      test::check_nmse(got.y, want.y, 1e-10, what + " y");
      test::check_nmse(got.state, want.state, 1e-10, what + " state");
    }
  }
}

TEST_CASE("ssm_scan matches the reference", "[ssm_scan]") {
  test::for_each_profile([&](const Profile& profile) {
    uint32_t seed = 80;
    for (const ScanCase& c : kScanCases) {
      ScanInputs in = make_inputs(c, seed += 10);
      ScanResult want = reference(c, in), got = run_gpu(c, in);
      std::string what = fmt::format("ssm_scan {} profile={}", c.describe(), profile.name);
      test::check_nmse(got.y, want.y, 1e-10, what + " y");
      test::check_nmse(got.state, want.state, 1e-10, what + " state");
    }
  });
}

// A sequence's tokens in two calls (the second continuing from the state the first left) equal
// them in one call.
TEST_CASE("ssm_scan carries the state over between calls", "[ssm_scan]") {
  const uint32_t n = 20;
  ScanCase whole{4, 8, 32, 2, {{2, 0, n}}};
  ScanInputs in = make_inputs(whole, 5);
  ScanResult one = run_gpu(whole, in);
  for (uint32_t a : {1u, 13u}) {
    ScanCase first{4, 8, 32, 2, {{2, 0, a}}}, second{4, 8, 32, 2, {{2, a, n - a}}};
    ScanInputs i1 = in, i2 = in;
    i1.n = a, i2.n = n - a;
    i1.xbc.resize(size_t(a) * whole.x_stride()), i1.proj.resize(size_t(a) * whole.proj_stride());
    i2.xbc.erase(i2.xbc.begin(), i2.xbc.begin() + size_t(a) * whole.x_stride());
    i2.proj.erase(i2.proj.begin(), i2.proj.begin() + size_t(a) * whole.proj_stride());
    ScanResult r1 = run_gpu(first, i1);
    i2.state = r1.state;
    ScanResult r2 = run_gpu(second, i2);
    r1.y.insert(r1.y.end(), r2.y.begin(), r2.y.end());
    test::check_nmse(r1.y, one.y, 0.0, fmt::format("ssm_scan split at {} y", a));
    test::check_nmse(r2.state, one.state, 0.0, fmt::format("ssm_scan split at {} state", a));
  }
}

TEST_CASE("ssm_scan rejects bad shapes", "[ssm_scan]") {
  Context& ctx = test::gpu();
  Buffer b(ctx, 1 << 16, Memory::Device, "b");
  Stream s(ctx);
  CHECK_THROWS_WITH(
      ops::ssm_scan(s, b, b, b, b, b, b, b, b, {.n_tokens = 1, .heads = 3, .head_dim = 4, .state = 16, .groups = 2}),
      "ssm_scan: 3 heads cannot share 2 groups of B and C");
  CHECK_THROWS_WITH(ops::ssm_scan(s, b, b, b, b, b, b, b, b, {.n_tokens = 1, .heads = 2, .head_dim = 4, .state = 18}),
                    "ssm_scan: state size 18 must be a multiple of 4 from 4 to 256");
}
