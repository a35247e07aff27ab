// Push constants of the vision encoder's kernels (included by push.h; plain structs only).

// vision_rope: x (n_tokens, n_heads, head_dim) in place, tokens token_stride floats apart; the
// positions (2, n_tokens) int32, a's then b's. neox_halves 0 (qwen's vision rope): pairs
// (i, i + head_dim/2), the first head_dim/4 with a, the rest with b; 1 (gemma4v): in each half
// pairs (i, i + head_dim/4), the first half with a, the second with b. Pair j of a quarter turns
// by pos · base^(-4j/head_dim).
struct VisionRopePush {
  uint n_tokens;
  uint n_heads;
  uint head_dim;
  uint token_stride;
  float log2_base;
  uint neox_halves;
};

// vision_positions: x (n_tokens, n) += the position embedding of each token's patch (row, col)
// (positions (2, n_tokens): rows then columns). mode 0: table row row·px + col (learned, one per
// patch); 1: the side x side table sampled bilinearly with aligned corners at (row / sy, col / sx);
// 2: the column table's row col plus the row table's row (from table row n_pos on).
struct VisionPositionsPush {
  uint n_tokens;
  uint n;
  uint mode;
  uint px;
  uint side;
  uint n_pos;
  float sx;
  float sy;
};

// avg_pool: x (py, px, n) rows averaged over k x k blocks into y (py/k, px/k, n).
struct PoolPush {
  uint px;
  uint py;
  uint n;
  uint k;
};

// clamp: y[i] = min(max(x[i], lo), hi), i < n.
struct ClampPush {
  uint n;
  float lo;
  float hi;
};
