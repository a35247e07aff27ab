// The tile of expert pairs a workgroup of matvec_id / matmul_id takes (plan layout: push_moe.h),
// and where its results go.
// Needs binding 2 `Plan { int plan[]; }` and push constants `p` (MatmulIdPush) declared first.
#ifndef VKLLM_MOE_TILE_GLSL
#define VKLLM_MOE_TILE_GLSL

// Reads tile t: its expert (relative to the binding's expert0), the index of its first pair and
// how many of its pairs there are (at most `tile`). False when the tile is unused or its expert
// lies in another binding: the whole workgroup then returns.
bool read_tile(uint t, uint tile, out uint expert, out uint first, out uint count) {
  uint E = p.n_experts, tiles = 3 * E + p.n_pairs;
  int e = plan[tiles + 2 * t];
  if (e < int(p.expert0) || e >= int(p.expert1)) return false;
  first = 3 * E + uint(plan[tiles + 2 * t + 1]);
  uint end = 3 * E + uint(plan[E + uint(e)] + plan[uint(e)]);
  count = min(tile, end - first);
  expert = uint(e) - p.expert0;
  return true;
}

// Where value m of pair p goes in y (push_moe.h MatmulIdPush: rows from split on go to y_second).
uint y_at(uint pair, uint m) {
  return m < p.split ? pair * p.y_row_stride + m : p.y_second + pair * p.y_row_stride + (m - p.split);
}

#endif
