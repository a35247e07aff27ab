#version 450
#extension GL_GOOGLE_include_directive : require
// Expert matrix products for prefill (mixture of experts), the body of the matmul_id_<type>
// variants (CMakeLists.txt): y(n_pairs, M) row p = W[expert of p] (M, K) · x row p / x_div,
// reading only the chosen experts' weights (push_moe.h MatmulIdPush; runtime/ops_moe.h).
// matmul.glsl's tiling with the tokens gathered: workgroup (tile, m tile) computes BM weight rows
// of one expert for the up to BN pairs of that tile (moe_plan.comp sorts the pairs by expert), so
// the weight tile dequantised into shared memory serves every token routed to the expert. The tile
// is x, the fastest grid dimension: lavapipe gives each thread one contiguous run of workgroups,
// and the used tiles (listed first) must spread over all of them.
// Bindings: 0 w (stored type: the experts expert0 .. expert1 - 1), 1 x f32, 2 plan int32, 3 y f32.
#include "push.h"
#include "quant.glsl"

layout(constant_id = 0) const uint WG = 256;  // = (BM / TM) * (BN / TN)
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 32;   // a multiple of 8
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;
layout(local_size_x_id = 0) in;

layout(std430, binding = 1) readonly restrict buffer X { float x[]; };
layout(std430, binding = 2) readonly restrict buffer Plan { int plan[]; };
layout(std430, binding = 3) writeonly restrict buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { MatmulIdPush p; };
#include "moe_tile.glsl"

shared float ws[BK * BM];        // (BK, BM): the weight tile, transposed
shared float xs[BK * (BN + 1)];  // (BK, BN+1): the gathered x tile
shared uint pair_s[BN];          // the tile's pairs

// Weight values k .. k+7 of row m (zeros past M or K) into ws column r, rows c8*8 ... (matmul.glsl)
void load_w_run(uint w0, uint row_len, uint m, uint k, uint r, uint c8) {
  vec4 lo = vec4(0.0), hi = vec4(0.0);
  if (m < p.M && k + 8 <= p.K) {
    dequant8(w0 + m * row_len, k / 8, lo, hi);
  }
#ifdef W_FLOAT
  else if (m < p.M && k < p.K) {
    for (uint j = 0; j < 4; ++j) {
      if (k + j < p.K) lo[j] = dequant1(w0 + m * row_len, k + j);
      if (k + 4 + j < p.K) hi[j] = dequant1(w0 + m * row_len, k + 4 + j);
    }
  }
#endif
  for (uint j = 0; j < 4; ++j) {
    ws[(8 * c8 + j) * BM + r] = lo[j];
    ws[(8 * c8 + 4 + j) * BM + r] = hi[j];
  }
}

void main() {
  uint tid = gl_LocalInvocationIndex;
  quant_init(tid, WG);  // before any return: it has a barrier
  uint expert, first, count;
  if (!read_tile(gl_WorkGroupID.x, BN, expert, first, count)) return;  // uniform
  for (uint i = tid; i < BN; i += WG) pair_s[i] = i < count ? uint(plan[first + i]) : 0;
  barrier();
  uint m0 = gl_WorkGroupID.y * BM;
  uint tm = tid % (BM / TM), tn = tid / (BM / TM);
  uint row_len = row_size(p.K);  // in row addresses (quant.glsl)
  uint w0 = expert * p.M * row_len;

  float acc[TM * TN];
  for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;
  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    for (uint i = tid; i < BM * (BK / 8); i += WG) load_w_run(w0, row_len, m0 + i % BM, k0 + 8 * (i / BM), i % BM, i / BM);
    for (uint i = tid; i < BK * BN; i += WG) {
      uint kk = i % BK, nn = i / BK, k = k0 + kk;
      float v = 0.0;
      if (nn < count && k < p.K) v = x[pair_s[nn] / p.x_div * p.x_row_stride + k];
      xs[kk * (BN + 1) + nn] = v;
    }
    barrier();
    for (uint kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
      for (uint i = 0; i < TM; ++i) a[i] = ws[kk * BM + tm + i * (BM / TM)];
      for (uint j = 0; j < TN; ++j) b[j] = xs[kk * (BN + 1) + tn + j * (BN / TN)];
      for (uint i = 0; i < TM; ++i)
        for (uint j = 0; j < TN; ++j) acc[i * TN + j] = fma(a[i], b[j], acc[i * TN + j]);
    }
    barrier();
  }
  for (uint i = 0; i < TM; ++i)
    for (uint j = 0; j < TN; ++j) {
      uint m = m0 + tm + i * (BM / TM), n = tn + j * (BN / TN);
      if (m < p.M && n < count) y[y_at(pair_s[n], m)] = acc[i * TN + j];
    }
}
