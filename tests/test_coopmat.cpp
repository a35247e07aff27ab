// Prefill on cooperative matrices (runtime/coopmat.h, ops_matmul_coop.h): which extension and
// shape a device gets (devices described by hand), which tile a product takes, and the self-check
// that keeps a pipeline or turns it off, driven here by substitute pipelines because lavapipe has
// no cooperative matrices. Where the device has them, the kernel itself against the reference.
#include <fmt/format.h>
#include <cmath>

#include "catch.h"
#include "device_descriptions.h"
#include "error.h"
#include "weight_cases.h"

using namespace vkllm;

namespace {

// A card with both extensions and the shapes NVIDIA's driver lists (16x16x16, 16x8x16, 16x8x8).
DeviceCaps coop_nvidia() {
  DeviceCaps c = test::nvidia_device();
  c.cooperative_matrix = c.cooperative_matrix_nv = c.vulkan_memory_model = true;
  c.coop_shapes_nv = c.coop_shapes_khr = {{16, 8, 16}, {16, 8, 8}, {16, 16, 16}};
  return c;
}
// RDNA3: the KHR extension only, 16x16x16.
DeviceCaps coop_rdna() {
  DeviceCaps c = test::rdna_device();
  c.cooperative_matrix = c.vulkan_memory_model = true;
  c.coop_shapes_khr = {{16, 16, 16}};
  return c;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("the cooperative-matrix path follows the device and the request", "[coopmat][plan]") {
  CoopPlan p = plan_coopmat(test::lavapipe_device(), {});
  CHECK(p.api == CoopApi::None);
  CHECK(has(p.why_not, "no cooperative matrices"));

  // NVIDIA: the NV form, validated or not; 16x16x16 among the shapes offered.
  for (bool validation : {false, true}) {
    p = plan_coopmat(coop_nvidia(), {.validation = validation});
    CHECK(p.api == CoopApi::Nv);
    CHECK(p.shape == CoopShape{16, 16, 16});
  }
  CHECK(plan_coopmat(coop_nvidia(), {.mode = "khr"}).api == CoopApi::Khr);
  CHECK(plan_coopmat(coop_nvidia(), {.mode = "off"}).why_not == "turned off by VKLLM_COOPMAT=off");

  // KHR only: never under a validation layer that predates it.
  CHECK(plan_coopmat(coop_rdna(), {}).api == CoopApi::Khr);
  p = plan_coopmat(coop_rdna(), {.validation = true});
  CHECK(p.api == CoopApi::None);
  CHECK(has(p.why_not, "validation layer predates"));
  CHECK(plan_coopmat(coop_rdna(), {.validation = true, .layer_knows_khr = true}).api == CoopApi::Khr);
  p = plan_coopmat(coop_rdna(), {.mode = "nv"});
  CHECK(p.api == CoopApi::None);
  CHECK(p.why_not == "VKLLM_COOPMAT=nv: no VK_NV_cooperative_matrix");
  CHECK_THROWS_WITH(plan_coopmat(coop_rdna(), {.mode = "fast"}), Catch::Contains("not one of auto, off, nv, khr"));

  // What the modules declare besides the extension.
  DeviceCaps c = coop_rdna();
  c.fp16 = false;
  CHECK(has(plan_coopmat(c, {}).why_not, "no shaderFloat16"));
  c = coop_rdna();
  c.vulkan_memory_model = false;
  CHECK(has(plan_coopmat(c, {}).why_not, "no vulkanMemoryModel"));

  // Shapes: another one where 16x16x16 is missing; none the tiles can use, listed.
  c = coop_rdna();
  c.coop_shapes_khr = {{16, 8, 16}};
  CHECK(plan_coopmat(c, {}).shape == CoopShape{16, 8, 16});
  c.coop_shapes_khr = {{12, 12, 12}};
  p = plan_coopmat(c, {});
  CHECK(p.api == CoopApi::None);
  CHECK(has(p.why_not, "offered: 12x12x12"));
}

TEST_CASE("a product takes the profile's tile that fills the device and fits it", "[coopmat][plan]") {
  DeviceCaps caps = coop_nvidia();
  Profile p = fit_profile(profile_named("nvidia"), caps);
  CoopPlan plan = plan_coopmat(caps, {});
  ops::CoopTileNeeds big = ops::coop_tile_needs(p.coop_tile, plan.shape, 32, DType::Q4_0);
  CHECK(big.valid);
  CHECK(big.threads == 128);
  CHECK(big.shared_bytes == 256 * 5 * 16 + 4 * 256 * 4);  // two tiles of 5 words a row, four staging tiles
  // 8B Llama at 512 tokens: the FFN's 14336 rows fill the card with big tiles; 4096 rows do not.
  CHECK(ops::coop_tile_for(caps, p, plan, DType::Q4_0, 14336, 512) == p.coop_tile);
  CHECK(ops::coop_tile_for(caps, p, plan, DType::Q4_0, 4096, 512) == p.coop_tile_small);
  CHECK(!ops::coop_tile_for(caps, p, plan, DType::F32, 14336, 512));  // f32 stays exact
  CHECK(!ops::coop_tile_for(caps, fit_profile(profile_named("llvmpipe"), caps), plan, DType::Q4_0, 14336, 512));
  CHECK(
      !ops::coop_tile_for(test::nvidia_device(), p, plan_coopmat(test::nvidia_device(), {}), DType::Q4_0, 14336, 512));
  // 16 KiB of shared memory: only the small tile fits, IQ3_S's grid included.
  caps.max_shared_memory = 16384;
  CHECK(ops::coop_tile_for(caps, p, plan, DType::IQ3_S, 14336, 512) == p.coop_tile_small);
  caps.max_shared_memory = 8192;
  CHECK(!ops::coop_tile_for(caps, p, plan, DType::Q4_0, 14336, 512));
  // Wave64 doubles the threads; a subgroup tile that is no whole number of matrices is refused.
  CHECK(ops::coop_tile_needs(p.coop_tile, plan.shape, 64, DType::Q4_0).threads == 256);
  CHECK(!ops::coop_tile_needs({.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 40}, plan.shape, 32, DType::Q4_0).valid);
  CHECK(ops::coop_tile_needs(p.coop_tile, {16, 8, 16}, 32, DType::Q4_0).valid);
}

TEST_CASE("a pipeline's self-check keeps a right result and turns off a wrong one", "[coopmat][check]") {
  Context& ctx = test::gpu();
  const CoopTile tile{.bm = 32, .bn = 32, .bk = 32, .wm = 16, .wn = 16};  // a small check: 88 x 72 x 800
  auto tiled = [](DType t) {
    return [t](Stream& s, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K) {
      ops::matmul_tiled(s, t, w, x, y, M, N, K);
    };
  };
  // x scaled by (1 + e): the product off by a relative e everywhere, NMSE e².
  Buffer scaled(ctx, 72 * 800 * 4, Memory::Device, "scaled x");
  auto off_by = [&](DType t, float e) {
    return [&, t, e](Stream& s, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K) {
      ops::scale(s, x, scaled, N * K, 1.0f + e);
      ops::matmul_tiled(s, t, w, scaled, y, M, N, K);
    };
  };
  const CoopCheck& right = ops::check_coop(ctx, DType::Q4_0, tile, tiled(DType::Q4_0));
  CHECK(right.state == CoopCheck::State::Kept);
  CHECK(right.nmse == 0);
  CHECK(ops::check_coop(ctx, DType::Q4_0, tile, off_by(DType::Q4_0, 1e-4f)).state == CoopCheck::State::Kept);
  const CoopCheck& wrong = ops::check_coop(ctx, DType::Q4_0, tile, off_by(DType::Q4_0, 1e-2f));
  CHECK(wrong.state == CoopCheck::State::Off);
  CHECK(std::abs(wrong.nmse - 1e-4) < 1e-5);
  CHECK(has(wrong.note, "differs from the tiled kernel"));
  // The verdict is what the device keeps for that pipeline, and what `vkllm devices` reports.
  CHECK(ctx.coop_checks().done.at({CoopOp::Matmul, DType::Q4_0, tile}).state == CoopCheck::State::Off);
  std::vector<std::string> lines = coop_report({.api = CoopApi::Nv, .shape = {16, 16, 16}}, ctx.coop_checks());
  CHECK(has(lines.front(), "turned off"));
  CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return has(l, "off for matmul q4_0 32x32x32") && has(l, "differs from the tiled kernel");
  }));

  // A pipeline that cannot be created (or throws running) is turned off with the reason.
  const CoopCheck& broken = ops::check_coop(
      ctx, DType::Q6_K, tile, [](Stream&, BufferView, BufferView, BufferView, uint32_t, uint32_t, uint32_t) {
        throw vkllm::Error("vkCreateComputePipelines failed");
      });
  CHECK(broken.state == CoopCheck::State::Off);
  CHECK(broken.note == "vkCreateComputePipelines failed");
  // A kept pipeline is not checked again (the real kernel cannot run here; a rerun would fail).
  ops::check_coop(ctx, DType::Q6_K, tile, tiled(DType::Q6_K));
  CHECK(ops::ensure_coop_checked(ctx, CoopOp::Matmul, DType::Q6_K, tile).state == CoopCheck::State::Kept);
  // The check multiplies values, not zeros, for the types whose weight bytes are special.
  for (DType t : {DType::BF16, DType::MXFP4}) {
    auto zeros = [](Stream& s, BufferView, BufferView, BufferView y, uint32_t, uint32_t, uint32_t) { s.fill(y, 0); };
    const CoopCheck& c = ops::check_coop(ctx, t, tile, zeros);
    CHECK(c.state == CoopCheck::State::Off);
    CHECK(c.nmse == 1);
  }
  ctx.coop_checks().done.clear();
}

