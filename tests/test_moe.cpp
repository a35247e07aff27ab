// The mixture-of-experts kernels vs the reference (docs/formats.md §8): routing (softmax and
// sigmoid scores, gpt-oss's softmax of the chosen, ties to the lowest id, group limits, selection
// bias, normalisation and scale, gemma4's per-expert scale, top-k = every expert), the per-expert
// biases, the grouping by expert with the expert products for every weight type
// (one token, experts never chosen, every token to one expert, all experts used, weights split
// over several bindings, both kernels, fused gate|up experts into two activations), and the
// weighted sum with a gated shared expert.
#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "catch.h"
#include "weight_cases.h"

using namespace vkllm;

namespace {

struct RouteCase {
  std::string what;
  ops::MoeRouteParams p;
  bool bias = false;
  float spread = 4;                // logits uniform in [-spread, spread]
  std::vector<float> logits = {};  // given instead of random ones
  bool expert_scale = false;       // a scale per expert on the weights (gemma4)
};

ref::RouteScores ref_scores(ops::RouteScores s) {
  return s == ops::RouteScores::Sigmoid         ? ref::RouteScores::Sigmoid
         : s == ops::RouteScores::ChosenSoftmax ? ref::RouteScores::ChosenSoftmax
                                                : ref::RouteScores::Softmax;
}

void check_route(const RouteCase& c) {
  const ops::MoeRouteParams& p = c.p;
  size_t n = size_t(p.n_tokens) * p.n_experts, k = size_t(p.n_tokens) * p.n_used;
  std::vector<float> logits =
      c.logits.empty() ? test::random_floats(n, 11 + p.n_experts, -c.spread, c.spread) : c.logits;
  std::vector<float> bias = test::random_floats(p.n_experts, 12, -0.2f, 0.2f);
  std::vector<float> scale = test::random_floats(p.n_experts, 13, 0.5f, 2.0f);
  std::vector<int32_t> want_ids(k);
  std::vector<float> want_w(k);
  ref::MoeRouteParams rp{.n_experts = p.n_experts,
                         .n_used = p.n_used,
                         .scores = ref_scores(p.scores),
                         .n_groups = p.n_groups,
                         .n_groups_used = p.n_groups_used,
                         .norm = p.norm,
                         .scale = p.scale,
                         .expert_scale = c.expert_scale ? scale.data() : nullptr};
  ref::moe_route(want_ids.data(), want_w.data(), logits.data(), c.bias ? bias.data() : nullptr, p.n_tokens, rp);
  Context& ctx = test::gpu();
  Buffer gl = test::to_gpu(logits), gb = test::to_gpu(bias), gs = test::to_gpu(scale),
         ids(ctx, 4 * k, Memory::Device, "ids"), w(ctx, 4 * k, Memory::Device, "weights");
  Stream s(ctx);
  ops::moe_route(s, p, gl, c.bias ? gb.view() : BufferView{}, ids, w, c.expert_scale ? gs.view() : BufferView{});
  s.submit_wait();
  INFO(c.what);
  CHECK(ids.download<int32_t>(k) == want_ids);
  test::check_nmse(test::from_gpu(w), want_w, 1e-10, "moe_route weights " + c.what);
}

}  // namespace

TEST_CASE("moe_route matches the reference", "[moe]") {
  std::vector<float> ties(2 * 8, 0.5f);  // token 0: all equal; token 1: pairs of equal values
  for (int e = 0; e < 8; ++e) ties[8 + e] = float(e / 2);
  std::vector<RouteCase> cases = {
      {"1 token, 8 experts, top 2 (V2 style)", {.n_tokens = 1, .n_experts = 8, .n_used = 2}},
      {"ties go to the lowest id", {.n_tokens = 2, .n_experts = 8, .n_used = 3, .norm = true}, false, 4, ties},
      {"top-k = every expert", {.n_tokens = 5, .n_experts = 6, .n_used = 6, .norm = true}},
      {"qwen3moe: softmax, renormalised", {.n_tokens = 37, .n_experts = 16, .n_used = 4, .norm = true}},
      {"sigmoid with bias", {.n_tokens = 9, .n_experts = 12, .n_used = 3, .scores = ops::RouteScores::Sigmoid}, true},
      {"gpt-oss: top-k by logit, softmax of the chosen",
       {.n_tokens = 13, .n_experts = 32, .n_used = 4, .scores = ops::RouteScores::ChosenSoftmax}},
      {"gemma4: softmax, renormalised, a scale per expert",
       {.n_tokens = 7, .n_experts = 16, .n_used = 8, .norm = true},
       false,
       4,
       {},
       true},
      {"V3: sigmoid, bias, groups, norm, scale 2.5",
       {.n_tokens = 21,
        .n_experts = 32,
        .n_used = 4,
        .scores = ops::RouteScores::Sigmoid,
        .n_groups = 8,
        .n_groups_used = 3,
        .norm = true,
        .scale = 2.5f},
       true},
      {"groups where one group wins everything",
       {.n_tokens = 3, .n_experts = 16, .n_used = 4, .n_groups = 4, .n_groups_used = 1},
       false,
       8},
  };
  for (const RouteCase& c : cases) check_route(c);
}

