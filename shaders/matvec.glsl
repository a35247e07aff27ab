// Matrix-vector product for decode (a few tokens), the body of every matvec_<type>.comp:
//   y(B; N, M) = x(B; N, K) · w(B; M, K)ᵀ (+ bias(B; M)), N = NT <= 8 (push_matmul.h for layouts).
// Bandwidth-bound. A workgroup owns ROWS rows. Work is counted in units (quant_unit.glsl: a block
// or 64-value chunk whose values share their loads), each dequantised once for all NT tokens.
// - ROWS <= WG (GPUs): each row is worked on by TK = WG / ROWS threads striding over its units, so
//   neighbouring threads read neighbouring bytes; the TK partial sums are then added (subgroups
//   where a subgroup lies within one row, else a shared-memory tree).
// - ROWS > WG (CPU drivers): each thread owns RT = ROWS / WG whole rows and loads each unit of x
//   once for all of them. llvmpipe gathers every non-constant load lane by lane, so loads of x,
//   not of weights, would dominate with one row per thread. (ops lowers RT as NT grows: the
//   unrolled RT·NT sums set llvmpipe's compile time.)
// Bindings: 0 w (stored type), 1 x f32, 2 bias f32 (bound even when unused), 3 y f32.
#include "push.h"
#include "quant.glsl"

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : enable

layout(constant_id = 0) const uint WG = 128;              // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(constant_id = 2) const uint ROWS = 2;              // rows per workgroup, a power of two
layout(constant_id = 3) const uint NT = 1;                // tokens (the N of the call)
layout(constant_id = 4) const bool ALIGNED = false;       // K % 8 == 0 and x strides % 4 == 0
layout(constant_id = 5) const bool HAS_BIAS = false;
layout(local_size_x_id = 0) in;
#include "quant_unit.glsl"

layout(std430, binding = 1) readonly restrict buffer X { float x[]; };
layout(std430, binding = 1) readonly restrict buffer X4 { vec4 x4[]; };
layout(std430, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly restrict buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { MatmulPush p; };

const uint TK = ROWS < WG ? WG / ROWS : 1;  // threads per row
const uint RT = ROWS > WG ? ROWS / WG : 1;  // rows per thread
const uint UV = UNIT / 4;                   // vec4s per unit
shared float red[NT * WG];
float acc[RT * NT];  // this thread's sums: row i, token n at i·NT + n (global: glslang mistypes
                     // spec-constant-sized arrays passed to functions)

vec4 load_x4(uint i) { return ALIGNED ? x4[i >> 2] : vec4(x[i], x[i + 1], x[i + 2], x[i + 3]); }

void store(uint row, uint n, uint batch, float v) {
  if (HAS_BIAS) v += bias[batch * p.M + row];
  y[batch * p.y_batch_stride + n * p.y_row_stride + row] = v;
}

// Start (16-bit words) of row + i of this batch's matrix; rows past M read row M-1 (not stored).
uint row_start(uint batch, uint row, uint i) { return (batch * p.M + min(row + i, p.M - 1)) * (p.K / QK * (QB / 2)); }

// acc[i·NT + n] += unit u of row + i · unit u of token n's x, for the thread's RT rows.
void accumulate(uint batch, uint row, uint u, uint x0) {
  vec4 v[UV];
  if (RT == 1) {  // x comes from cache; no need to hold it
    dequant_unit(row_start(batch, row, 0), u, v);
    for (uint n = 0; n < NT; ++n)
      for (uint q = 0; q < UV; ++q) acc[n] += dot(v[q], load_x4(x0 + n * p.x_row_stride + unit_k(u, q)));
    return;
  }
  vec4 xs[NT * UV];
  for (uint n = 0; n < NT; ++n)
    for (uint q = 0; q < UV; ++q) xs[n * UV + q] = load_x4(x0 + n * p.x_row_stride + unit_k(u, q));
  for (uint i = 0; i < RT; ++i) {
    dequant_unit(row_start(batch, row, i), u, v);
    for (uint n = 0; n < NT; ++n)
      for (uint q = 0; q < UV; ++q) acc[i * NT + n] += dot(v[q], xs[n * UV + q]);
  }
}

void main() {
  // With subgroups that each lie within one row, number the threads by subgroup so that they do
  // (Vulkan leaves the order of invocations within subgroups to the implementation).
  bool sg = USE_SUBGROUP && TK > 1 && TK % gl_SubgroupSize == 0;
  uint t = sg ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID : gl_LocalInvocationIndex;
  uint r = t / TK * RT, j = t % TK;  // first row (in the workgroup) and lane within the row
  uint row0 = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * ROWS;
  if (row0 >= p.M) return;  // uniform: the 2-D grid's spare workgroups
  uint batch = gl_WorkGroupID.z, row = row0 + r;
  if (TK == 1 && row >= p.M) return;  // no barriers follow when TK == 1
  uint x0 = batch * p.x_batch_stride;

  for (uint i = 0; i < RT * NT; ++i) acc[i] = 0.0;
  uint n_units = p.K / UNIT;
  for (uint u = j; u < n_units; u += TK) accumulate(batch, row, u, x0);
#ifdef W_FLOAT
  for (uint k = n_units * UNIT + j; k < p.K; k += TK)  // the ragged K % UNIT tail of float rows
    for (uint i = 0; i < RT; ++i) {
      float w = dequant1(row_start(batch, row, i), k);
      for (uint n = 0; n < NT; ++n) acc[i * NT + n] += w * x[x0 + n * p.x_row_stride + k];
    }
#endif

  if (TK == 1) {
    for (uint i = 0; i < RT; ++i)
      if (row + i < p.M)
        for (uint n = 0; n < NT; ++n) store(row + i, n, batch, acc[i * NT + n]);
    return;
  }
  bool live = row < p.M;
  if (sg) {
    for (uint n = 0; n < NT; ++n) {
      float s = subgroupAdd(acc[n]);
      if (gl_SubgroupInvocationID == 0) red[n * WG + gl_SubgroupID] = s;
    }
    barrier();
    uint per_row = TK / gl_SubgroupSize;  // subgroups r·per_row .. hold row r
    if (j == 0 && live)
      for (uint n = 0; n < NT; ++n) {
        float s = 0.0;
        for (uint i = 0; i < per_row; ++i) s += red[n * WG + r * per_row + i];
        store(row, n, batch, s);
      }
  } else {
    for (uint n = 0; n < NT; ++n) red[n * WG + t] = acc[n];
    barrier();
    for (uint s = TK / 2; s > 0; s >>= 1) {
      if (j < s)
        for (uint n = 0; n < NT; ++n) red[n * WG + t] += red[n * WG + t + s];
      barrier();
    }
    if (j == 0 && live)
      for (uint n = 0; n < NT; ++n) store(row, n, batch, red[n * WG + t]);
  }
}