TEST_CASE("an expert-product pipeline's self-check keeps a right result and turns off a wrong one",
          "[coopmat][check]") {
  Context& ctx = test::gpu();
  const uint32_t bn = ctx.profile().matmul_bn;  // the tiled matmul_id's tile of pairs
  const CoopTile tile{.bm = 32, .bn = bn, .bk = 32, .wm = 16, .wn = 16};
  auto tiled = [](Stream& s, const ops::ExpertPlan& plan, BufferView w, BufferView x, BufferView plan_buf, BufferView y,
                  uint32_t M, uint32_t K) {
    ops::ExpertSlice all{.first = 0, .count = plan.n_experts, .w = w};
    ops::matmul_id(s, plan, DType::Q8_0, std::span(&all, 1), x, plan_buf, y, M, K, plan.n_used, 0,
                   ops::MatmulKernel::Tiled);
  };
  const CoopCheck& right = ops::check_coop_id(ctx, DType::Q8_0, tile, tiled);
  INFO(right.note);
  CHECK(right.state == CoopCheck::State::Kept);
  CHECK(right.nmse == 0);
  auto zeros = [](Stream& s, const ops::ExpertPlan&, BufferView, BufferView, BufferView, BufferView y, uint32_t,
                  uint32_t) { s.fill(y, 0); };
  const CoopCheck& wrong = ops::check_coop_id(ctx, DType::Q8_0, tile, zeros);
  CHECK(wrong.state == CoopCheck::State::Off);
  CHECK(wrong.nmse == 1);
  CHECK(has(wrong.note, "experts"));
  CHECK(ctx.coop_checks().done.at({CoopOp::MatmulId, DType::Q8_0, tile}).state == CoopCheck::State::Off);
  CoopTile other = tile;
  other.bn = 2 * bn;  // a plan tile the tiled kernel does not read
  CHECK(has(ops::check_coop_id(ctx, DType::Q8_0, other, tiled).note, "not the profile's matmul_bn"));
  ctx.coop_checks().done.clear();
}

