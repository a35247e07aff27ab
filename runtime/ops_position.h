// Kernels indexed by token positions: rotary embedding and the KV-cache store. Positions come
// from an int32 buffer, one per token, that the engine fills before each submit, so a recorded
// graph replays for the next token unchanged.
#pragma once
#include "buffer.h"
#include "dtype.h"
#include "stream.h"

namespace vkllm::ops {

enum class RopeMode : uint32_t {
  Norm = 0,  // pairs (2i, 2i+1): llama, deepseek2
  Neox = 2,  // pairs (i, i + rot_dim/2): qwen2, phi3, gemma, falcon (ggml's mode number)
};

// Pair i < rot_dim/2 of a token at position p turns by (docs/formats.md §3.1, 3.4, 3.5)
//   theta_i = p * base^(-2i/rot_dim) / ff_i * ((1 - m_i) * freq_scale + m_i),  m_i = ramp_i * ext_factor
// and the pair is scaled by mscale = attn_factor * (ext_factor != 0 ? 1 + 0.1 ln(1/freq_scale) : 1),
// as ggml's rope_yarn. ramp_i = 1 - clamp((i - low) / max(0.001, high - low), 0, 1) with
// low/high = rope_yarn_corr_dims(...). With ext_factor = 0 (no YaRN) this is linear scaling.
struct RopeParams {
  uint32_t n_tokens = 0;
  uint32_t n_heads = 0;
  uint32_t head_dim = 0;  // elements per head handled: the first rot_dim rotated, the rest copied
  uint32_t rot_dim = 0;   // even, <= head_dim
  RopeMode mode = RopeMode::Norm;
  float theta_base = 10000.0f;
  float freq_scale = 1.0f;  // 1 / rope.scaling.factor
  // YaRN (deepseek2): ext_factor 1 turns it on; n_ctx_orig = rope.scaling.original_context_length.
  float ext_factor = 0.0f;
  float attn_factor = 1.0f;
  uint32_t n_ctx_orig = 0;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  // Element strides of x and y (0: contiguous (n_tokens, n_heads, head_dim)). They let rope work
  // in place on part of a row, e.g. the 64 rope dims at the end of each 192-wide MLA query head.
  uint32_t token_stride = 0;
  uint32_t head_stride = 0;
  // A second tensor rotated by the same dispatch (k beside q: one dispatch instead of two):
  // n_tokens x n_heads2 heads of head_dim (head_stride apart), tokens token_stride2 apart,
  // starting offset2 elements into x and y. 0 heads: none.
  uint32_t n_heads2 = 0;
  uint32_t token_stride2 = 0;
  uint32_t offset2 = 0;
  // Sectioned rope of text tokens (Qwen3.5's interleaved M-RoPE; ref::RopeSpec::sections): pairs
  // of the 4th section turn with position 0, the others with the token's. All 0: no sections.
  uint32_t sections[4] = {0, 0, 0, 0};
  bool interleaved = false;
  // > 0: positions holds every section's positions, section s of token t at s · section_stride +
  // t (M-RoPE: an image token's time, row and column); 0: as above.
  uint32_t section_stride = 0;
};

// ggml's YaRN correction range (pair indices) for rot_dim dims: [low, high].
struct YarnCorrDims {
  float low, high;
};
YarnCorrDims rope_yarn_corr_dims(uint32_t rot_dim, uint32_t n_ctx_orig, float theta_base, float beta_fast,
                                 float beta_slow);

//   x, y: (n_tokens, n_heads, head_dim) f32 (or as the strides say); y may be x
//   positions: (n_tokens) int32   freq_factors: (rot_dim/2) f32 dividing theta_i (Llama-3.1
//   rope_freqs, LongRoPE factors), or an empty view for none
void rope(Stream& s, BufferView x, BufferView positions, BufferView freq_factors, BufferView y, const RopeParams& p);

// Writes src into the KV cache at each token's position. Positions must be distinct (two tokens
// writing one cache row race); positions outside [0, n_ctx) are skipped.
//   src: head h of token t at src[t * src_token_stride + h * head_dim], head_dim f32 values
//   positions: (n_tokens) int32
//   cache: (n_kv_heads, n_ctx, cache_head_dim) of cache_type; columns cache_col .. cache_col + head_dim
// cache_type F32, F16, or Q8_0 / Q4_0: each row is then cache_head_dim / 32 blocks, and each
// block of 32 values is quantised as it is written, as ggml's reference quantisers do (head_dim,
// cache_col and cache_head_dim multiples of 32).
// For MLA the latent row [c_kv; k_pe] is one head of cache_head_dim kv_lora_rank + rope_dim:
// write c_kv with cache_col 0 and k_pe with cache_col kv_lora_rank (two calls), or both at once
// when they already sit together in src.
struct KvStoreParams {
  uint32_t n_tokens = 0;
  uint32_t n_kv_heads = 0;
  uint32_t head_dim = 0;  // values copied per (token, head)
  uint32_t n_ctx = 0;
  DType cache_type = DType::F16;
  uint32_t src_token_stride = 0;  // 0: n_kv_heads * head_dim
  uint32_t cache_head_dim = 0;    // 0: head_dim
  uint32_t cache_col = 0;
};
void kv_store(Stream& s, BufferView src, BufferView positions, BufferView cache, const KvStoreParams& p);

// Rope and the KV store in one dispatch (f16 and f32 caches): as (the head norms, then) rope of q and k (p: q's heads,
// and k's as its second tensor) in place, then kv_store_pair of k and v, but k's rotated values go
// straight to the cache (x keeps k as it was) — the same bits, one dispatch and no pass over k.
//   x: q and k as p lays them out, v at v_offset floats (tokens v_token_stride apart, n_heads2
//      heads of v_head_dim)   rows: (n_tokens) int32 cache rows (outside [0, n_ctx): skipped)
//   cache: K (n_heads2, n_ctx, p.head_dim) from its start, V (n_heads2, n_ctx, v_head_dim) from
//          element v_cache_offset: a layer's K and V in one buffer
// With q_norm and k_norm (head_dim f32 weights each), q and k heads are RMS-normed first, as
// rmsnorm over rows of head_dim with that weight (qwen3's and gemma's head norms).
struct RopeKvStore {
  DType cache_type = DType::F16;
  uint32_t n_ctx = 0;
  uint32_t v_head_dim = 0;
  uint32_t v_offset = 0;
  uint32_t v_token_stride = 0;
  uint32_t v_cache_offset = 0;
  BufferView q_norm{}, k_norm{};
  float norm_eps = 0;
};
void rope_kv_store(Stream& s, BufferView x, BufferView positions, BufferView freq_factors, const RopeParams& p,
                   BufferView rows, BufferView cache, const RopeKvStore& kv);
// Whether rope_kv_store can store into these K and V caches (one buffer, V after K, f16/f32).
bool rope_kv_store_fits(const BufferView& k_cache, const BufferView& v_cache, DType cache_type);

// Llama 4's attention temperature (mistral3), in place: the width values of each token t of x
// (tokens token_stride floats apart) times 1 + beta·ln(floor(positions[t] / length) + 1).
void attn_temperature(Stream& s, BufferView x, BufferView positions, uint32_t n_tokens, uint32_t width,
                      uint32_t token_stride, float beta, uint32_t length);
// K and V of a step into their caches, as kv_store twice (k, and V with v_head_dim packed values
// per head into rows of that width): one dispatch where the two sources share a buffer and so do
// the two caches (the qkv activation; a layer's KV buffer), else two.
void kv_store_pair(Stream& s, BufferView k_src, BufferView v_src, BufferView positions, BufferView k_cache,
                   BufferView v_cache, const KvStoreParams& k, uint32_t v_head_dim);

}  // namespace vkllm::ops
