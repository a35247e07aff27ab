#version 450
#extension GL_GOOGLE_include_directive : require
// Tiled matrix product for prefill, the body of the matmul_<type> variants (CMakeLists.txt):
//   y(B; N, M) = x(B; N, K) · w(B; M, K)ᵀ (+ bias(B; M))   (push_matmul.h for layouts)
// A workgroup computes a BM x BN tile of y (BM weight rows x BN tokens), stepping through K by BK:
// each step dequantises the BM x BK weight tile into shared memory once and stages the BN x BK
// tile of x, then every thread accumulates a TM x TN micro-tile in registers (f32). A thread's
// rows are tm + i·BM/TM and tokens tn + j·BN/TN, so neighbouring threads read neighbouring shared
// words (no bank conflicts) and write neighbouring outputs.
// Bindings: 0 w (stored type), 1 x f32, 2 bias f32 (bound even when unused), 3 y f32.
#include "push.h"
#include "quant.glsl"

layout(constant_id = 0) const uint WG = 256;  // = (BM / TM) * (BN / TN)
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 32;   // a multiple of 8
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;
layout(constant_id = 6) const bool HAS_BIAS = false;
layout(constant_id = 7) const bool ACCUMULATE = false;  // y += product (a residual add)
layout(local_size_x_id = 0) in;

layout(std430, binding = 1) readonly restrict buffer X { float x[]; };
layout(std430, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(std430, binding = 3) restrict buffer Y { float y[]; };  // read too when ACCUMULATE
layout(push_constant) uniform PushBlock { MatmulPush p; };
#include "matmul_out.glsl"

shared float ws[BK * BM];        // (BK, BM): the weight tile, transposed
shared float xs[BK * (BN + 1)];  // (BK, BN+1): the x tile; odd row length keeps the stores conflict-free

// Weight values k .. k+7 of row m (zeros past M or K) into ws column r, rows c8*8 ...
void load_w_run(uint w0, uint row_len, uint m, uint k, uint r, uint c8) {
  vec4 lo = vec4(0.0), hi = vec4(0.0);
  if (m < p.M && k + 8 <= p.K) {
    dequant8(w0 + m * row_len, k / 8, lo, hi);
  }
#ifdef W_FLOAT
  else if (m < p.M && k < p.K) {  // the ragged end of a float row
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
  quant_init(tid, WG);
  uint m0 = gl_WorkGroupID.x * BM, n0 = gl_WorkGroupID.y * BN, batch = gl_WorkGroupID.z;
  uint tm = tid % (BM / TM), tn = tid / (BM / TM);
  uint row_len = row_size(p.K);  // in row addresses (quant.glsl)
  uint w0 = batch * p.M * row_len, x0 = batch * p.x_batch_stride;

  float acc[TM * TN];
  for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;
  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    // Thread i loads run i / BM of row i % BM: neighbouring threads fill neighbouring shared words.
    for (uint i = tid; i < BM * (BK / 8); i += WG)
      load_w_run(w0, row_len, m0 + i % BM, k0 + 8 * (i / BM), i % BM, i / BM);
    for (uint i = tid; i < BK * BN; i += WG) {
      uint kk = i % BK, nn = i / BK, n = n0 + nn, k = k0 + kk;
      float v = 0.0;
      if (n < p.N && k < p.K) v = x[x0 + n * p.x_row_stride + k];
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
      uint m = m0 + tm + i * (BM / TM), n = n0 + tn + j * (BN / TN);
      if (m >= p.M || n >= p.N) continue;
      float v = acc[i * TN + j];
      if (HAS_BIAS) v += bias[batch * p.M + m];
      uint at = y_index(batch, n, m);
      y[at] = ACCUMULATE ? y[at] + v : v;
    }
}
