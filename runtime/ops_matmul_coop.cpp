// The cooperative-matrix prefill kernel: its table, tiles, dispatch and self-check.
#include "ops_matmul_coop.h"

#include <fmt/format.h>
#include <cmath>
#include <random>

#include "check.h"
#include "context.h"
#include "ops_matmul.h"

namespace vkllm::ops {

namespace {

struct CoopKernels {
  DType type;
  const spirv::Shader* nv;
  const spirv::Shader* khr;
};

#define VKLLM_COOP_ROW(T, t) \
  { DType::T, &spirv::matmul_coop_##t##_nv, &spirv::matmul_coop_##t##_khr }
const CoopKernels kCoopKernels[] = {
    VKLLM_COOP_ROW(F16, f16),       VKLLM_COOP_ROW(BF16, bf16),     VKLLM_COOP_ROW(Q8_0, q8_0),
    VKLLM_COOP_ROW(Q4_0, q4_0),     VKLLM_COOP_ROW(Q4_1, q4_1),     VKLLM_COOP_ROW(Q5_0, q5_0),
    VKLLM_COOP_ROW(Q5_1, q5_1),     VKLLM_COOP_ROW(Q2_K, q2_k),     VKLLM_COOP_ROW(Q3_K, q3_k),
    VKLLM_COOP_ROW(Q4_K, q4_k),     VKLLM_COOP_ROW(Q5_K, q5_k),     VKLLM_COOP_ROW(Q6_K, q6_k),
    VKLLM_COOP_ROW(IQ4_NL, iq4_nl), VKLLM_COOP_ROW(IQ4_XS, iq4_xs), VKLLM_COOP_ROW(IQ3_S, iq3_s),
    VKLLM_COOP_ROW(MXFP4, mxfp4),
};
#undef VKLLM_COOP_ROW

const CoopKernels* coop_kernels(DType t) {
  for (const CoopKernels& k : kCoopKernels)
    if (k.type == t) return &k;
  return nullptr;
}

// The subgroup size the coop pipelines are planned with: the profile's run size (what pipelines
// are required to run where the device allows), else the device's.
uint32_t planned_subgroup(const DeviceCaps& caps, const Profile& p) {
  return p.run_subgroup_size ? p.run_subgroup_size : caps.subgroup_size;
}

bool fits(const DeviceCaps& caps, const CoopTileNeeds& n) {
  return n.valid && n.shared_bytes <= caps.max_shared_memory && n.threads <= caps.max_workgroup_invocations &&
         n.threads <= caps.max_workgroup_size[0];
}

}  // namespace

// Weight bytes of `type` whose every field decodes to a moderate finite value, from any bytes at
// even offsets and, at odd ones (the high byte of each 16-bit word: the sign and exponent of every
// f16 scale, which all sit at even offsets), a random sign over exponents 2^-8 .. 2^-1. BF16 keeps
// its exponent in the high byte too, nearer its bias; MXFP4's e8m0 scales sit at any byte, so all
// of its bytes stay near 127 (2^-7 .. 2^4).
std::vector<uint8_t> coop_check_weights(DType type, uint64_t bytes) {
  std::mt19937 rng(0xC00Bu + uint32_t(type));
  std::vector<uint8_t> w(bytes);
  for (uint64_t i = 0; i < bytes; ++i) {
    uint32_t r = rng();
    if (type == DType::MXFP4)
      w[i] = uint8_t(120 + r % 12);
    else if (i % 2 == 0)
      w[i] = uint8_t(r);
    else if (type == DType::BF16)
      w[i] = uint8_t((r & 0x80) | 0x3C | ((r >> 8) & 3));
    else
      w[i] = uint8_t((r & 0x80) | ((7 + (r >> 8) % 8) << 2) | ((r >> 16) & 3));
  }
  return w;
}

namespace {

struct Compared {
  double nmse = 0;
  bool extra_nonfinite = false;
};
Compared compare(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  Compared c;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(want[i])) continue;
    if (!std::isfinite(got[i])) {
      c.extra_nonfinite = true;
      continue;
    }
    double d = double(got[i]) - want[i];
    num += d * d, den += double(want[i]) * want[i];
  }
  c.nmse = den > 0 ? num / den : num;
  return c;
}

constexpr double kCheckBound = 1e-5;  // docs/design.md: a path through f16

CoopCheck run_check(const Context& ctx, DType type, const CoopTile& tile, const CoopCandidate& candidate) {
  // Partial tiles in M and N; K several steps of any bk, a whole number of the type's blocks.
  uint32_t M = 2 * tile.bm + 24, N = tile.bn + 40, K = info(type).block_values == 256 ? 768 : 800;
  uint64_t w_bytes = uint64_t(M) * row_bytes(type, K);
  std::vector<uint8_t> wv = coop_check_weights(type, w_bytes);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> xv(size_t(N) * K);
  for (float& v : xv) v = dist(rng);
  CoopCheck c;
  try {
    Buffer w(ctx, w_bytes, Memory::Device, "coopmat check weights");
    Buffer x(ctx, xv.size() * 4, Memory::Device, "coopmat check x");
    Buffer want(ctx, uint64_t(N) * M * 4, Memory::Device, "coopmat check tiled y");
    Buffer got(ctx, uint64_t(N) * M * 4, Memory::Device, "coopmat check coopmat y");
    w.upload(wv.data(), w_bytes);
    x.upload(std::span<const float>(xv));
    Stream s(ctx);
    matmul_tiled(s, type, w, x, want, M, N, K);
    candidate(s, w, x, got, M, N, K);
    s.submit_wait();
    Compared r = compare(got.download<float>(size_t(N) * M), want.download<float>(size_t(N) * M));
    c.nmse = r.nmse;
    bool ok = r.nmse <= kCheckBound && !r.extra_nonfinite;
    c.state = ok ? CoopCheck::State::Kept : CoopCheck::State::Off;
    if (!ok)
      c.note = fmt::format("differs from the tiled kernel: nmse {:.3g}{} (bound {:g}) on {} x {} x {}", r.nmse,
                           r.extra_nonfinite ? " and NaN or infinity" : "", kCheckBound, M, N, K);
  } catch (const DeviceLost&) {
    throw;  // the device is gone for every kernel, not only this one
  } catch (const Error& e) {
    c.state = CoopCheck::State::Off;
    c.note = e.what();
  }
  return c;
}

}  // namespace