namespace {

// Ids (n_tokens · k) from a rule, distinct within each token.
using IdRule = std::vector<int32_t> (*)(uint32_t n, uint32_t k, uint32_t E);

std::vector<int32_t> ids_random(uint32_t n, uint32_t k, uint32_t E) {
  std::mt19937 rng(n * 31 + k);
  std::vector<int32_t> all(E), out;
  for (uint32_t e = 0; e < E; ++e) all[e] = int32_t(e);
  for (uint32_t t = 0; t < n; ++t) {
    std::shuffle(all.begin(), all.end(), rng);
    out.insert(out.end(), all.begin(), all.begin() + k);
  }
  return out;
}
std::vector<int32_t> ids_two_experts(uint32_t n, uint32_t k, uint32_t E) {  // experts 1 and E-2 only
  std::vector<int32_t> out;
  for (uint32_t t = 0; t < n; ++t)
    for (uint32_t j = 0; j < k; ++j) out.push_back((t + j) % 2 ? 1 : int32_t(E) - 2);
  return out;
}
std::vector<int32_t> ids_one_expert(uint32_t n, uint32_t, uint32_t E) {
  return std::vector<int32_t>(n, int32_t(E) - 1);
}
std::vector<int32_t> ids_every_expert(uint32_t n, uint32_t k, uint32_t) {
  std::vector<int32_t> out;
  for (uint32_t t = 0; t < n; ++t)
    for (uint32_t j = 0; j < k; ++j) out.push_back(int32_t((j + t) % k));
  return out;
}

struct IdCase {
  const char* what;
  uint32_t n, k, E, M;
  IdRule rule;
};

// ref::matmul_id's (P, M) rows as matmul_id writes them with a second half at `second` floats:
// values 0 .. M/2 - 1 of each row packed at the start, the rest packed from `second` (a gap of
// zeros between).
std::vector<float> halves(const std::vector<float>& y, size_t P, size_t M, size_t second) {
  std::vector<float> out(second + P * M / 2, 0.0f);
  for (size_t p = 0; p < P; ++p)
    for (size_t m = 0; m < M; ++m) out[(m < M / 2 ? 0 : second - M / 2) + p * (M / 2) + m] = y[p * M + m];
  return out;
}

// plan + matmul_id for gate/up (x per token) and down (x per pair) vs ref::matmul_id; the
// experts split into slices of `per_slice` (0: one binding). split: each expert's M rows as fused
// gate|up experts, the two halves of every result row into two matrices (ffn_gate_up_exps).
void check_matmul_id(DType t, const IdCase& c, uint32_t K, uint32_t per_slice, const std::string& note,
                     bool split = false) {
  Context& ctx = test::gpu();
  std::vector<int32_t> ids = c.rule(c.n, c.k, c.E);
  uint32_t P = c.n * c.k;
  test::Weights w = test::random_weights(t, size_t(c.E) * c.M, K, c.M + K);
  ops::ExpertPlan plan = ops::expert_plan(ctx, c.n, c.k, c.E);
  Buffer gids = test::to_gpu(ids), gplan(ctx, plan.bytes(), Memory::Device, "plan");
  std::vector<Buffer> parts;
  std::vector<ops::ExpertSlice> slices;
  uint32_t per = per_slice ? per_slice : c.E;
  uint64_t expert_bytes = uint64_t(c.M) * row_bytes(t, K);
  for (uint32_t e0 = 0; e0 < c.E; e0 += per) {
    uint32_t count = std::min(per, c.E - e0);
    parts.push_back(test::bytes_to_gpu(std::span(w.stored).subspan(e0 * expert_bytes, count * expert_bytes),
                                       fmt::format("experts {}..", e0)));
    slices.push_back({e0, count, parts.back().view()});
  }
  for (uint32_t x_div : {c.k, 1u}) {
    std::vector<float> x = test::random_floats(size_t(P / x_div) * K, 7 + x_div);
    std::vector<float> want(size_t(P) * c.M);
    ref::matmul_id(want.data(), w.values.data(), x.data(), ids.data(), P, c.M, K, x_div);
    size_t second = split ? size_t(P) * c.M / 2 + 5 : 0;  // the up half after a gap
    if (split) want = halves(want, P, c.M, second);
    Buffer gx = test::to_gpu(x), gy = test::to_gpu(std::vector<float>(want.size(), 0.0f));
    Stream s(ctx);
    ops::moe_plan(s, plan, gids, gplan);
    ops::matmul_id(s, plan, t, slices, gx, gplan, gy, c.M, K, x_div, 0, ops::MatmulKernel::Auto, second);
    s.submit_wait();
    test::check_nmse(
        test::from_gpu(gy), want, test::matmul_id_bound(t, plan),
        fmt::format("matmul_id{}{} {} {} n={} k={} E={} M={} K={} x/{}{}", plan.tiled ? " (tiled)" : "",
                    split ? " gate|up" : "", test::type_name(t), c.what, c.n, c.k, c.E, c.M, K, x_div, note));
  }
}

}  // namespace

