#version 450
#extension GL_GOOGLE_include_directive : require
// Matrix-vector product for decode, the body of the matvec_<type> variants (CMakeLists.txt):
//   y(B; N, M) = x(B; N, K) · w(B; M, K)ᵀ (+ bias(B; M))   (push_matmul.h for layouts)
// Bandwidth-bound. A workgroup owns ROWS rows and a block of NT tokens (dispatch z = batch · token
// blocks + block). Work is counted in units (quant_unit.glsl: a block or 64-value chunk whose
// values share their loads), each dequantised once for the NT tokens.
// Each thread works on RT consecutive rows, loading each unit of x once for all of them, and TK =
// WG·RT/ROWS threads share those rows, striding over their units:
// - GPUs (TK > 1): neighbouring threads read neighbouring bytes of a row; the TK partial sums are
//   then added: by the subgroup alone where a row group is one subgroup (no shared memory, no
//   barrier), by subgroups and shared memory where it spans several, else by a shared-memory tree.
//   UNROLL units per step keep that many units' loads in flight per thread.
//   RT = 2 halves the x traffic, which for 4-bit weights is several times the weight traffic.
// - CPU drivers (TK = 1): a thread owns whole rows. llvmpipe gathers every non-constant load lane
//   by lane, so loads of x, not of weights, would dominate with one row per thread. With RT = 8,
//   NT = 4 this also beats the shared-memory tiled kernel on llvmpipe (whose every shared load is
//   a per-lane gather too).
// Epilogue (push constants, not specializations: they change no loop): + bias where p.has_bias,
// then y = result or (p.accumulate) y += result, saving the residual add's dispatch.
// GLU (a gated FFN's gate|up product, saving the up product's and the activation's dispatches):
// w holds gate rows 0 .. M/2 - 1 then up rows M/2 .. M - 1; the kernel's rows 2m and 2m + 1 are
// gate row m and up row m, so one thread (RT even) holds both and stores y[n][m] =
// act(gate) * up (act: SiLU or tanh-GELU, activation.glsl), y's rows M/2 wide.
// NORM (the RMSNorm before a block's first projection, saving its dispatch and its pass over x):
// x is read as rmsnorm(x)·g per token. Every row group reads all of a token's x, so it adds
// Σx² beside its sums (as one more row in the reduction) and scales its results by
// 1/sqrt(Σx²/K + eps) before the epilogue: Σ_k w·(x·g·r) = r·Σ_k w·(x·g).
// Bindings: 0 w (stored type), 1 x f32, 2 bias f32, 3 g f32 (the norm's weight, K values), 4 y
// f32; bias and g are bound even when unused.
#include "activation.glsl"
#include "grid.glsl"
#include "push.h"
#include "quant.glsl"

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : enable

layout(constant_id = 0) const uint WG = 128;              // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(constant_id = 2) const uint ROWS = 2;              // rows per workgroup, a power of two
layout(constant_id = 3) const uint NT = 1;                // tokens per workgroup
layout(constant_id = 4) const bool ALIGNED = false;       // K % 8 == 0 and x strides % 4 == 0
layout(constant_id = 5) const uint RT = 1;                // rows per thread, divides ROWS
layout(constant_id = 6) const uint GLU = 0;               // 0: none; 1: SiLU-gated, 2: GELU-gated
layout(constant_id = 7) const bool WIDE_LOADS = false;    // 16-byte weight loads (quant_unit.glsl)
layout(constant_id = 8) const uint UNROLL = 1;            // units a thread has in flight per step
layout(constant_id = 9) const bool NORM = false;          // x read as rmsnorm(x)·g
layout(local_size_x_id = 0) in;
#include "quant_unit.glsl"

