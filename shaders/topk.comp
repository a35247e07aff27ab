#version 450
#extension GL_GOOGLE_include_directive : require
// Top-k per row, exact and deterministic: the k largest values of each row of x, ordered by value
// (descending), ties by index (ascending); one workgroup per row.
//   x: (rows, cols) f32   idx: (rows, k) int32   val: (rows, k) f32
// NaN ranks below every number; -0 equals +0 (as the comparison of values says).
//
// Method: radix select over order-preserving uint keys (select_kth: four passes of a 256-bin
// shared histogram, 8 bits each, most significant first).
//  1. Bound: the maxima of B >= k buckets (index mod B, B as large as the list holds) are B
//     different elements, so the k-th largest of them is a lower bound of the row's k-th largest.
//  2. Survivors (keys >= bound: for random logits 1.05k at k = 40..512, 1.6k at 1024) are
//     compacted into a shared list, and the selects below run over that list instead of the row:
//     two passes over global memory in all. When more survive than the list holds (heavy ties, a
//     row mostly -inf, k near 1024) the selects run over the row instead.
//  3. Select the key T of the k-th largest value; if only some of the values equal to T belong to
//     the top k, a second select over the tied indices (key ~i: lower indices rank higher) finds
//     the last index taken.
//  4. The k winners move to the front of the list and a bitonic sort orders them.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;  // any size
layout(local_size_x_id = 0) in;

const uint MAX_K = 1024;  // = ops::kTopkMax
const uint CAP = 1536;    // the shared list: bucket maxima, survivors, or the k winners
shared uint hist[256];
shared uint list_key[CAP];
shared uint list_idx[CAP];
shared uint s_prefix, s_remaining, s_equal, s_count;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer I { int idx[]; };
layout(std430, binding = 2) writeonly buffer V { float val[]; };
layout(push_constant) uniform PushBlock { SelectPush p; };

// Larger value -> larger key: flip all bits of negatives, set the sign bit of positives.
uint order_key(float v) {
  if (isnan(v)) return 0u;
  uint b = floatBitsToUint(v);
  if (b == 0x80000000u) b = 0u;
  return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}

// What select_kth counts, set before each pass: keys below `bound` are skipped; in the tie pass
// an entry's key is ~index when its key is tie_key and 0 otherwise (indices are < 2^31, so
// ~index > 0); only keys matching `prefix` under `mask` go into the histogram.
struct Selection {
  bool tie_pass;
  uint tie_key, bound, prefix, mask;
  int shift;
};

void count(Selection sel, uint key, uint index) {
  if (sel.tie_pass) key = key == sel.tie_key ? ~index : 0u;
  if (key >= sel.bound && (key & sel.mask) == sel.prefix) atomicAdd(hist[(key >> sel.shift) & 255u], 1u);
}

// The `want`-th largest key among n entries of the row (global memory) or of the shared list,
// as `count` sees them. Leaves in s_remaining how many entries equal to the result are within
// the top `want`, and in s_equal how many equal it in all.
uint select_kth(uint base, uint n, bool in_list, uint want, bool tie_pass, uint tie_key, uint bound) {
  uint t = gl_LocalInvocationIndex, remaining = want;
  Selection sel = Selection(tie_pass, tie_key, bound, 0u, 0u, 24);
  for (; sel.shift >= 0; sel.shift -= 8) {
    for (uint j = t; j < 256u; j += WG) hist[j] = 0u;
    barrier();
    // Two loops, not one with a select per entry: compilers may load both sources otherwise.
    if (in_list)
      for (uint i = t; i < n; i += WG) count(sel, list_key[i], list_idx[i]);
    else
      for (uint i = t; i < n; i += WG) count(sel, order_key(x[base + i]), i);
    barrier();
    if (t == 0u) {
      // Walk the bins from the top until they hold `remaining` entries; the top `want` always
      // exist, so the walk stops at bin 0 at the latest.
      uint b = 255u, above = 0u;
      while (above + hist[b] < remaining) above += hist[b--];
      s_prefix = sel.prefix | (b << uint(sel.shift));
      s_remaining = remaining - above;
      s_equal = hist[b];
    }
    barrier();
    sel.prefix = s_prefix, remaining = s_remaining, sel.mask |= 255u << uint(sel.shift);
  }
  return sel.prefix;
}

