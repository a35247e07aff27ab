#version 450
#extension GL_GOOGLE_include_directive : require
// Top-k per row, exact and deterministic: the k largest values of each row of x, ordered by value
// (descending), ties by index (ascending); one workgroup per row.
//   x: (rows, cols) f32   idx: (rows, k) int32   val: (rows, k) f32
// Method: radix select. Values map to order-preserving uint keys; four passes with 256-bin
// shared histograms (8 bits each, most significant first) find the key T of the k-th largest
// value and how many values equal to T belong to the top k. If that is fewer than all of them,
// the same select over the tied indices (key ~i, so lower indices rank higher) finds the last
// index taken. A final pass gathers the k winners; a rank sort orders them.
// NaN ranks below every number; -0 equals +0 (as the comparison of values says).
#include "push.h"

layout(constant_id = 0) const uint WG = 256;  // any size
layout(local_size_x_id = 0) in;

const uint MAX_K = 1024;  // = kTopkMax in ops_elementwise.h
shared uint hist[256];
shared uint s_prefix, s_remaining, s_equal, s_count;
shared uint cand_key[MAX_K];
shared uint cand_idx[MAX_K];

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

// Select key of element i: its value's key, or in the tie pass ~i for the elements whose value
// key is tie_key and 0 for the rest (indices are < 2^31, so ~i > 0).
uint select_key(uint base, uint i, bool tie_pass, uint tie_key) {
  uint k = order_key(x[base + i]);
  if (!tie_pass) return k;
  return k == tie_key ? ~i : 0u;
}

// The `want`-th largest select key of the row, T. Leaves in s_remaining how many elements equal
// to T are within the top `want`, and in s_equal how many equal T in all.
uint select_kth(uint base, uint want, bool tie_pass, uint tie_key) {
  uint t = gl_LocalInvocationIndex, prefix = 0u, mask = 0u, remaining = want;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (uint j = t; j < 256u; j += WG) hist[j] = 0u;
    barrier();
    for (uint i = t; i < p.cols; i += WG) {
      uint key = select_key(base, i, tie_pass, tie_key);
      if ((key & mask) == prefix) atomicAdd(hist[(key >> shift) & 255u], 1u);
    }
    barrier();
    if (t == 0u) {
      // Walk the bins from the top until they hold `remaining` elements; the top `want` always
      // exist (want <= cols), so the walk stops at bin 0 at the latest.
      uint b = 255u, above = 0u;
      while (above + hist[b] < remaining) above += hist[b--];
      s_prefix = prefix | (b << uint(shift));
      s_remaining = remaining - above;
      s_equal = hist[b];
    }
    barrier();
    prefix = s_prefix, remaining = s_remaining, mask |= 255u << uint(shift);
  }
  return prefix;
}

void main() {
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return;  // uniform across the workgroup
  uint base = row * p.cols, t = gl_LocalInvocationIndex;

  uint kth = select_kth(base, p.k, false, 0u);
  // All values equal to the k-th go in, or only the lowest-indexed ones up to last_tie.
  uint last_tie = 0xffffffffu;
  if (s_remaining != s_equal) last_tie = ~select_kth(base, s_remaining, true, kth);

  if (t == 0u) s_count = 0u;
  barrier();
  for (uint i = t; i < p.cols; i += WG) {
    uint key = order_key(x[base + i]);
    if (key > kth || (key == kth && i <= last_tie)) {
      uint slot = atomicAdd(s_count, 1u);
      cand_key[slot] = key, cand_idx[slot] = i;
    }
  }
  barrier();
  // Rank sort: (key, index) pairs are unique, so every rank is taken exactly once.
  for (uint c = t; c < p.k; c += WG) {
    uint key = cand_key[c], i = cand_idx[c], rank = 0u;
    for (uint o = 0u; o < p.k; ++o)
      rank += uint(cand_key[o] > key || (cand_key[o] == key && cand_idx[o] < i));
    idx[row * p.k + rank] = int(i);
    val[row * p.k + rank] = x[base + i];
  }
}