bool coop_supports(DType type) { return coop_kernels(type) != nullptr; }

CoopTileNeeds coop_tile_needs(const CoopTile& t, const CoopShape& shape, uint32_t subgroup, DType type) {
  CoopTileNeeds n;
  if (!t.bm || !t.bn || !t.bk || !t.wm || !t.wn || !shape.m || !shape.n || !shape.k || !subgroup) return n;
  bool whole = t.bm % t.wm == 0 && t.bn % t.wn == 0 && t.wm % shape.m == 0 && t.wn % shape.n == 0 && t.bk % 8 == 0 &&
               t.bk % shape.k == 0;
  if (!whole) return n;
  uint32_t subgroups = (t.bm / t.wm) * (t.bn / t.wn);
  n.threads = subgroups * subgroup;
  uint32_t runs = t.bk / 8;  // 16-byte runs per tile row; each thread loads whole runs
  n.valid = (t.bm * runs) % n.threads == 0 && (t.bn * runs) % n.threads == 0;
  uint32_t table = type == DType::IQ3_S ? 512 * 4 : 0;  // quant.glsl's grid
  n.shared_bytes = (t.bm + t.bn) * (runs + 1) * 16 + subgroups * shape.m * shape.n * 4 + table;
  return n;
}

namespace {

bool tile_fits(const DeviceCaps& caps, const Profile& p, const CoopPlan& plan, DType type, const CoopTile& tile) {
  return fits(caps, coop_tile_needs(tile, plan.shape, planned_subgroup(caps, p), type));
}

}  // namespace