layout(std430, binding = 1) readonly restrict buffer X { float x[]; };
layout(std430, binding = 1) readonly restrict buffer X4 { vec4 x4[]; };
layout(std430, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(std430, binding = 4) restrict buffer Y { float y[]; };  // read too with p.accumulate
layout(std430, binding = 3) readonly restrict buffer NormW { float nw[]; };
layout(std430, binding = 3) readonly restrict buffer NormW4 { vec4 nw4[]; };
layout(push_constant) uniform PushBlock { MatmulPush p; };
#include "matmul_out.glsl"

const uint TK = WG * RT / ROWS;  // threads per row group, a power of two
const uint UV = UNIT / 4;        // vec4s per unit
const uint NACC = (RT + (NORM ? 1 : 0)) * NT;  // sums per thread: RT rows (and Σx²) per token
shared float red[NACC * WG];
float acc[NACC];  // this thread's sums: row i, token n at i·NT + n; Σx² of token n at RT·NT + n
                  // (global: glslang mistypes spec-constant-sized arrays passed to functions)

vec4 load_x4(uint i) { return ALIGNED ? x4[i >> 2] : vec4(x[i], x[i + 1], x[i + 2], x[i + 3]); }
vec4 load_g4(uint k) { return ALIGNED ? nw4[k >> 2] : vec4(nw[k], nw[k + 1], nw[k + 2], nw[k + 3]); }
// x of token n at k as the product reads it: with NORM times g (a vec4 of g at k), adding Σx².
vec4 x_in(vec4 v, vec4 gk, uint n) {
  if (!NORM) return v;
  acc[RT * NT + n] += dot(v, v);
  return v * gk;
}

uint n_base, n_valid;  // this workgroup's tokens: n_base .. n_base + n_valid - 1

void store(uint row, uint n, uint batch, float v) {
  if (n >= n_valid) return;
  if (p.has_bias != 0u) v += bias[batch * p.M + row];
  uint i = y_index(batch, n_base + n, row);
  y[i] = p.accumulate != 0u ? y[i] + v : v;
}

// x of token n (of this block) at k; tokens past N read the last one (their sums are not stored).
uint x_at(uint x0, uint n, uint k) { return x0 + (n_base + min(n, n_valid - 1)) * p.x_row_stride + k; }

// The stored row of the kernel's row r: itself, or with GLU gate row r/2 (r even) or up row r/2.
uint stored_row(uint r) { return GLU == 0 ? r : (r & 1u) == 0u ? r >> 1 : p.M / 2 + (r >> 1); }

// Start (quant.glsl row address) of row + i of this batch's matrix; rows past M read row M-1 (not stored).
uint row_start(uint batch, uint row, uint i) {
  return (batch * p.M + stored_row(min(row + i, p.M - 1))) * row_size(p.K);
}

// The thread's sums for rows row .. row + RT - 1 into y (with GLU, pairs into rows (row + i) / 2).
void store_rows(uint row, uint batch) {
  for (uint i = 0; i < RT; i += GLU == 0 ? 1 : 2) {
    if (row + i >= p.M) break;
    for (uint n = 0; n < NT; ++n) {
      float r = NORM ? inversesqrt(acc[RT * NT + n] / float(p.K) + p.norm_eps) : 1.0;
      float v = acc[i * NT + n] * r;
      if (GLU != 0) v = (GLU == 1 ? silu(v) : gelu_tanh(v)) * (acc[(i + 1) * NT + n] * r);
      store(GLU == 0 ? row + i : (row + i) >> 1, n, batch, v);
    }
  }
}

// acc[i·NT + n] += unit u of row + i · unit u of token n's x, for the thread's RT rows. Holds
// whichever is smaller in registers: this unit of x for all tokens, or of the weights for all rows.
void accumulate(uint batch, uint row, uint u, uint x0) {
  if (NT <= RT) {
    vec4 xs[NT * UV], v[UV], gs[NORM ? UV : 1];
    if (NORM)
      for (uint q = 0; q < UV; ++q) gs[q] = load_g4(unit_k(u, q));
    for (uint n = 0; n < NT; ++n)
      for (uint q = 0; q < UV; ++q)
        xs[n * UV + q] = x_in(load_x4(x_at(x0, n, unit_k(u, q))), gs[NORM ? q : 0], n);
    for (uint i = 0; i < RT; ++i) {
      dequant_unit(row_start(batch, row, i), u, v);
      for (uint n = 0; n < NT; ++n)
        for (uint q = 0; q < UV; ++q) acc[i * NT + n] += dot(v[q], xs[n * UV + q]);
    }
  } else {
    vec4 ws[RT * UV], v[UV];
    for (uint i = 0; i < RT; ++i) {
      dequant_unit(row_start(batch, row, i), u, v);
      for (uint q = 0; q < UV; ++q) ws[i * UV + q] = v[q];
    }
    for (uint n = 0; n < NT; ++n)
      for (uint q = 0; q < UV; ++q) {
        vec4 xv = x_in(load_x4(x_at(x0, n, unit_k(u, q))), NORM ? load_g4(unit_k(u, q)) : vec4(1.0), n);
        for (uint i = 0; i < RT; ++i) acc[i * NT + n] += dot(ws[i * UV + q], xv);
      }
  }
}

void main() {
  // With subgroups that each lie within one row, number the threads by subgroup so that they do
  // (Vulkan leaves the order of invocations within subgroups to the implementation).
  bool sg = USE_SUBGROUP && TK > 1 && TK % gl_SubgroupSize == 0;
  uint t = sg ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID : gl_LocalInvocationIndex;
  uint r = t / TK * RT, j = t % TK;  // first row (in the workgroup) and lane within the row
  quant_init(gl_LocalInvocationIndex, WG);
  uint row0 = group_index() * ROWS;
  if (row0 >= p.M) return;  // uniform: the 2-D grid's spare workgroups
  uint n_blocks = (p.N + NT - 1) / NT, batch = gl_WorkGroupID.z / n_blocks, row = row0 + r;
  n_base = gl_WorkGroupID.z % n_blocks * NT;
  n_valid = min(NT, p.N - n_base);
  if (TK == 1 && row >= p.M) return;  // no barriers follow when TK == 1
  uint x0 = batch * p.x_batch_stride;

  for (uint i = 0; i < NACC; ++i) acc[i] = 0.0;
  uint n_units = p.K / UNIT, u = j;
  // UNROLL units per step, so that a GPU has that many units' loads in flight before the first
  // is used (a thread's units are few on wide GPUs: 4 per row of 4096 Q4_0 values at TK = 32).
  for (; u + (UNROLL - 1) * TK < n_units; u += UNROLL * TK)
    for (uint q = 0; q < UNROLL; ++q) accumulate(batch, row, u + q * TK, x0);
  if (UNROLL > 1)  // the units left over (with UNROLL = 1 there are none: one copy of the body to compile)
    for (; u < n_units; u += TK) accumulate(batch, row, u, x0);
#ifdef W_FLOAT
  for (uint k = n_units * UNIT + j; k < p.K; k += TK) {  // the ragged K % UNIT tail of float rows
    float xk[NT];
    for (uint n = 0; n < NT; ++n) {
      xk[n] = x[x_at(x0, n, k)];
      if (NORM) acc[RT * NT + n] += xk[n] * xk[n], xk[n] *= nw[k];
    }
    for (uint i = 0; i < RT; ++i) {
      float w = dequant1(row_start(batch, row, i), k);
      for (uint n = 0; n < NT; ++n) acc[i * NT + n] += w * xk[n];
    }
  }
#endif

  if (TK == 1) {
    store_rows(row, batch);
    return;
  }
  if (sg && TK == gl_SubgroupSize) {  // a row group is one subgroup: no shared memory, no barrier
    for (uint i = 0; i < NACC; ++i) acc[i] = subgroupAdd(acc[i]);
    if (j == 0) store_rows(row, batch);
    return;
  }
  if (sg) {
    for (uint i = 0; i < NACC; ++i) {
      float s = subgroupAdd(acc[i]);
      if (gl_SubgroupInvocationID == 0) red[i * WG + gl_SubgroupID] = s;
    }
    barrier();
    uint per_group = TK / gl_SubgroupSize, g = t / TK;  // subgroups g·per_group .. hold row group g
    if (j == 0)
      for (uint i = 0; i < NACC; ++i) {
        float s = 0.0;
        for (uint k = 0; k < per_group; ++k) s += red[i * WG + g * per_group + k];
        acc[i] = s;
      }
  } else {
    for (uint i = 0; i < NACC; ++i) red[i * WG + t] = acc[i];
    barrier();
    for (uint s = TK / 2; s > 0; s >>= 1) {
      if (j < s)
        for (uint i = 0; i < NACC; ++i) red[i * WG + t] += red[i * WG + t + s];
      barrier();
    }
    for (uint i = 0; i < NACC; ++i) acc[i] = red[i * WG + t];
  }
  if (j == 0) store_rows(row, batch);
}
