// Push constants of the kernels indexed by token positions: rope and kv_store (included by push.h).
// Positions come from an int32 buffer (one per token), never from here, so graphs replay.

// Rotary embedding over rows = (token, head). Element d of row (t, h) sits at
// t * token_stride + h * head_stride + d. Pair i < rot_half rotates by
//   theta = pos[t] * theta_scale^i * ((1 - m) * freq_scale + m) / ff[i],  m = ramp(i) * ext_factor
// with theta_scale = base^(-2/rot_dim) given as hi * (1 + lo), and cos/sin scaled by mscale.
struct RopePush {
  uint n_rows;  // n_tokens * n_heads
  uint n_heads;
  uint head_dim;      // elements per head handled: rot_dim rotated, the rest copied
  uint rot_half;      // rot_dim / 2
  uint token_stride;  // elements between tokens
  uint head_stride;   // elements between heads
  uint neox;          // 0: pairs (2i, 2i+1); 1: pairs (i, i + rot_half)
  float theta_scale_hi;
  float theta_scale_lo;  // relative correction: theta_scale = hi * (1 + lo)
  float freq_scale;
  float ext_factor;  // YaRN mix; 0 = off
  float corr_low;    // YaRN ramp bounds (pair indices)
  float corr_high;
  float mscale;  // cos/sin multiplier (attn_factor, times YaRN's magnitude term)
  // Heads n_heads .. n_heads + n_heads2 - 1 of each token are a second tensor's (k beside q):
  // head h at offset2 + t * token_stride2 + (h - n_heads) * head_stride. n_rows counts them.
  uint n_heads2;
  uint token_stride2;
  uint offset2;
  // Sectioned rope (ref::RopeSpec::sections): pair i is in section (i % (sec0 + .. + sec3)),
  // counted in turn or interleaved; pairs of the 4th section turn with position 0. All 0: none.
  uint sec0;
  uint sec1;
  uint sec2;
  uint sec3;
  uint interleaved;
  // > 0: the positions buffer holds each section's positions, section s of token t at
  // pos[s · section_stride + t] (M-RoPE of image tokens: rows and columns beside the token's time);
  // 0: the 4th section turns with position 0 and the others with pos[t].
  uint section_stride;
};

// rope_store: the rope of q (in place) and k (into the K cache), and v into the V cache, in one
// dispatch (rope_store.glsl), q and k RMS-normed per head first where asked. k's heads are rope's
// second tensor (n_heads2 = the KV heads).
struct RopeStorePush {
  RopePush rope;
  uint n_ctx;           // cache rows per KV head (slots · context)
  uint cache_head_dim;  // K cache row width (the head dim)
  uint v_head_dim;      // V values per (token, head), the V cache's row width
  uint v_offset;        // floats into x of token 0's v
  uint v_token_stride;  // floats between tokens' v
  uint v_cache_offset;  // cache elements before the V cache
  float norm_eps;       // QK_NORM: eps of the per-head RMSNorm of q and k
};

// Copy src(n_tokens, n_kv_heads, head_dim) into cache(n_kv_heads, n_ctx, cache_head_dim) at the
// token's position, columns cache_col .. cache_col + head_dim - 1 of the cache row.
struct KvStorePush {
  uint n_tokens;
  uint n_kv_heads;
  uint head_dim;
  uint n_ctx;
  uint src_token_stride;  // elements between tokens in src
  uint cache_head_dim;    // elements per cache row
  uint cache_col;
  // A second copy by the same dispatch (V beside K, kv_store_part.glsl): head_dim2 values per
  // (token, head) from src_offset2 floats into src (tokens src_token_stride2 apart) into rows of
  // cache_head_dim2 from column 0, starting cache_offset2 cache words in (16-bit words for
  // quantised caches). head_dim2 = 0: none.
  uint head_dim2;
  uint src_offset2;
  uint src_token_stride2;
  uint cache_offset2;
  uint cache_head_dim2;
};

// Llama 4's attention temperature: x[t * token_stride + j] (j < width) *= 1 + beta ln(floor(pos[t] /
// period) + 1).
struct TemperaturePush {
  uint n_tokens;
  uint width;
  uint token_stride;
  uint period;  // "length" is a GLSL method name
  float beta;
};