std::optional<CoopTile> coop_tile_for(const DeviceCaps& caps, const Profile& p, const CoopPlan& plan, DType type,
                                      uint32_t M, uint32_t N) {
  if (plan.api == CoopApi::None || !p.coopmat || !coop_supports(type)) return std::nullopt;
  bool big_fits = tile_fits(caps, p, plan, type, p.coop_tile);
  bool small_fits = tile_fits(caps, p, plan, type, p.coop_tile_small);
  uint64_t big_wgs = uint64_t(ceil_div(M, p.coop_tile.bm)) * ceil_div(N, p.coop_tile.bn);
  if (big_fits && (big_wgs >= p.coop_fill_wgs || !small_fits)) return p.coop_tile;
  if (small_fits) return p.coop_tile_small;
  return std::nullopt;
}

std::optional<CoopTile> coop_choice(const Context& ctx, DType type, uint32_t M, uint32_t N) {
  std::optional<CoopTile> tile = coop_tile_for(ctx.caps(), ctx.profile(), ctx.coopmat(), type, M, N);
  if (!tile) return std::nullopt;
  if (ensure_coop_checked(ctx, type, *tile).state != CoopCheck::State::Kept) return std::nullopt;
  return tile;
}

void dispatch_coop(Stream& s, DType type, const CoopTile& t, BufferView w, BufferView x, BufferView y, BufferView bias,
                   const push::MatmulPush& pc, uint32_t B, bool accumulate) {
  const Context& ctx = s.context();
  const CoopPlan& plan = ctx.coopmat();
  const CoopKernels* k = coop_kernels(type);
  ENSURE(plan.api != CoopApi::None && k,
         fmt::format("matmul: no cooperative-matrix kernel for {} on this device ({})", info(type).name, plan.why_not));
  CoopTileNeeds needs = coop_tile_needs(t, plan.shape, planned_subgroup(ctx.caps(), ctx.profile()), type);
  ENSURE(fits(ctx.caps(), needs), fmt::format("matmul: cooperative-matrix tile {}x{}x{} ({}x{} per subgroup) does "
                                              "not fit this device or shape {}x{}x{}",
                                              t.bm, t.bn, t.bk, t.wm, t.wn, plan.shape.m, plan.shape.n, plan.shape.k));
  bool has_bias = bias.size > 0;
  BufferView b = has_bias ? bias : x;  // the bias binding exists either way; x stands in
  w.size = uint64_t(B) * pc.M * row_bytes(type, pc.K);
  bool x_vec4 = x.offset % 16 == 0 && pc.x_row_stride % 4 == 0 && (B == 1 || pc.x_batch_stride % 4 == 0);
  s.dispatch(plan.api == CoopApi::Nv ? *k->nv : *k->khr,
             {needs.threads, t.bm, t.bn, t.bk, t.wm, t.wn, has_bias, accumulate, plan.shape.m, plan.shape.n,
              plan.shape.k, x_vec4},
             {.reads = {w, x, b}, .writes = {y}, .writes_read = {accumulate ? y : BufferView{}}}, pc,
             Groups{ceil_div(pc.M, t.bm), ceil_div(pc.N, t.bn), B});
}

const CoopCheck& check_coop(const Context& ctx, DType type, const CoopTile& tile, const CoopCandidate& candidate) {
  CoopCheck c = run_check(ctx, type, tile, candidate);
  return ctx.coop_checks().done[{type, tile}] = std::move(c);
}

const CoopCheck& ensure_coop_checked(const Context& ctx, DType type, const CoopTile& tile) {
  auto it = ctx.coop_checks().done.find({type, tile});
  if (it != ctx.coop_checks().done.end() && it->second.state != CoopCheck::State::Unchecked) return it->second;
  return check_coop(
      ctx, type, tile, [&](Stream& s, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K) {
        push::MatmulPush pc{.M = M, .N = N, .K = K, .x_row_stride = K, .y_row_stride = M, .split1 = M, .split2 = M};
        dispatch_coop(s, type, tile, w, x, y, {}, pc, 1, false);
      });
}

void check_all_coop(const Context& ctx) {
  const Profile& p = ctx.profile();
  if (ctx.coopmat().api == CoopApi::None || !p.coopmat) return;
  for (const CoopKernels& k : kCoopKernels)
    for (const CoopTile& tile : {p.coop_tile, p.coop_tile_small})
      if (tile_fits(ctx.caps(), p, ctx.coopmat(), k.type, tile)) ensure_coop_checked(ctx, k.type, tile);
}

}  // namespace vkllm::ops