TEST_CASE("matmul_id matches the reference for every weight type", "[moe]") {
  for (DType t : test::weight_types()) {
    uint32_t K = test::awkward_k(t)[1];
    check_matmul_id(t, {"random", 5, 2, 6, 19, ids_random}, K, 0, "");
  }
}

TEST_CASE("matmul_id over awkward routings", "[moe]") {
  const IdCase cases[] = {
      {"1 token", 1, 2, 4, 33, ids_random},
      {"experts never chosen", 7, 2, 6, 17, ids_two_experts},
      {"every token to one expert", 6, 1, 5, 21, ids_one_expert},
      {"top-k = every expert", 5, 3, 3, 16, ids_every_expert},
  };
  for (DType t : {DType::F16, DType::Q4_K})
    for (const IdCase& c : cases) check_matmul_id(t, c, test::awkward_k(t)[1], 0, "");
  // Experts spread over bindings of 2 and of 3 experts (a weight bigger than one binding).
  check_matmul_id(DType::Q8_0, {"random", 5, 2, 7, 16, ids_random}, 96, 2, " in slices of 2");
  check_matmul_id(DType::F32, {"random", 4, 3, 7, 9, ids_random}, 45, 3, " in slices of 3");
}

TEST_CASE("matmul_id under every profile, tiled and not", "[moe]") {
  test::for_each_profile([&](const Profile& profile) {
    std::string note = " profile=" + profile.name;
    check_matmul_id(DType::F16, {"random", 3, 2, 5, 19, ids_random}, 96, 0, note);
    check_matmul_id(DType::Q8_0, {"random", 20, 2, 6, 70, ids_random}, 96, 4, note);  // tiled from 9 on GPUs
    check_matmul_id(DType::MXFP4, {"random", 3, 2, 5, 19, ids_random}, 96, 0, note);  // 51-byte rows
  });
  test::for_each_profile([&](const Profile& profile) {
    if (!ops::expert_plan(test::gpu(), 20, 2, 6).tiled) return;
    std::string note = " profile=" + profile.name;
    for (DType t : {DType::Q4_0, DType::Q4_K, DType::Q6_K, DType::MXFP4})
      check_matmul_id(t, {"one expert", 20, 1, 3, 40, ids_one_expert}, test::awkward_k(t)[0], 0, note);
  });
}

// Fused experts (llama.cpp's ffn_gate_up_exps: per expert F gate rows, then F up rows): one
// dispatch per slice writes the gate and the up products into two activations.
TEST_CASE("matmul_id of fused gate|up experts writes the two halves apart", "[moe]") {
  for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_K, DType::MXFP4})
    check_matmul_id(t, {"random", 5, 2, 6, 38, ids_random}, test::awkward_k(t)[1], 0, "", true);
  check_matmul_id(DType::Q8_0, {"random", 5, 2, 7, 32, ids_random}, 96, 3, " in slices of 3", true);
  test::for_each_profile([&](const Profile& profile) {
    std::string note = " profile=" + profile.name;
    check_matmul_id(DType::F16, {"random", 3, 2, 5, 40, ids_random}, 96, 0, note, true);
    check_matmul_id(DType::Q8_0, {"random", 20, 2, 6, 70, ids_random}, 96, 4, note, true);  // tiled on GPUs
  });
}

