// ops::delta_rule vs ref::delta_rule, both forms (token by token; chunks of 64 with the
// triangular solve), and the chunked form against the token-by-token one: head sizes 16 to 256
// (48 too), value heads 1x, 2x and 3x the key heads, sequences of 1, 7, 63, 64, 65 and 130 tokens
// in one step, each in its own slot, fresh (pos0 = 0: its slot's old state is ignored) or
// continuing, the state carried over between calls, every profile.
// Inputs as the layer feeds them: q and k L2-normalised per head, gates from random projections
// (one token with alpha + dt_bias above 20, softplus's linear branch), decays e^g from ~0 to ~1;
// an unused StepParams entry (0 tokens) leaves its slot alone.
#include <fmt/format.h>
#include <cmath>

#include "catch.h"
#include "harness.h"
#include "linear_case.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

struct DeltaCase {
  uint32_t s, h_k, h_v;
  std::vector<test::StepSeq> seqs;
  // Slow decay (e^g > 0.9995), beta near 1 and keys close to one direction: the state forgets
  // little, so rounding accumulates over the tokens (f32 token by token, less in chunks).
  bool slow = false;
  double bound = 1e-11;
  uint32_t slots = 4;

  std::string describe() const {
    return fmt::format("s={} h_k={} h_v={}{}{}", s, h_k, h_v, slow ? " slow decay" : "", test::describe(seqs));
  }
};

// One step's inputs: rows of the conv output (q heads, k heads, v heads, then a gap), the raw
// alpha/beta projections, dt_bias, a = -exp(A_log), and the state of every slot before the step.
struct DeltaInputs {
  uint32_t n = 0, stride = 0, q_off = 0, k_off = 0, v_off = 0;
  std::vector<float> qkv, alpha, beta, dt_bias, a, state;
};

DeltaInputs make_inputs(const DeltaCase& c, uint32_t seed) {
  DeltaInputs in;
  in.n = test::total_tokens(c.seqs);
  in.k_off = c.h_k * c.s, in.v_off = 2 * c.h_k * c.s, in.stride = in.v_off + c.h_v * c.s + 3;
  in.qkv = test::random_floats(size_t(in.n) * in.stride, seed);
  auto centre = test::random_floats(c.s, seed + 6);
  for (uint32_t t = 0; t < in.n && c.slow; ++t)
    for (uint32_t i = 0; i < 2 * c.h_k * c.s; ++i) {
      float& x = in.qkv[size_t(t) * in.stride + i];
      x = centre[i % c.s] + 0.3f * x;
    }
  for (uint32_t t = 0; t < in.n; ++t)
    for (uint32_t hd = 0; hd < 2 * c.h_k; ++hd) {
      float* x = &in.qkv[size_t(t) * in.stride + hd * c.s];
      std::vector<float> y(c.s);
      ref::l2_norm(y.data(), x, 1, c.s, 1e-6f);
      std::copy(y.begin(), y.end(), x);
    }
  in.alpha = test::random_floats(size_t(in.n) * c.h_v, seed + 1, c.slow ? -12 : -5, c.slow ? -9 : 2);
  if (in.n > 3 && !c.slow) in.alpha[3] = 24;
  in.beta = test::random_floats(size_t(in.n) * c.h_v, seed + 2, c.slow ? 2 : -4, 4);
  in.dt_bias = test::random_floats(c.h_v, seed + 3, -1, 1);
  for (float x : test::random_floats(c.h_v, seed + 4, -2, 1)) in.a.push_back(-std::exp(x));
  in.state = test::random_floats(size_t(c.slots) * c.h_v * c.s * c.s, seed + 5, -0.5, 0.5);
  return in;
}

struct DeltaResult {
  std::vector<float> o, state;
};

