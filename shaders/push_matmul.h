// Push constants of the weight-matrix kernels (matvec, matmul, get_rows; included by push.h).

// y(B; N, M) = x(B; N, K) · w(B; M, K)ᵀ (+ bias(B; M)), for batch b < B (the dispatch's z):
//   w[b] starts b·M rows into the weight binding (rows of row_bytes(type, K) bytes);
//   x[b][n][k] = x[b·x_batch_stride + n·x_row_stride + k], y[b][n][m] likewise (floats).
struct MatmulPush {
  uint M;
  uint N;
  uint K;
  uint x_batch_stride;
  uint x_row_stride;
  uint y_batch_stride;
  uint y_row_stride;
  // Planar parts (ops::MatmulFusion::split): rows split1 .. split2 - 1 are stored packed, (N,
  // split2 - split1), from part1_offset floats into y; rows split2 .. M - 1 likewise from
  // part2_offset. Both splits are M when the product has one part (every batched product).
  uint split1;
  uint split2;
  uint part1_offset;
  uint part2_offset;
  // matvec with NORM: x is read as rmsnorm(x)·g, eps in the root (1 / sqrt(mean(x²) + norm_eps)).
  float norm_eps;
  // matvec's epilogue (matmul and matmul_coop take these as specialization constants): 1 adds
  // bias, 1 adds the product to y (a residual add). Read once per stored value, so a flag costs
  // nothing beside the product, where each distinct kernel costs a driver compilation.
  uint has_bias;
  uint accumulate;
};

// y(n_ids, K) = table rows ids[i] as f32. The binding holds table rows row0 .. row0+n_rows-1 (a
// table larger than maxStorageBufferRange is gathered in several dispatches); ids outside
// 0 .. total_rows-1 give rows of zeros, written by the dispatch with row0 == 0.
struct GetRowsPush {
  uint n_ids;
  uint K;
  uint row0;
  uint n_rows;
  uint total_rows;
};