TEST_CASE("moe_combine adds the weighted experts and the gated shared expert", "[moe]") {
  Context& ctx = test::gpu();
  for (uint32_t mode = 0; mode < 3; ++mode) {  // routed only, + shared, + gated shared
    uint32_t n = 5, k = 3, dim = 67;
    auto y = test::random_floats(size_t(n) * k * dim, 1), w = test::random_floats(n * k, 2, 0, 1);
    auto shared = test::random_floats(size_t(n) * dim, 3), gate = test::random_floats(n, 4, -3, 3);
    auto x = test::random_floats(size_t(n) * dim, 5), want = x;
    ref::moe_combine(want.data(), y.data(), w.data(), mode ? shared.data() : nullptr, mode == 2 ? gate.data() : nullptr,
                     n, k, dim);
    Buffer gy = test::to_gpu(y), gw = test::to_gpu(w), gs = test::to_gpu(shared), gg = test::to_gpu(gate),
           gx = test::to_gpu(x);
    Stream s(ctx);
    ops::moe_combine(s, gy, gw, mode ? gs.view() : BufferView{}, mode == 2 ? gg.view() : BufferView{}, gx, n, k, dim);
    s.submit_wait();
    test::check_nmse(test::from_gpu(gx), want, 1e-12, fmt::format("moe_combine mode {}", mode));
  }
}

TEST_CASE("moe_combine without accumulating writes the weighted sum alone", "[moe]") {
  Context& ctx = test::gpu();
  uint32_t n = 6, k = 4, dim = 45;
  auto y = test::random_floats(size_t(n) * k * dim, 6), w = test::random_floats(n * k, 7, 0, 1);
  std::vector<float> want(size_t(n) * dim, 0.0f);
  ref::moe_combine(want.data(), y.data(), w.data(), nullptr, nullptr, n, k, dim);
  Buffer gy = test::to_gpu(y), gw = test::to_gpu(w), gx = test::to_gpu(test::random_floats(size_t(n) * dim, 8));
  Stream s(ctx);
  ops::moe_combine(s, gy, gw, {}, {}, gx, n, k, dim, false);
  s.submit_wait();
  test::check_nmse(test::from_gpu(gx), want, 1e-12, "moe_combine, not accumulating");
}

TEST_CASE("moe_bias adds each pair's expert's bias row", "[moe]") {
  Context& ctx = test::gpu();
  uint32_t pairs = 23, M = 37, E = 9;
  auto y = test::random_floats(size_t(pairs) * M, 9), bias = test::random_floats(size_t(E) * M, 10);
  std::vector<int32_t> ids(pairs);
  for (uint32_t p = 0; p < pairs; ++p) ids[p] = int32_t((p * 7 + 3) % E);
  std::vector<float> want = y;
  for (uint32_t p = 0; p < pairs; ++p)
    for (uint32_t m = 0; m < M; ++m) want[p * M + m] += bias[size_t(ids[p]) * M + m];
  Buffer gy = test::to_gpu(y), gb = test::to_gpu(bias), gi(ctx, 4 * pairs, Memory::Device, "ids");
  gi.upload(ids.data(), 4 * pairs);
  Stream s(ctx);
  ops::moe_bias(s, gy, gb, gi, pairs, M);
  s.submit_wait();
  test::check_nmse(test::from_gpu(gy), want, 1e-14, "moe_bias");
}

TEST_CASE("moe ops reject bad arguments", "[moe]") {
  Context& ctx = test::gpu();
  Buffer b(ctx, 1 << 12, Memory::Device, "b");
  Stream s(ctx);
  CHECK_THROWS_WITH(ops::moe_route(s, {.n_tokens = 1, .n_experts = 4, .n_used = 5}, b, {}, b, b),
                    Catch::Contains("5 of 4 experts"));
  CHECK_THROWS_WITH(
      ops::moe_route(s, {.n_tokens = 1, .n_experts = 12, .n_used = 2, .n_groups = 5, .n_groups_used = 1}, b, {}, b, b),
      Catch::Contains("not a valid grouping"));
  ops::ExpertPlan plan = ops::expert_plan(ctx, 2, 2, 4);
  std::vector<ops::ExpertSlice> missing = {{0, 3, b.view(0, 64)}};
  CHECK_THROWS_WITH(ops::matmul_id(s, plan, DType::F32, missing, b.view(0, 64), b, b, 1, 4, 2),
                    Catch::Contains("slices hold 3 of 4 experts"));
}