TEST_CASE("the self-check's weights decode to moderate finite values for every type", "[coopmat][check]") {
  for (DType t : test::weight_types()) {
    if (!ops::coop_supports(t)) continue;
    const uint32_t rows = 16, K = 768;
    std::vector<uint8_t> bytes = ops::coop_check_weights(t, rows * row_bytes(t, K));
    std::vector<float> v = ref::dequantize(t, bytes.data(), rows, K);
    double sum2 = 0, largest = 0;
    size_t nonzero = 0;
    for (float f : v) {
      REQUIRE(std::isfinite(f));
      sum2 += double(f) * f, largest = std::max(largest, double(std::abs(f)));
      nonzero += f != 0;
    }
    INFO(test::type_name(t) << ": rms " << std::sqrt(sum2 / v.size()) << ", largest " << largest);
    CHECK(largest < 8192);  // far from f16's 65504
    CHECK(std::sqrt(sum2 / v.size()) > 0.01);
    CHECK(nonzero > v.size() / 2);
  }
}

TEST_CASE("forcing the cooperative-matrix kernel without one is a clear error", "[coopmat]") {
  Context& ctx = test::gpu();
  if (ctx.coopmat().api != CoopApi::None) return test::skip("this device has cooperative matrices");
  Buffer w(ctx, 64 * row_bytes(DType::Q8_0, 64), Memory::Device, "w"), x(ctx, 16 * 64 * 4, Memory::Device, "x"),
      y(ctx, 16 * 64 * 4, Memory::Device, "y");
  Stream s(ctx);
  CHECK_THROWS_WITH(ops::matmul_fused(s, DType::Q8_0, w, x, y, 64, 16, 64, {.kernel = ops::MatmulKernel::Coop}),
                    Catch::Contains("no checked cooperative-matrix kernel for 64 x 16 of q8_0") &&
                        Catch::Contains(ctx.coopmat().why_not));
}