// Step 1: the k-th largest of the maxima of WG * c buckets (as many as the list holds and the row
// fills), or 0 (no bound) when that is fewer than k.
uint kth_lower_bound(uint base) {
  uint t = gl_LocalInvocationIndex, c = min(CAP, p.cols) / WG, buckets = WG * c;
  if (buckets < p.k || buckets == 0u) return 0u;  // uniform
  for (uint r = 0u; r < c; ++r) {
    uint m = 0u;
    for (uint i = t + WG * r; i < p.cols; i += buckets) m = max(m, order_key(x[base + i]));
    list_key[t + WG * r] = m;
  }
  barrier();
  return select_kth(base, buckets, true, p.k, false, 0u, 0u);
}

// Entry a goes before entry b in the output: larger key, or the same key at a lower index.
bool before(uint a, uint b) {
  return list_key[a] > list_key[b] || (list_key[a] == list_key[b] && list_idx[a] < list_idx[b]);
}

// Sorts the first n (a power of two) list entries by `before`.
void bitonic_sort(uint n) {
  for (uint size = 2u; size <= n; size <<= 1)
    for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
      for (uint j = gl_LocalInvocationIndex; j < n / 2u; j += WG) {
        uint a = (j / stride) * 2u * stride + j % stride, b = a + stride;
        bool forward = (a & size) == 0u;  // this run ascends in `before` order, the next descends
        if (before(b, a) == forward) {
          uint k = list_key[a], i = list_idx[a];
          list_key[a] = list_key[b], list_idx[a] = list_idx[b];
          list_key[b] = k, list_idx[b] = i;
        }
      }
      barrier();
    }
}

// Appends (key, i) to the shared list when there is room; s_count counts every append.
void append(uint key, uint i) {
  uint slot = atomicAdd(s_count, 1u);
  if (slot < CAP) list_key[slot] = key, list_idx[slot] = i;
}

void main() {
  uint row = group_index();
  if (row >= p.rows) return;  // uniform across the workgroup
  uint base = row * p.cols, t = gl_LocalInvocationIndex;

  uint bound = kth_lower_bound(base);
  if (t == 0u) s_count = 0u;
  barrier();
  for (uint i = t; i < p.cols; i += WG) {
    uint key = order_key(x[base + i]);
    if (key >= bound) append(key, i);
  }
  barrier();
  uint n = s_count;
  bool in_list = n <= CAP;
  if (!in_list) n = p.cols;

  uint kth = select_kth(base, n, in_list, p.k, false, 0u, bound);
  // All values equal to the k-th win, or only the lowest-indexed ones up to last_tie.
  uint last_tie = 0xffffffffu;
  if (s_remaining != s_equal) last_tie = ~select_kth(base, n, in_list, s_remaining, true, kth, 0u);

  // The k winners to list[0, k): gathered from the row, or moved forward within the list (one
  // thread: a few hundred shared-memory moves, in order, so none overwrites an unread entry).
  if (!in_list) {
    if (t == 0u) s_count = 0u;
    barrier();
    for (uint i = t; i < p.cols; i += WG) {
      uint key = order_key(x[base + i]);
      if (key > kth || (key == kth && i <= last_tie)) append(key, i);
    }
  } else if (t == 0u) {
    uint w = 0u;
    for (uint c = 0u; c < n; ++c) {
      uint key = list_key[c], i = list_idx[c];
      if (key > kth || (key == kth && i <= last_tie)) list_key[w] = key, list_idx[w++] = i;
    }
  }
  barrier();
  uint n_sort = 1u;
  while (n_sort < p.k) n_sort <<= 1;
  for (uint c = p.k + t; c < n_sort; c += WG) list_key[c] = 0u, list_idx[c] = 0xffffffffu;  // sort last
  barrier();
  bitonic_sort(n_sort);
  for (uint c = t; c < p.k; c += WG) {
    idx[row * p.k + c] = int(list_idx[c]);
    val[row * p.k + c] = x[base + list_idx[c]];
  }
}