DeltaResult reference(const DeltaCase& c, const DeltaInputs& in) {
  DeltaResult r{std::vector<float>(size_t(in.n) * c.h_v * c.s), in.state};
  size_t token0 = 0, per_slot = size_t(c.h_v) * c.s * c.s;
  for (const test::StepSeq& q : c.seqs) {
    float* st = r.state.data() + q.slot * per_slot;
    if (q.n == 0) continue;  // an unused entry: its slot is left alone
    if (q.pos0 == 0) std::fill_n(st, per_slot, 0.0f);
    ref::DeltaRuleShape sh{.n_tokens = q.n,
                           .h_k = c.h_k,
                           .h_v = c.h_v,
                           .s = c.s,
                           .qk_stride = in.stride,
                           .v_stride = in.stride,
                           .ab_stride = c.h_v};
    const float* row = in.qkv.data() + token0 * in.stride;
    ref::delta_rule(r.o.data() + token0 * c.h_v * c.s, st, row + in.q_off, row + in.k_off, row + in.v_off,
                    in.alpha.data() + token0 * c.h_v, in.beta.data() + token0 * c.h_v, in.dt_bias.data(), in.a.data(),
                    sh);
    token0 += q.n;
  }
  return r;
}

// ops::delta_rule over the step; the state buffer starts as in.state.
DeltaResult run_gpu(const DeltaCase& c, const DeltaInputs& in, bool chunked) {
  Context& ctx = test::gpu();
  ops::DeltaRuleParams p{.n_tokens = in.n,
                         .seqs = uint32_t(c.seqs.size()),
                         .h_k = c.h_k,
                         .h_v = c.h_v,
                         .s = c.s,
                         .qk_stride = in.stride,
                         .q_offset = in.q_off,
                         .k_offset = in.k_off,
                         .v_offset = in.v_off,
                         .chunked = chunked};
  Buffer qkv = test::to_gpu(in.qkv, "qkv"), alpha = test::to_gpu(in.alpha, "alpha"), beta = test::to_gpu(in.beta);
  Buffer dt = test::to_gpu(in.dt_bias), a = test::to_gpu(in.a), state = test::to_gpu(in.state, "state");
  Buffer step = test::step_buffer(c.seqs);
  Buffer o(ctx, size_t(in.n) * c.h_v * c.s * 4, Memory::Device, "o");
  uint64_t scratch_bytes = ops::delta_rule_scratch_bytes(p);
  CHECK((scratch_bytes > 0) == chunked);
  Buffer scratch(ctx, std::max<uint64_t>(scratch_bytes, 4), Memory::Device, "scratch");
  Stream s(ctx);
  ops::delta_rule(s, qkv, alpha, beta, dt, a, state, step, o, scratch_bytes ? scratch.view() : BufferView{}, p);
  s.submit_wait();
  return {test::from_gpu(o), test::from_gpu(state)};
}

const char* form(bool chunked) { return chunked ? "chunked" : "recurrent"; }

std::vector<DeltaCase> cases() {
  return {{16, 2, 2, {{0, 0, 1}}},
          {32, 1, 2, {{1, 0, 7}}},
          {48, 1, 3, {{0, 5, 63}, {2, 0, 1}}},
          {64, 2, 4, {{2, 0, 64}, {3, 0, 0}, {0, 9, 1}}},
          {128, 1, 2, {{1, 0, 65}, {3, 12, 130}, {0, 40, 1}}},
          {128, 2, 6, {{2, 3, 1}, {0, 0, 130}, {1, 2, 7}}},
          {256, 1, 1, {{0, 3, 70}}},
          {128, 1, 2, {{1, 0, 300}, {0, 5, 1}}, true, 1e-10}};
}

}  // namespace

TEST_CASE("delta_rule matches the reference token by token and in chunks", "[delta_rule]") {
  test::for_each_profile([&](const Profile& profile) {
    uint32_t seed = 100;
    for (const DeltaCase& c : cases()) {
      DeltaInputs in = make_inputs(c, seed += 10);
      DeltaResult want = reference(c, in);
      for (bool chunked : {false, true}) {
        DeltaResult got = run_gpu(c, in, chunked);
        std::string what = fmt::format("delta_rule {} {} profile={}", form(chunked), c.describe(), profile.name);
        test::check_nmse(got.o, want.o, c.bound, what + " o");
        test::check_nmse(got.state, want.state, c.bound, what + " state");
      }
    }
  });
}

TEST_CASE("delta_rule in chunks equals the token-by-token form", "[delta_rule]") {
  uint32_t seed = 200;
  for (const DeltaCase& c : cases()) {
    DeltaInputs in = make_inputs(c, seed += 10);
    DeltaResult rec = run_gpu(c, in, false), chunk = run_gpu(c, in, true);
    test::check_nmse(chunk.o, rec.o, c.bound, "delta_rule chunked vs recurrent " + c.describe() + " o");
    test::check_nmse(chunk.state, rec.state, c.bound, "delta_rule chunked vs recurrent " + c.describe() + " state");
  }
}