namespace {

// ops::matmul_fused on the cooperative-matrix kernel against ref::matmul_fused (y starts as random
// values, which accumulate and the gaps between planar parts must keep).
void check_coop_case(DType t, test::MatmulCase c, const ref::MatmulFusion& rf, bool with_bias, uint32_t seed,
                     const std::string& note) {
  test::Weights w = test::random_weights(t, c.M, c.K, seed);
  std::vector<float> x = test::random_floats(size_t(c.N) * c.K, seed + 1);
  std::vector<float> bias = test::random_floats(with_bias ? c.M : 1, seed + 2);
  std::vector<float> want = test::random_floats(ref::matmul_fused_size(c.M, c.N, rf), seed + 3);
  Buffer gy = test::to_gpu(want);
  ref::matmul_fused(want.data(), w.values.data(), x.data(), c.M, c.N, c.K, rf, with_bias ? bias.data() : nullptr);
  Buffer gw = test::bytes_to_gpu(w.stored), gx = test::to_gpu(x), gb = test::to_gpu(bias);
  Stream s(test::gpu());
  ops::MatmulFusion f{.accumulate = rf.accumulate,
                      .split = {uint32_t(rf.split[0]), uint32_t(rf.split[1])},
                      .offset = {uint32_t(rf.offset[0]), uint32_t(rf.offset[1])},
                      .kernel = ops::MatmulKernel::Coop};
  ops::matmul_fused(s, t, gw, gx, gy, c.M, c.N, c.K, f, with_bias ? gb.view() : BufferView{});
  s.submit_wait();
  test::check_nmse(test::from_gpu(gy), want, test::kCoopBound,
                   fmt::format("coopmat {} M={} N={} K={}{}{}{}", test::type_name(t), c.M, c.N, c.K,
                               rf.accumulate ? " accumulate" : "", with_bias ? " bias" : "", note));
}

}  // namespace

