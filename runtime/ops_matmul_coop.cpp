// The cooperative-matrix prefill kernel: its table, tiles, dispatch and self-check.
#include "ops_matmul_coop.h"

#include <fmt/format.h>
#include <cmath>
#include <random>

#include "check.h"
#include "context.h"
#include "ops_matmul.h"
#include "ops_moe.h"

namespace vkllm::ops {

namespace {

struct CoopKernels {
  DType type;
  const spirv::Shader *nv, *khr;        // ops::matmul's
  const spirv::Shader *id_nv, *id_khr;  // ops::matmul_id's
};

#define VKLLM_COOP_ROW(T, t)                                                                                \
  {                                                                                                         \
    DType::T, &spirv::matmul_coop_##t##_nv, &spirv::matmul_coop_##t##_khr, &spirv::matmul_coop_id_##t##_nv, \
        &spirv::matmul_coop_id_##t##_khr                                                                    \
  }
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

// The size of a check's product: partial tiles in M and N, and K several steps of any bk, a whole
// number of the type's blocks.
uint32_t check_k(DType type) { return info(type).block_values == 256 ? 768 : 800; }

std::vector<float> check_x(size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

// Runs `record` (the tiled kernel into `want`, the candidate into `got`, `floats` each) on its own
// stream and judges the candidate; an error creating or running anything turns it off.
CoopCheck judge(const Context& ctx, uint64_t floats, const std::string& shape,
                const std::function<void(Stream&, BufferView want, BufferView got)>& record) {
  CoopCheck c;
  try {
    Buffer want(ctx, floats * 4, Memory::Device, "coopmat check tiled y");
    Buffer got(ctx, floats * 4, Memory::Device, "coopmat check coopmat y");
    Stream s(ctx);
    record(s, want, got);
    s.submit_wait();
    Compared r = compare(got.download<float>(floats), want.download<float>(floats));
    c.nmse = r.nmse;
    bool ok = r.nmse <= kCheckBound && !r.extra_nonfinite;
    c.state = ok ? CoopCheck::State::Kept : CoopCheck::State::Off;
    if (!ok)
      c.note = fmt::format("differs from the tiled kernel: nmse {:.3g}{} (bound {:g}) on {}", r.nmse,
                           r.extra_nonfinite ? " and NaN or infinity" : "", kCheckBound, shape);
  } catch (const DeviceLost&) {
    throw;  // the device is gone for every kernel, not only this one
  } catch (const Error& e) {
    c.state = CoopCheck::State::Off;
    c.note = e.what();
  }
  return c;
}

// Weights and x of a check, uploaded (an upload that fails is the check's error too).
struct CheckInputs {
  std::optional<Buffer> w, x;
  std::string error;
};
CheckInputs check_inputs(const Context& ctx, DType type, uint64_t rows, uint32_t K, uint64_t x_rows) {
  CheckInputs in;
  try {
    uint64_t bytes = rows * row_bytes(type, K);
    std::vector<uint8_t> wv = coop_check_weights(type, bytes);
    std::vector<float> xv = check_x(x_rows * K);
    in.w.emplace(ctx, bytes, Memory::Device, "coopmat check weights");
    in.x.emplace(ctx, xv.size() * 4, Memory::Device, "coopmat check x");
    in.w->upload(wv.data(), bytes);
    in.x->upload(std::span<const float>(xv));
  } catch (const DeviceLost&) {
    throw;
  } catch (const Error& e) {
    in.error = e.what();
  }
  return in;
}

CoopCheck run_check(const Context& ctx, DType type, const CoopTile& tile, const CoopCandidate& candidate) {
  uint32_t M = 2 * tile.bm + 24, N = tile.bn + 40, K = check_k(type);
  CheckInputs in = check_inputs(ctx, type, M, K, N);
  if (!in.error.empty()) return {.state = CoopCheck::State::Off, .note = in.error};
  return judge(ctx, uint64_t(N) * M, fmt::format("{} x {} x {}", M, N, K),
               [&](Stream& s, BufferView want, BufferView got) {
                 matmul_tiled(s, type, *in.w, *in.x, want, M, N, K);
                 candidate(s, *in.w, *in.x, got, M, N, K);
               });
}

// Expert products of 2·bn tokens, 2 of 3 experts each (token t: experts t % 3 and (t + 1) % 3),
// x per token: every expert's pairs fill a tile and part of another.
CoopCheck run_check_id(const Context& ctx, DType type, const CoopTile& tile, const CoopIdCandidate& candidate) {
  const uint32_t E = 3, used = 2, N = 2 * tile.bn, M = 2 * tile.bm + 24, K = check_k(type);
  if (tile.bn != ctx.profile().matmul_bn)  // the tiled matmul_id reads tiles of matmul_bn pairs
    return {.state = CoopCheck::State::Off,
            .note = fmt::format("tiles of {} pairs, not the profile's matmul_bn {}", tile.bn, ctx.profile().matmul_bn)};
  CheckInputs in = check_inputs(ctx, type, uint64_t(E) * M, K, N);
  if (!in.error.empty()) return {.state = CoopCheck::State::Off, .note = in.error};
  ExpertPlan plan = tiled_expert_plan(N, used, E, tile.bn);
  std::vector<int32_t> ids(size_t(N) * used);
  for (uint32_t t = 0; t < N; ++t) ids[t * used] = int32_t(t % E), ids[t * used + 1] = int32_t((t + 1) % E);
  std::optional<Buffer> id_buf, plan_buf;
  return judge(
      ctx, uint64_t(plan.n_pairs()) * M, fmt::format("{} tokens x {} of {} experts of {} x {}", N, used, E, M, K),
      [&](Stream& s, BufferView want, BufferView got) {
        id_buf.emplace(ctx, ids.size() * 4, Memory::Device, "coopmat check ids");
        plan_buf.emplace(ctx, plan.bytes(), Memory::Device, "coopmat check plan");
        id_buf->upload(std::span<const int32_t>(ids));
        moe_plan(s, plan, *id_buf, *plan_buf);
        ExpertSlice all{.first = 0, .count = E, .w = *in.w};
        matmul_id(s, plan, type, std::span(&all, 1), *in.x, *plan_buf, want, M, K, used, 0, MatmulKernel::Tiled);
        candidate(s, plan, *in.w, *in.x, *plan_buf, got, M, K);
      });
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
  if (ensure_coop_checked(ctx, CoopOp::Matmul, type, *tile).state != CoopCheck::State::Kept) return std::nullopt;
  return tile;
}

std::optional<CoopTile> coop_id_choice(const Context& ctx, DType type, uint32_t pairs) {
  const Profile& p = ctx.profile();
  if (ctx.coopmat().api == CoopApi::None || !p.coopmat || !coop_supports(type) || pairs != p.matmul_bn)
    return std::nullopt;
  for (const CoopTile& tile : {p.coop_tile, p.coop_tile_small})
    if (tile.bn == pairs && tile_fits(ctx.caps(), p, ctx.coopmat(), type, tile))
      return ensure_coop_checked(ctx, CoopOp::MatmulId, type, tile).state == CoopCheck::State::Kept
                 ? std::optional<CoopTile>(tile)
                 : std::nullopt;
  return std::nullopt;
}

namespace {

// The kernel of `op` for `type` in the device's form, its threads for the tile; an error where
// there is none.
std::pair<const spirv::Shader*, uint32_t> coop_kernel(const Context& ctx, CoopOp op, DType type, const CoopTile& t) {
  const CoopPlan& plan = ctx.coopmat();
  const CoopKernels* k = coop_kernels(type);
  ENSURE(plan.api != CoopApi::None && k, fmt::format("{}: no cooperative-matrix kernel for {} on this device ({})",
                                                     coop_op_name(op), info(type).name, plan.why_not));
  CoopTileNeeds needs = coop_tile_needs(t, plan.shape, planned_subgroup(ctx.caps(), ctx.profile()), type);
  ENSURE(fits(ctx.caps(), needs), fmt::format("{}: cooperative-matrix tile {} does not fit this device or shape {}",
                                              coop_op_name(op), coop_tile_name(t), coop_shape_name(plan.shape)));
  bool nv = plan.api == CoopApi::Nv, id = op == CoopOp::MatmulId;
  return {id ? (nv ? k->id_nv : k->id_khr) : (nv ? k->nv : k->khr), needs.threads};
}

}  // namespace

void dispatch_coop(Stream& s, DType type, const CoopTile& t, BufferView w, BufferView x, BufferView y, BufferView bias,
                   const push::MatmulPush& pc, uint32_t B, bool accumulate) {
  const CoopPlan& plan = s.context().coopmat();
  auto [shader, threads] = coop_kernel(s.context(), CoopOp::Matmul, type, t);
  bool has_bias = bias.size > 0;
  BufferView b = has_bias ? bias : x;  // the bias binding exists either way; x stands in
  w.size = uint64_t(B) * pc.M * row_bytes(type, pc.K);
  bool x_vec4 = x.offset % 16 == 0 && pc.x_row_stride % 4 == 0 && (B == 1 || pc.x_batch_stride % 4 == 0);
  s.dispatch(
      *shader,
      {threads, t.bm, t.bn, t.bk, t.wm, t.wn, has_bias, accumulate, plan.shape.m, plan.shape.n, plan.shape.k, x_vec4},
      {.reads = {w, x, b}, .writes = {y}, .writes_read = {accumulate ? y : BufferView{}}}, pc,
      Groups{ceil_div(pc.M, t.bm), ceil_div(pc.N, t.bn), B});
}

void dispatch_coop_id(Stream& s, DType type, const CoopTile& t, const Bindings& b, const push::MatmulIdPush& pc,
                      uint32_t tiles, bool x_vec4) {
  const CoopPlan& plan = s.context().coopmat();
  auto [shader, threads] = coop_kernel(s.context(), CoopOp::MatmulId, type, t);
  s.dispatch(*shader,
             {threads, t.bm, t.bn, t.bk, t.wm, t.wn, false, false, plan.shape.m, plan.shape.n, plan.shape.k, x_vec4}, b,
             pc, Groups{tiles, ceil_div(pc.M, t.bm), 1});
}

const CoopCheck& check_coop(const Context& ctx, DType type, const CoopTile& tile, const CoopCandidate& candidate) {
  return ctx.coop_checks().done[{CoopOp::Matmul, type, tile}] = run_check(ctx, type, tile, candidate);
}

const CoopCheck& check_coop_id(const Context& ctx, DType type, const CoopTile& tile, const CoopIdCandidate& candidate) {
  return ctx.coop_checks().done[{CoopOp::MatmulId, type, tile}] = run_check_id(ctx, type, tile, candidate);
}

const CoopCheck& ensure_coop_checked(const Context& ctx, CoopOp op, DType type, const CoopTile& tile) {
  auto it = ctx.coop_checks().done.find({op, type, tile});
  if (it != ctx.coop_checks().done.end() && it->second.state != CoopCheck::State::Unchecked) return it->second;
  if (op == CoopOp::MatmulId)
    return check_coop_id(
        ctx, type, tile,
        [&](Stream& s, const ExpertPlan& plan, BufferView w, BufferView x, BufferView plan_buf, BufferView y,
            uint32_t M, uint32_t K) {
          push::MatmulIdPush pc{.M = M,
                                .K = K,
                                .n_pairs = plan.n_pairs(),
                                .n_experts = plan.n_experts,
                                .max_tiles = plan.max_tiles,
                                .x_div = plan.n_used,
                                .x_row_stride = K,
                                .y_row_stride = M,
                                .expert0 = 0,
                                .expert1 = plan.n_experts};
          dispatch_coop_id(s, type, tile, {.reads = {w, x, plan_buf}, .writes = {y}}, pc, plan.max_tiles, K % 4 == 0);
        });
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
    for (const CoopTile& tile : {p.coop_tile, p.coop_tile_small}) {
      if (!tile_fits(ctx.caps(), p, ctx.coopmat(), k.type, tile)) continue;
      ensure_coop_checked(ctx, CoopOp::Matmul, k.type, tile);
      if (tile.bn == p.matmul_bn) ensure_coop_checked(ctx, CoopOp::MatmulId, k.type, tile);
    }
}

}  // namespace vkllm::ops