// Tokens [0, a) of each sequence in one call and [a, n) in the next equal [0, n) in one call: the
// state of each slot carries the sequence over (the second call's sequences continue, pos0 = a).
TEST_CASE("delta_rule carries the state over between calls", "[delta_rule]") {
  DeltaCase whole{64, 1, 2, {{2, 0, 130}, {0, 7, 9}, {1, 0, 65}}};
  const uint32_t split[] = {70, 1, 64};
  DeltaInputs in = make_inputs(whole, 300);
  for (bool chunked : {false, true}) {
    DeltaResult one = run_gpu(whole, in, chunked);
    // The two halves: each sequence's rows of the step, first [0, a) then [a, n).
    DeltaInputs part[2] = {in, in};
    DeltaCase halves[2] = {whole, whole};
    for (int h = 0; h < 2; ++h) {
      part[h].qkv.clear(), part[h].alpha.clear(), part[h].beta.clear(), part[h].n = 0;
      uint32_t token0 = 0;
      for (size_t i = 0; i < whole.seqs.size(); ++i) {
        const test::StepSeq& q = whole.seqs[i];
        uint32_t from = h == 0 ? 0 : split[i], to = h == 0 ? split[i] : q.n;
        halves[h].seqs[i] = {q.slot, q.pos0 + from, to - from};
        for (uint32_t t = token0 + from; t < token0 + to; ++t) {
          auto row = in.qkv.begin() + size_t(t) * in.stride;
          part[h].qkv.insert(part[h].qkv.end(), row, row + in.stride);
          auto ab = size_t(t) * whole.h_v;
          part[h].alpha.insert(part[h].alpha.end(), in.alpha.begin() + ab, in.alpha.begin() + ab + whole.h_v);
          part[h].beta.insert(part[h].beta.end(), in.beta.begin() + ab, in.beta.begin() + ab + whole.h_v);
        }
        part[h].n += to - from, token0 += q.n;
      }
    }
    DeltaResult first = run_gpu(halves[0], part[0], chunked);
    part[1].state = first.state;
    DeltaResult second = run_gpu(halves[1], part[1], chunked);
    // The outputs of the two calls, back in the order of the one call.
    std::vector<float> o;
    size_t row = size_t(whole.h_v) * whole.s, at[2] = {0, 0};
    for (size_t i = 0; i < whole.seqs.size(); ++i)
      for (int h = 0; h < 2; ++h) {
        const std::vector<float>& src = h == 0 ? first.o : second.o;
        size_t len = halves[h].seqs[i].n * row;
        o.insert(o.end(), src.begin() + at[h], src.begin() + at[h] + len);
        at[h] += len;
      }
    std::string what = fmt::format("delta_rule {} in two calls", form(chunked));
    // Token by token the two calls do exactly what one does; chunks start at other tokens.
    double bound = chunked ? 1e-12 : 0.0;
    test::check_nmse(o, one.o, bound, what + " o");
    test::check_nmse(second.state, one.state, bound, what + " state");
  }
}

TEST_CASE("delta_rule rejects shapes it cannot run", "[delta_rule]") {
  Context& ctx = test::gpu();
  Buffer b(ctx, 1 << 20, Memory::Device, "b");
  Stream s(ctx);
  ops::DeltaRuleParams p{.n_tokens = 1, .h_k = 1, .h_v = 2, .s = 50, .qk_stride = 200};
  CHECK_THROWS_WITH(ops::delta_rule(s, b, b, b, b, b, b, b, b, {}, p),
                    "delta_rule: head size 50 must be a multiple of 4 from 4 to 256");
  p.s = 64, p.h_k = 2, p.h_v = 3;
  CHECK_THROWS_WITH(ops::delta_rule(s, b, b, b, b, b, b, b, b, {}, p),
                    "delta_rule: 3 value heads cannot share 2 key heads (h_v must be a multiple of h_k)");
  p.h_v = 4, p.chunked = true;
  CHECK_THROWS_WITH(ops::delta_rule(s, b, b, b, b, b, b, b, b, {}, p), "delta_rule: scratch is not bound");
}