// Runs only where the device has cooperative matrices (a GPU): every weight type over shapes that
// are not multiples of the tiles, with bias, accumulation and planar parts, under both tiles.
TEST_CASE("cooperative-matrix products match the reference where the device has them", "[coopmat][gpu]") {
  Context& ctx = test::gpu();
  if (ctx.coopmat().api == CoopApi::None) return test::skip("no cooperative matrices: " + ctx.coopmat().why_not);
  Profile saved = ctx.profile();
  for (bool big : {true, false}) {
    Profile p = saved;
    p.coop_fill_wgs = big ? 0 : UINT32_MAX;
    ctx.set_profile(p);
    std::string note = big ? " (big tile)" : " (small tile)";
    for (DType t : test::weight_types()) {
      if (!ops::coop_supports(t)) continue;
      std::vector<uint32_t> ks = test::awkward_k(t);
      uint32_t K = ks.back(), seed = uint32_t(t) * 10;
      check_coop_case(t, {67, 33, ks[1]}, {}, false, seed, note);
      check_coop_case(t, {300, 150, K}, {}, true, seed + 4, note);
      check_coop_case(t, {130, 9, K}, {.accumulate = true}, false, seed + 5, note);
      uint32_t N = 20;  // q, k, v as one product: parts with gaps between them
      check_coop_case(t, {40, N, K}, {.split = {24, 32}, .offset = {24 * N + 5, 24 * N + 5 + 8 * N + 3}}, false,
                      seed + 6, note + " parts");
    }
  }
  ctx.set_profile(saved);
  // ops::matmul takes this kernel by itself from matmul_tiled_min_n tokens.
  CHECK(ops::coop_choice(ctx, DType::Q4_0, 4096, saved.matmul_tiled_min_n));
}

// Expert products on cooperative matrices against the reference, where the device has them.
TEST_CASE("cooperative-matrix expert products match the reference where the device has them", "[coopmat][gpu]") {
  Context& ctx = test::gpu();
  if (ctx.coopmat().api == CoopApi::None) return test::skip("no cooperative matrices: " + ctx.coopmat().why_not);
  const uint32_t n = 70, k = 2, E = 6, M = 75;  // tiled from matmul_tiled_min_n tokens
  for (DType t : test::weight_types()) {
    if (!ops::coop_supports(t)) continue;
    uint32_t K = test::awkward_k(t)[1], P = n * k;
    std::vector<int32_t> ids(P);
    for (uint32_t p = 0; p < P; ++p) ids[p] = int32_t((p * 7 + p / k) % E);
    test::Weights w = test::random_weights(t, size_t(E) * M, K, 11);
    ops::ExpertPlan plan = ops::expert_plan(ctx, n, k, E);
    REQUIRE(plan.tiled);
    std::vector<float> x = test::random_floats(size_t(n) * K, 12), want(size_t(P) * M);
    ref::matmul_id(want.data(), w.values.data(), x.data(), ids.data(), P, M, K, k);
    Buffer gw = test::bytes_to_gpu(w.stored), gx = test::to_gpu(x), gids = test::to_gpu(ids),
           gplan(ctx, plan.bytes(), Memory::Device, "plan"), gy(ctx, want.size() * 4, Memory::Device, "y");
    ops::ExpertSlice all{.first = 0, .count = E, .w = gw};
    Stream s(ctx);
    ops::moe_plan(s, plan, gids, gplan);
    ops::matmul_id(s, plan, t, std::span(&all, 1), gx, gplan, gy, M, K, k, 0, ops::MatmulKernel::Coop);
    s.submit_wait();
    test::check_nmse(test::from_gpu(gy), want, test::kCoopBound,
                     fmt::format("coopmat matmul_id {} n={} k={} E={} M={} K={}", test::type_name(t), n, k, E, M, K));
  }
}
