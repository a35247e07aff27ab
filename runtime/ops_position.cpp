// Entry points of rope and kv_store: argument checks and the host-side constants of the math.
#include "ops_position.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>

#include "context.h"
#include "ops_check.h"
#include "push.h"

namespace vkllm::ops {

namespace {

// Pair index whose wavelength 2 pi base^(2i/rot_dim) fits `rotations` times into n_ctx_orig.
double yarn_corr_dim(uint32_t rot_dim, uint32_t n_ctx_orig, double rotations, double base) {
  return rot_dim * std::log(n_ctx_orig / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
}

// Highest element (plus one) that rope touches, for the size checks.
uint64_t rope_extent(const RopeParams& p, uint32_t token_stride, uint32_t head_stride) {
  if (p.n_tokens == 0 || p.n_heads == 0) return 0;
  return uint64_t(p.n_tokens - 1) * token_stride + uint64_t(p.n_heads - 1) * head_stride + p.head_dim;
}

}  // namespace

YarnCorrDims rope_yarn_corr_dims(uint32_t rot_dim, uint32_t n_ctx_orig, float theta_base, float beta_fast,
                                 float beta_slow) {
  double low = std::floor(yarn_corr_dim(rot_dim, n_ctx_orig, beta_fast, theta_base));
  double high = std::ceil(yarn_corr_dim(rot_dim, n_ctx_orig, beta_slow, theta_base));
  return {float(std::max(0.0, low)), float(std::min(double(rot_dim) - 1, high))};
}

namespace {

// The push constants of a rope over x and y (checked to hold what it touches), and its threads.
push::RopePush rope_push(const RopeParams& p, BufferView x, BufferView positions, BufferView freq_factors, BufferView y,
                         uint32_t& threads) {
  ENSURE(p.rot_dim % 2 == 0 && p.head_dim % 2 == 0 && p.rot_dim <= p.head_dim && p.rot_dim > 0,
         fmt::format("rope: rot_dim {} and head_dim {} must be even, 0 < rot_dim <= head_dim", p.rot_dim, p.head_dim));
  ENSURE(p.theta_base > 1 && p.freq_scale > 0, "rope: theta_base must exceed 1 and freq_scale be positive");
  ENSURE(p.ext_factor == 0 || p.n_ctx_orig > 0, "rope: YaRN (ext_factor != 0) needs n_ctx_orig");
  uint32_t head_stride = p.head_stride ? p.head_stride : p.head_dim;
  uint32_t token_stride = p.token_stride ? p.token_stride : p.n_heads * head_stride;
  uint32_t heads = p.n_heads + p.n_heads2;
  ENSURE(uint64_t(p.n_tokens) * heads * p.head_dim / 2 <= UINT32_MAX, "rope: too many elements");
  uint64_t extent = rope_extent(p, token_stride, head_stride) * 4;
  if (p.n_heads2) {
    RopeParams second = p;
    second.n_heads = p.n_heads2;
    ENSURE(p.offset2 >= extent / 4, "rope: the second tensor must start after the first");
    extent = (p.offset2 + rope_extent(second, p.token_stride2, head_stride)) * 4;
  }
  ensure_holds(x, extent, "rope", "x");
  ensure_holds(y, extent, "rope", "y");
  ENSURE(p.section_stride == 0 || p.section_stride >= p.n_tokens, "rope: section positions overlap");
  ensure_holds(positions, uint64_t(p.section_stride ? 3ull * p.section_stride + p.n_tokens : p.n_tokens) * 4, "rope",
               "positions");
  if (is_bound(freq_factors)) ensure_holds(freq_factors, p.rot_dim / 2 * 4, "rope", "freq_factors");

  // theta_scale = base^(-2/rot_dim) in double, passed as an f32 and its relative rounding error.
  double theta_scale = std::pow(double(p.theta_base), -2.0 / p.rot_dim);
  float ts_hi = float(theta_scale);
  YarnCorrDims corr{0, 0};
  float mscale = p.attn_factor;
  if (p.ext_factor != 0) {
    corr = rope_yarn_corr_dims(p.rot_dim, p.n_ctx_orig, p.theta_base, p.beta_fast, p.beta_slow);
    mscale *= float(1 + 0.1 * std::log(1.0 / p.freq_scale));
  }
  threads = p.n_tokens * heads * (p.head_dim / 2);
  return {.n_rows = p.n_tokens * heads,
          .n_heads = p.n_heads,
          .head_dim = p.head_dim,
          .rot_half = p.rot_dim / 2,
          .token_stride = token_stride,
          .head_stride = head_stride,
          .neox = p.mode == RopeMode::Neox ? 1u : 0u,
          .theta_scale_hi = ts_hi,
          .theta_scale_lo = float((theta_scale - ts_hi) / ts_hi),
          .freq_scale = p.freq_scale,
          .ext_factor = p.ext_factor,
          .corr_low = corr.low,
          .corr_high = corr.high,
          .mscale = mscale,
          .n_heads2 = p.n_heads2,
          .token_stride2 = p.token_stride2,
          .offset2 = p.offset2,
          .sec0 = p.sections[0],
          .sec1 = p.sections[1],
          .sec2 = p.sections[2],
          .sec3 = p.sections[3],
          .interleaved = p.interleaved ? 1u : 0u,
          .section_stride = p.section_stride};
}

}  // namespace

void rope(Stream& s, BufferView x, BufferView positions, BufferView freq_factors, BufferView y, const RopeParams& p) {
  uint32_t threads = 0;
  push::RopePush push = rope_push(p, x, positions, freq_factors, y, threads);
  bool has_ff = is_bound(freq_factors);
  uint32_t wg = s.context().profile().wg_size;
  // Without factors the kernel never reads binding 2; positions fill it, as every binding must be valid.
  s.dispatch(spirv::rope, {wg, has_ff}, {.reads = {x, positions, has_ff ? freq_factors : positions}, .writes = {y}},
             push, grid(ceil_div(threads, wg)));
}

bool rope_kv_store_fits(const BufferView& k_cache, const BufferView& v_cache, DType cache_type) {
  return (cache_type == DType::F16 || cache_type == DType::F32) && k_cache.buffer == v_cache.buffer &&
         v_cache.offset >= k_cache.offset &&
         (v_cache.offset - k_cache.offset) % (cache_type == DType::F32 ? 4 : 2) == 0;
}

void rope_kv_store(Stream& s, BufferView x, BufferView positions, BufferView freq_factors, const RopeParams& p,
                   BufferView rows, BufferView cache, const RopeKvStore& kv) {
  ENSURE(kv.cache_type == DType::F16 || kv.cache_type == DType::F32,
         fmt::format("rope_kv_store: a {} cache is stored by kv_store (f16 and f32 caches only)",
                     info(kv.cache_type).name));
  ENSURE(p.n_heads2 > 0, "rope_kv_store: k's heads (n_heads2) are missing");
  bool qk_norm = is_bound(kv.q_norm);
  ENSURE(qk_norm == is_bound(kv.k_norm), "rope_kv_store: q_norm and k_norm come together");
  if (qk_norm) {
    ensure_holds(kv.q_norm, p.head_dim * 4ull, "rope_kv_store", "q_norm");
    ensure_holds(kv.k_norm, p.head_dim * 4ull, "rope_kv_store", "k_norm");
  }
  uint32_t pairs = 0;
  push::RopePush rp = rope_push(p, x, positions, freq_factors, x, pairs);
  uint32_t word = kv.cache_type == DType::F32 ? 4 : 2;
  uint64_t v_values = uint64_t(p.n_tokens) * p.n_heads2 * kv.v_head_dim;
  ensure_holds(x,
               (kv.v_offset + uint64_t(p.n_tokens ? p.n_tokens - 1 : 0) * kv.v_token_stride +
                uint64_t(p.n_heads2) * kv.v_head_dim) *
                   4,
               "rope_kv_store", "x (v)");
  ensure_holds(rows, uint64_t(p.n_tokens) * 4, "rope_kv_store", "rows");
  ensure_holds(cache, (kv.v_cache_offset + uint64_t(p.n_heads2) * kv.n_ctx * kv.v_head_dim) * word, "rope_kv_store",
               "cache (v)");
  ensure_holds(cache, uint64_t(p.n_heads2) * kv.n_ctx * p.head_dim * word, "rope_kv_store", "cache (k)");
  push::RopeStorePush push{.rope = rp,
                           .n_ctx = kv.n_ctx,
                           .cache_head_dim = p.head_dim,
                           .v_head_dim = kv.v_head_dim,
                           .v_offset = kv.v_offset,
                           .v_token_stride = kv.v_token_stride,
                           .v_cache_offset = kv.v_cache_offset,
                           .norm_eps = kv.norm_eps};
  // A workgroup per (token, head) row of q and k, as wide as the row's pairs (at most the
  // profile's row width); then workgroups of v values.
  const Profile& pr = s.context().profile();
  uint32_t wg = std::min(pr.wg_size, std::bit_ceil(std::max(p.head_dim / 2, 1u)));
  uint64_t groups = uint64_t(rp.n_rows) + ceil_div(v_values, uint64_t(wg));
  ENSURE(groups <= UINT32_MAX, "rope_kv_store: too many rows");
  bool has_ff = is_bound(freq_factors);
  const spirv::Shader& shader = kv.cache_type == DType::F32 ? spirv::rope_store_f32 : spirv::rope_store_f16;
  s.dispatch(shader, {wg, pr.subgroup_ops, has_ff, qk_norm},
             {.reads = {positions, has_ff ? freq_factors : positions, rows, qk_norm ? kv.q_norm : positions,
                        qk_norm ? kv.k_norm : positions},
              .writes = {x, cache},
              .writes_read = {x}},
             push, grid(uint32_t(groups)));
}

namespace {

// The kv_store kernel of each cache type.
const spirv::Shader& kv_store_shader(DType t) {
  switch (t) {
    case DType::F32:
      return spirv::kv_store_f32;
    case DType::F16:
      return spirv::kv_store_f16;
    case DType::Q8_0:
      return spirv::kv_store_q8_0;
    case DType::Q4_0:
      return spirv::kv_store_q4_0;
    default:
      throw Error(fmt::format("kv_store: no KV cache of type {} (f32, f16, q8_0 or q4_0)", info(t).name));
  }
}

}  // namespace

namespace {

// The push constants of one copy, after checking its views; threads: one per value or block.
push::KvStorePush kv_store_push(const Stream& s, BufferView src, BufferView positions, BufferView cache,
                                const KvStoreParams& p, uint64_t& threads) {
  uint32_t src_stride = p.src_token_stride ? p.src_token_stride : p.n_kv_heads * p.head_dim;
  uint32_t cache_head_dim = p.cache_head_dim ? p.cache_head_dim : p.head_dim;
  ENSURE(p.cache_col + p.head_dim <= cache_head_dim,
         fmt::format("kv_store: columns {}..{} outside cache rows of {}", p.cache_col, p.cache_col + p.head_dim,
                     cache_head_dim));
  ENSURE(src_stride >= p.n_kv_heads * p.head_dim, "kv_store: src_token_stride shorter than a token's heads");
  // Quantised caches: one thread per 32-value block, which must not straddle the written columns.
  uint32_t block = info(p.cache_type).block_values;
  ENSURE(p.head_dim % block == 0 && p.cache_col % block == 0 && cache_head_dim % block == 0,
         fmt::format("kv_store: a {} cache stores whole blocks of {} values; head_dim {}, cache_col {} and row {} "
                     "must be multiples of it",
                     info(p.cache_type).name, block, p.head_dim, p.cache_col, cache_head_dim));
  threads = uint64_t(p.n_tokens) * p.n_kv_heads * (p.head_dim / block);
  uint64_t cache_elems = uint64_t(p.n_kv_heads) * p.n_ctx * cache_head_dim;
  ENSURE(threads <= UINT32_MAX && cache_elems <= UINT32_MAX, "kv_store: too many elements");
  if (threads > 0) {
    ensure_holds(src, ((p.n_tokens - 1) * uint64_t(src_stride) + p.n_kv_heads * p.head_dim) * 4, "kv_store", "src");
    ensure_holds(positions, uint64_t(p.n_tokens) * 4, "kv_store", "positions");
  }
  ensure_holds(cache, row_bytes(p.cache_type, cache_elems), "kv_store", "cache");
  ENSURE(p.cache_type == DType::F32 || s.context().caps().storage16,
         "kv_store: an f16 or quantised cache needs 16-bit storage buffers");
  return {p.n_tokens, p.n_kv_heads, p.head_dim, p.n_ctx, src_stride, cache_head_dim, p.cache_col};
}

void dispatch_kv_store(Stream& s, DType type, BufferView src, BufferView positions, BufferView cache,
                       const push::KvStorePush& push, uint64_t threads) {
  if (threads == 0) return;
  uint32_t wg = s.context().profile().wg_size;
  ENSURE(threads <= UINT32_MAX, "kv_store: too many elements");
  s.dispatch(kv_store_shader(type), {wg}, {.reads = {src, positions}, .writes = {cache}}, push,
             grid(ceil_div(threads, wg)));
}

// Bytes of one cache word as the kv_store shaders index it (quantised: 16-bit words).
uint32_t cache_word_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

}  // namespace

void kv_store(Stream& s, BufferView src, BufferView positions, BufferView cache, const KvStoreParams& p) {
  uint64_t threads = 0;
  push::KvStorePush push = kv_store_push(s, src, positions, cache, p, threads);
  dispatch_kv_store(s, p.cache_type, src, positions, cache, push, threads);
}

void kv_store_pair(Stream& s, BufferView k_src, BufferView v_src, BufferView positions, BufferView k_cache,
                   BufferView v_cache, const KvStoreParams& k, uint32_t v_head_dim) {
  KvStoreParams v{.n_tokens = k.n_tokens,
                  .n_kv_heads = k.n_kv_heads,
                  .head_dim = v_head_dim,
                  .n_ctx = k.n_ctx,
                  .cache_type = k.cache_type};
  uint64_t k_threads = 0, v_threads = 0;
  push::KvStorePush push = kv_store_push(s, k_src, positions, k_cache, k, k_threads);
  push::KvStorePush second = kv_store_push(s, v_src, positions, v_cache, v, v_threads);
  uint32_t word = cache_word_bytes(k.cache_type);
  bool one = k_src.buffer == v_src.buffer && k_cache.buffer == v_cache.buffer && v_src.offset >= k_src.offset &&
             v_cache.offset >= k_cache.offset && (v_src.offset - k_src.offset) % 4 == 0 &&
             (v_cache.offset - k_cache.offset) % word == 0 && (v_src.offset - k_src.offset) / 4 <= UINT32_MAX &&
             (v_cache.offset - k_cache.offset) / word <= UINT32_MAX;
  if (!one) {
    dispatch_kv_store(s, k.cache_type, k_src, positions, k_cache, push, k_threads);
    dispatch_kv_store(s, k.cache_type, v_src, positions, v_cache, second, v_threads);
    return;
  }
  push.head_dim2 = v_head_dim;
  push.src_offset2 = uint32_t((v_src.offset - k_src.offset) / 4);
  push.src_token_stride2 = second.src_token_stride;
  push.cache_offset2 = uint32_t((v_cache.offset - k_cache.offset) / word);
  push.cache_head_dim2 = second.cache_head_dim;
  BufferView src{k_src.buffer, k_src.offset,
                 std::max(k_src.offset + k_src.size, v_src.offset + v_src.size) - k_src.offset};
  BufferView cache{k_cache.buffer, k_cache.offset,
                   std::max(k_cache.offset + k_cache.size, v_cache.offset + v_cache.size) - k_cache.offset};
  dispatch_kv_store(s, k.cache_type, src, positions, cache, push, k_threads + v_threads);
}

void attn_temperature(Stream& s, BufferView x, BufferView positions, uint32_t n_tokens, uint32_t width,
                      uint32_t token_stride, float beta, uint32_t length) {
  ENSURE(length > 0 && width <= token_stride, "attn_temperature: length must be positive, width within the stride");
  ENSURE(uint64_t(n_tokens) * width <= UINT32_MAX, "attn_temperature: too many elements");
  if (n_tokens == 0) return;
  ensure_holds(x, (uint64_t(n_tokens - 1) * token_stride + width) * 4, "attn_temperature", "x");
  ensure_holds(positions, uint64_t(n_tokens) * 4, "attn_temperature", "positions");
  uint32_t wg = s.context().profile().wg_size, n = n_tokens * width;
  s.dispatch(spirv::attn_temperature, {wg}, {.reads = {positions}, .writes = {x}, .writes_read = {x}},
             push::TemperaturePush{n_tokens, width, token_stride, length, beta}, grid(ceil_div(n, wg)));
}

}  // namespace vkllm::ops
