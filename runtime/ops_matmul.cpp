// Entry points of the weight-matrix kernels: the shader table per weight type, argument checks,
// the matvec/tiled/cooperative-matrix choice, and row ranges for weights larger than one binding
// may be.
#include "ops_matmul.h"

#include <fmt/format.h>
#include <array>
#include <bit>
#include <numeric>

#include "align.h"
#include "check.h"
#include "context.h"
#include "ops_matmul_coop.h"
#include "push.h"

namespace vkllm::ops {

namespace {

// --- the shaders of each weight type (compile-time symbols, no lookup by name)

struct TypeKernels {
  DType type;
  const spirv::Shader* matvec;
  const spirv::Shader* matmul;
  const spirv::Shader* get_rows;
};

const TypeKernels kKernels[] = {
    {DType::F32, &spirv::matvec_f32, &spirv::matmul_f32, &spirv::get_rows_f32},
    {DType::F16, &spirv::matvec_f16, &spirv::matmul_f16, &spirv::get_rows_f16},
    {DType::BF16, &spirv::matvec_bf16, &spirv::matmul_bf16, &spirv::get_rows_bf16},
    {DType::Q8_0, &spirv::matvec_q8_0, &spirv::matmul_q8_0, &spirv::get_rows_q8_0},
    {DType::Q4_0, &spirv::matvec_q4_0, &spirv::matmul_q4_0, &spirv::get_rows_q4_0},
    {DType::Q4_1, &spirv::matvec_q4_1, &spirv::matmul_q4_1, &spirv::get_rows_q4_1},
    {DType::Q5_0, &spirv::matvec_q5_0, &spirv::matmul_q5_0, &spirv::get_rows_q5_0},
    {DType::Q5_1, &spirv::matvec_q5_1, &spirv::matmul_q5_1, &spirv::get_rows_q5_1},
    {DType::Q2_K, &spirv::matvec_q2_k, &spirv::matmul_q2_k, &spirv::get_rows_q2_k},
    {DType::Q3_K, &spirv::matvec_q3_k, &spirv::matmul_q3_k, &spirv::get_rows_q3_k},
    {DType::Q4_K, &spirv::matvec_q4_k, &spirv::matmul_q4_k, &spirv::get_rows_q4_k},
    {DType::Q5_K, &spirv::matvec_q5_k, &spirv::matmul_q5_k, &spirv::get_rows_q5_k},
    {DType::Q6_K, &spirv::matvec_q6_k, &spirv::matmul_q6_k, &spirv::get_rows_q6_k},
    {DType::IQ4_NL, &spirv::matvec_iq4_nl, &spirv::matmul_iq4_nl, &spirv::get_rows_iq4_nl},
    {DType::IQ4_XS, &spirv::matvec_iq4_xs, &spirv::matmul_iq4_xs, &spirv::get_rows_iq4_xs},
    {DType::IQ3_S, &spirv::matvec_iq3_s, &spirv::matmul_iq3_s, &spirv::get_rows_iq3_s},
    {DType::MXFP4, &spirv::matvec_mxfp4, &spirv::matmul_mxfp4, &spirv::get_rows_mxfp4},
};

// Shared memory the type's lookup tables take in every kernel (quant.glsl quant_init).
uint32_t table_bytes(DType t) { return t == DType::IQ3_S ? 512 * 4 : 0; }

const TypeKernels& kernels_for(DType t, const char* op) {
  for (const TypeKernels& k : kKernels)
    if (k.type == t) return k;
  throw Error(fmt::format("{}: no kernel reads weights of type {}", op, info(t).name));
}

// --- checks

// Prefill: the cooperative-matrix kernel where the device has a checked one for the product
// (ops_matmul_coop.h), else the tiled one. Coop: that kernel or an error (tests, benchmarks).
enum class Kind { Matvec, Tiled, Prefill, Coop };

// Floats spanned by B batches of N rows of `len` values.
uint64_t span(uint32_t B, uint64_t batch_stride, uint32_t N, uint64_t row_stride, uint64_t len) {
  return (B - 1) * batch_stride + (N - 1) * row_stride + len;
}

// y_cols: the values of one token's first part of y (split1; M / 2 with glu).
void check_matmul(const char* op, DType t, BufferView w, BufferView x, BufferView y, BufferView bias,
                  const push::MatmulPush& pc, uint32_t B, uint32_t y_cols) {
  const DTypeInfo& ti = info(t);
  ENSURE(pc.K > 0 && pc.K % ti.block_values == 0,
         fmt::format("{}: K = {} is not a multiple of {}'s block of {} values", op, pc.K, ti.name, ti.block_values));
  uint64_t w_need = uint64_t(B) * pc.M * row_bytes(t, pc.K);
  ENSURE(w.size >= w_need,
         fmt::format("{}: weight view of {} bytes is smaller than {} x {} rows of K = {} {} ({} bytes)", op, w.size, B,
                     pc.M, pc.K, ti.name, w_need));
  uint64_t x_need = 4 * span(B, pc.x_batch_stride, pc.N, pc.x_row_stride, pc.K);
  ENSURE(x.size >= x_need, fmt::format("{}: x view of {} bytes is smaller than its {} x {} tokens of K = {} ({} bytes)",
                                       op, x.size, B, pc.N, pc.K, x_need));
  uint64_t y_need = 4 * span(B, pc.y_batch_stride, pc.N, pc.y_row_stride, y_cols);  // the first part
  ENSURE(y.size >= y_need, fmt::format("{}: y view of {} bytes is smaller than its {} x {} tokens of M = {} ({} bytes)",
                                       op, y.size, B, pc.N, pc.M, y_need));
  ENSURE(bias.size == 0 || bias.size >= 4ull * B * pc.M,
         fmt::format("{}: bias view of {} bytes holds fewer than {} x {} floats", op, bias.size, B, pc.M));
  ENSURE(!x.overlaps(y), fmt::format("{}: y overlaps x", op));
}

// Rows per matvec workgroup and per thread: the profile's, at least 2 with glu (a thread holds
// the gate and up rows of one output).
uint32_t matvec_rows(const Profile& p, const MatmulFusion& f) {
  return f.glu == Glu::None ? p.matvec_rows : std::max(2u, p.matvec_rows);
}
uint32_t matvec_rows_per_thread(const Profile& p, const MatmulFusion& f) {
  return f.glu == Glu::None ? p.matvec_rows_per_thread : std::max(2u, p.matvec_rows_per_thread);
}

void check_profile(const Context& ctx, Kind kind, DType t, uint32_t n_tokens, uint32_t B, const MatmulFusion& f) {
  const Profile& p = ctx.profile();
  uint32_t shared = ctx.caps().max_shared_memory - table_bytes(t);
  if (kind == Kind::Matvec) {
    uint32_t rt = matvec_rows_per_thread(p, f), rows = matvec_rows(p, f);
    ENSURE(std::has_single_bit(p.matvec_wg) && std::has_single_bit(rows) && std::has_single_bit(rt) && rt <= rows &&
               rows <= p.matvec_wg * rt && p.matvec_tokens > 0,
           fmt::format("profile {}: matvec_wg, matvec_rows and matvec_rows_per_thread must be powers of two with "
                       "rows_per_thread <= rows <= wg x rows_per_thread",
                       p.name));
    ENSURE(4ull * (rt + (f.norm.size ? 1 : 0)) * p.matvec_tokens * p.matvec_wg <= shared,
           fmt::format("profile {}: matvec reduction needs more than {} B of shared memory", p.name, shared));
    uint64_t z = uint64_t(B) * ceil_div(n_tokens, std::min(n_tokens, p.matvec_tokens));
    ENSURE(z <= ctx.caps().max_workgroup_count[2],
           fmt::format("matvec: {} batches x {} tokens exceed the device's {} workgroups in z", B, n_tokens,
                       ctx.caps().max_workgroup_count[2]));
    return;
  }
  if (kind == Kind::Coop) return;  // dispatch_coop checks its own tile
  ENSURE(p.matmul_tm && p.matmul_tn && p.matmul_bm % p.matmul_tm == 0 && p.matmul_bn % p.matmul_tn == 0 &&
             (p.matmul_bm / p.matmul_tm) * (p.matmul_bn / p.matmul_tn) == p.matmul_wg && p.matmul_bk % 8 == 0,
         fmt::format("profile {}: matmul tile {}x{}x{} does not split into {} threads of {}x{}", p.name, p.matmul_bm,
                     p.matmul_bn, p.matmul_bk, p.matmul_wg, p.matmul_tm, p.matmul_tn));
  ENSURE(4ull * p.matmul_bk * (p.matmul_bm + p.matmul_bn + 1) <= shared,
         fmt::format("profile {}: matmul tiles need more than {} B of shared memory", p.name, shared));
}

// The planar parts of a fused product (MatmulFusion::split) into the push constants, checked: the
// parts follow each other in y without overlap. Without a split both split points are M.
void set_parts(const char* op, push::MatmulPush& pc, const MatmulFusion& f, BufferView y) {
  pc.split1 = pc.split2 = pc.M;
  if (!f.split[0]) return;
  pc.split1 = f.split[0], pc.split2 = f.split[1] ? f.split[1] : pc.M;
  pc.y_row_stride = pc.split1;  // the first part is packed too
  pc.part1_offset = f.offset[0], pc.part2_offset = f.split[1] ? f.offset[1] : 0;
  uint64_t N = pc.N, end0 = (N - 1) * pc.y_row_stride + pc.split1, end1 = pc.part1_offset + N * (pc.split2 - pc.split1);
  uint64_t end2 = pc.part2_offset + N * (pc.M - pc.split2);
  ENSURE(pc.split1 < pc.split2 && pc.split2 <= pc.M && end0 <= pc.part1_offset &&
             (pc.split2 == pc.M || end1 <= pc.part2_offset),
         fmt::format("{}: parts split at rows {} and {} of {} overlap in y", op, pc.split1, pc.split2, pc.M));
  ENSURE(4 * std::max(end1, pc.split2 < pc.M ? end2 : 0) <= y.size,
         fmt::format("{}: y view of {} bytes is smaller than its parts", op, y.size));
}

// Rows per binding so that `row_bytes`-sized rows fit maxStorageBufferRange and each range starts
// at an offset the device accepts (also for f32 views offset by the same row count).
uint32_t rows_per_binding(const DeviceCaps& caps, uint64_t row_bytes, bool f32_views_too) {
  uint64_t a = caps.storage_offset_alignment;
  uint64_t step = a / std::gcd(row_bytes, a);
  if (f32_views_too) step = std::lcm(step, a / std::gcd<uint64_t>(4, a));
  uint64_t rows = caps.max_storage_buffer_range / row_bytes / step * step;
  ENSURE(rows > 0, fmt::format("a weight row of {} bytes exceeds maxStorageBufferRange", row_bytes));
  return static_cast<uint32_t>(std::min<uint64_t>(rows, UINT32_MAX));
}

BufferView sub(BufferView v, uint64_t offset, uint64_t size) { return {v.buffer, v.offset + offset, size}; }

// --- dispatch

void dispatch(Stream& s, Kind kind, const TypeKernels& k, BufferView w, BufferView x, BufferView y, BufferView bias,
              const push::MatmulPush& pc, uint32_t B, const MatmulFusion& f, const std::optional<CoopTile>& coop) {
  if (kind == Kind::Coop) return dispatch_coop(s, k.type, *coop, w, x, y, bias, pc, B, f.accumulate);
  // w: from the first row on; its size may run past the rows.
  const Profile& p = s.context().profile();
  bool has_bias = bias.size > 0, norm = f.norm.size > 0;
  BufferView b = has_bias ? bias : x;  // the bias and norm bindings exist either way; x stands in
  uint64_t rows_bytes = uint64_t(B) * pc.M * row_bytes(k.type, pc.K);
  if (kind == Kind::Matvec) {
    // Float rows start 16-byte aligned and x loads as vec4 (else a scalar path is compiled).
    bool aligned = pc.K % 8 == 0 && pc.x_row_stride % 4 == 0 && (B == 1 || pc.x_batch_stride % 4 == 0);
    // The token block is exact, not rounded up to a power of two: rounding would save the suite
    // 14 s of compilation (cold, -j2) but cost lavapipe 9% at three sequences (docs/decisions.md).
    uint32_t nt = std::min(pc.N, p.matvec_tokens), rows = matvec_rows(p, f);
    // Wide loads read whole 16-byte words, so the binding must end on one; the caller's view
    // (Weights pads each tensor's) may hold the few bytes past the rows.
    uint64_t wide_bytes = align_up(rows_bytes, 16);
    bool wide_type = k.type == DType::Q8_0                              ? p.matvec_wide_loads
                     : k.type == DType::Q4_0 || k.type == DType::IQ4_NL ? p.matvec_wide_q4
                                                                        : false;
    bool wide = wide_type && w.size >= wide_bytes && wide_bytes <= s.context().caps().max_storage_buffer_range;
    w.size = wide ? wide_bytes : rows_bytes;
    Groups g = grid(ceil_div(pc.M, rows));
    g.z = B * ceil_div(pc.N, nt);  // batch-major token blocks; check_profile bounds it
    push::MatmulPush mp = pc;
    mp.has_bias = has_bias, mp.accumulate = f.accumulate;
    s.dispatch(*k.matvec,
               {p.matvec_wg, p.subgroup_ops, rows, nt, aligned, matvec_rows_per_thread(p, f), uint32_t(f.glu), wide,
                p.matvec_unroll, norm},
               {.reads = {w, x, b, norm ? f.norm : x}, .writes = {y}, .writes_read = {f.accumulate ? y : BufferView{}}},
               mp, g);
  } else {
    w.size = rows_bytes;
    Groups g{ceil_div(pc.M, p.matmul_bm), ceil_div(pc.N, p.matmul_bn), B};
    s.dispatch(*k.matmul,
               {p.matmul_wg, p.matmul_bm, p.matmul_bn, p.matmul_bk, p.matmul_tm, p.matmul_tn, has_bias, f.accumulate},
               {.reads = {w, x, b}, .writes = {y}, .writes_read = {f.accumulate ? y : BufferView{}}}, pc, g);
  }
}

void run_matmul(const char* op, Kind kind, Stream& s, DType t, BufferView w, BufferView x, BufferView y, uint32_t M,
                uint32_t N, uint32_t K, const MatmulBatch& batch, BufferView bias, const MatmulFusion& f = {}) {
  const TypeKernels& k = kernels_for(t, op);
  uint32_t B = batch.count;
  if (M == 0 || N == 0 || B == 0) return;
  std::optional<CoopTile> coop;
  if (kind == Kind::Prefill || kind == Kind::Coop) {
    coop = coop_choice(s.context(), t, M, N);
    ENSURE(
        coop || kind == Kind::Prefill,
        fmt::format("{}: no checked cooperative-matrix kernel for {} x {} of {} on this device{}", op, M, N,
                    info(t).name, s.context().coopmat().why_not.empty() ? "" : ": " + s.context().coopmat().why_not));
    kind = coop ? Kind::Coop : Kind::Tiled;
  }
  push::MatmulPush pc{.M = M,
                      .N = N,
                      .K = K,
                      .x_batch_stride = batch.x_batch_stride,
                      .x_row_stride = batch.x_row_stride ? batch.x_row_stride : K,
                      .y_batch_stride = batch.y_batch_stride,
                      .y_row_stride = batch.y_row_stride ? batch.y_row_stride : M};
  set_parts(op, pc, f, y);
  if (f.glu != Glu::None) {
    ENSURE(kind == Kind::Matvec && B == 1 && !bias.size && !f.accumulate && !f.split[0] && M % 2 == 0,
           fmt::format("{}: a gated product runs on the matvec kernel alone, without bias, parts or accumulate", op));
    pc.y_row_stride = M / 2;
  }
  if (f.norm.size) {
    ENSURE(kind == Kind::Matvec && B == 1,
           fmt::format("{}: a product that norms its input runs on the matvec kernel alone, unbatched", op));
    ENSURE(f.norm.size >= 4ull * K,
           fmt::format("{}: norm view of {} bytes holds fewer than K = {} floats", op, f.norm.size, K));
    pc.norm_eps = f.norm_eps;
  }
  check_matmul(op, t, w, x, y, bias, pc, B, f.glu != Glu::None ? M / 2 : pc.split1);
  check_profile(s.context(), kind, t, N, B, f);
  const DeviceCaps& caps = s.context().caps();
  uint64_t rb = row_bytes(t, K);
  if (uint64_t(B) * M * rb <= caps.max_storage_buffer_range) {
    dispatch(s, kind, k, w, x, y, bias, pc, B, f, coop);
    return;
  }
  // One binding cannot hold the weights: ranges of rows, each writing its columns of y.
  ENSURE(pc.split1 == M && f.glu == Glu::None,
         fmt::format("{}: a product in parts or a gated one must fit one binding", op));
  ENSURE(B == 1, fmt::format("{}: batched weights of {} bytes exceed maxStorageBufferRange", op, uint64_t(B) * M * rb));
  uint32_t step = rows_per_binding(caps, rb, true);
  for (uint32_t m0 = 0; m0 < M; m0 += step) {
    uint32_t rows = std::min(step, M - m0);
    push::MatmulPush part = pc;
    part.M = rows;
    BufferView part_bias = bias.size ? sub(bias, 4ull * m0, 4ull * rows) : BufferView{};
    dispatch(s, kind, k, sub(w, m0 * rb, w.size - m0 * rb), x, sub(y, 4ull * m0, y.size - 4ull * m0), part_bias, part,
             1, f, coop);
  }
}

}  // namespace

void matmul(Stream& s, DType wtype, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K,
            const MatmulBatch& batch, BufferView bias) {
  Kind kind = N < s.context().profile().matmul_tiled_min_n ? Kind::Matvec : Kind::Prefill;
  run_matmul("matmul", kind, s, wtype, w, x, y, M, N, K, batch, bias);
}

void matvec(Stream& s, DType wtype, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K,
            const MatmulBatch& batch, BufferView bias) {
  run_matmul("matvec", Kind::Matvec, s, wtype, w, x, y, M, N, K, batch, bias);
}

void matmul_tiled(Stream& s, DType wtype, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K,
                  const MatmulBatch& batch, BufferView bias) {
  run_matmul("matmul_tiled", Kind::Tiled, s, wtype, w, x, y, M, N, K, batch, bias);
}

namespace {

Kind fused_kind(const Stream& s, const MatmulFusion& fusion, uint32_t N) {
  return fusion.kernel == MatmulKernel::Matvec          ? Kind::Matvec
         : fusion.kernel == MatmulKernel::Tiled         ? Kind::Tiled
         : fusion.kernel == MatmulKernel::Coop          ? Kind::Coop
         : N < s.context().profile().matmul_tiled_min_n ? Kind::Matvec
                                                        : Kind::Prefill;
}

}  // namespace

bool matmul_fusable(const Stream& s, const MatmulFusion& fusion, uint32_t N) {
  if (fusion.norm.size && !s.context().profile().matvec_norm) return false;
  return (fusion.glu == Glu::None && !fusion.norm.size) || fused_kind(s, fusion, N) == Kind::Matvec;
}

void matmul_fused(Stream& s, DType wtype, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K,
                  const MatmulFusion& fusion, BufferView bias) {
  // With glu the kernel's rows are the 2M rows of gate and up.
  uint32_t rows = fusion.glu == Glu::None ? M : 2 * M;
  run_matmul("matmul_fused", fused_kind(s, fusion, N), s, wtype, w, x, y, rows, N, K, {}, bias, fusion);
}

void get_rows(Stream& s, DType type, BufferView table, BufferView ids, BufferView y, uint32_t n_ids, uint32_t K) {
  const TypeKernels& k = kernels_for(type, "get_rows");
  const DTypeInfo& ti = info(type);
  if (n_ids == 0) return;
  ENSURE(K > 0 && K % ti.block_values == 0,
         fmt::format("get_rows: K = {} is not a multiple of {}'s block of {} values", K, ti.name, ti.block_values));
  uint64_t rb = row_bytes(type, K);
  uint64_t total = table.size / rb;
  ENSURE(total > 0, fmt::format("get_rows: table view of {} bytes holds no row of {} bytes", table.size, rb));
  ENSURE(ids.size >= 4ull * n_ids,
         fmt::format("get_rows: ids view of {} bytes holds fewer than {} ids", ids.size, n_ids));
  ENSURE(y.size >= 4ull * n_ids * K,
         fmt::format("get_rows: y view of {} bytes is smaller than {} rows of {} floats", y.size, n_ids, K));
  const DeviceCaps& caps = s.context().caps();
  ENSURE(n_ids <= caps.max_workgroup_count[1],
         fmt::format("get_rows: {} ids, at most {} per call", n_ids, caps.max_workgroup_count[1]));
  uint32_t wg = s.context().profile().wg_size;
  Groups g{std::max(1u, ceil_div(K / 8, wg)), n_ids, 1};
  uint32_t step = rows_per_binding(caps, rb, false);
  for (uint64_t r0 = 0; r0 < total; r0 += step) {
    uint32_t rows = static_cast<uint32_t>(std::min<uint64_t>(step, total - r0));
    push::GetRowsPush pc{.n_ids = n_ids, .K = K, .row0 = uint32_t(r0), .n_rows = rows, .total_rows = uint32_t(total)};
    s.dispatch(*k.get_rows, {wg}, {.reads = {sub(table, r0 * rb, rows * rb), ids}, .writes = {y}}, pc, g);
  }
}

std::span<const DType> weight_types() {
  static const auto types = [] {
    std::array<DType, std::size(kKernels)> t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = kKernels[i].type;
    return t;
  }();
  return types;
}

bool matmul_supports(DType type) {
  for (const TypeKernels& k : kKernels)
    if (k.type == type) return true;
  return false;
}

std::string weight_type_names() {
  std::string out;
  for (const TypeKernels& k : kKernels) out += (out.empty() ? "" : ", ") + std::string(info(k.type).name);
  return out;
}

}  // namespace vkllm::ops
