#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
// Prefill matrix product on the matrix units, the body of the matmul_coop_<type> variants
// (CMakeLists.txt): y(B; N, M) = x(B; N, K) · w(B; M, K)ᵀ (+ bias(B; M)) as matmul.glsl computes
// it, but the multiply-adds are cooperative matrices: f16 inputs, f32 accumulation.
// Written in GL_NV_cooperative_matrix, the dialect Debian's glslang compiles; the build also
// rewrites each module into VK_KHR_cooperative_matrix's form (shaders/coopmat_khr.h).
// A workgroup computes a BM x BN tile of y (weight rows x tokens) as (BM/WM) x (BN/WN) subgroups,
// each a WM x WN tile of CM x CN accumulators. Each K step of BK, the weights are dequantised
// (quant.glsl's dequant8) into a shared f16 tile of BM rows x BK and x's BN x BK tile is
// converted to f16 beside it; the global loads of the next step are issued before this step's
// multiply-adds (register prefetch), so one shared tile and two barriers a step suffice.
// Not yet measured on a GPU: scripts/gpu_check_coopmat times it and sweeps the tiles.
// Results pass through a small shared tile per subgroup, so the epilogue (bias, accumulate,
// planar parts) is matmul.glsl's. A shape the device lacks never reaches this code: the host
// specialises CM, CN, CK to one that vkGetPhysicalDeviceCooperativeMatrixProperties lists.
// Bindings: 0 w (stored type), 1 x f32, 2 bias f32 (bound even when unused), 3 y f32.
// With MOE (the matmul_coop_id_<type> variants): matmul_id.glsl's expert products instead, the
// workgroup's tokens the up to BN pairs of one plan tile (moe_tile.glsl), gathered from x and
// scattered to y; bindings 0 w (the experts), 1 x, 2 plan int32, 3 y; no bias or accumulate.
#include "push.h"
#include "quant.glsl"

layout(constant_id = 0) const uint WG = 128;  // threads: (BM / WM) * (BN / WN) subgroups
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;  // a multiple of CK and of 8
layout(constant_id = 4) const uint WM = 64;  // a subgroup's tile: a multiple of CM ...
layout(constant_id = 5) const uint WN = 64;  // ... by a multiple of CN
layout(constant_id = 6) const bool HAS_BIAS = false;
layout(constant_id = 7) const bool ACCUMULATE = false;  // y += product (a residual add)
// The matrix shape: A (weights) CM x CK, B (x) CK x CN, accumulator CM x CN. Three constants, so
// that A's and B's types stay distinct even where the shape is square (the KHR rewrite gives each
// type one use).
layout(constant_id = 8) const uint CM = 16;
layout(constant_id = 9) const uint CN = 16;
layout(constant_id = 10) const uint CK = 16;
layout(constant_id = 11) const bool X_VEC4 = false;  // x's rows and batches start 16-byte aligned
layout(local_size_x_id = 0) in;

layout(std430, binding = 1) readonly restrict buffer X { float x[]; };
layout(std430, binding = 1) readonly restrict buffer X4 { vec4 x4[]; };
uint m0, w0, row_len;  // the workgroup's first weight row, its matrix, the row length (quant.glsl)

#ifdef MOE
layout(std430, binding = 2) readonly restrict buffer Plan { int plan[]; };
layout(std430, binding = 3) writeonly restrict buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { MatmulIdPush p; };
#include "moe_tile.glsl"
shared uint pair_s[BN];  // the tile's pairs
uint pairs;              // how many it holds

// Where the x row of the tile's token nn starts, and whether there is one.
bool x_row(uint nn, out uint start) {
  start = pair_s[min(nn, BN - 1)] / p.x_div * p.x_row_stride;
  return nn < pairs;
}
void store(uint m, uint nn, float v) {
  if (m < p.M && nn < pairs) y[y_at(pair_s[nn], m)] = v;
}
#else
layout(std430, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(std430, binding = 3) restrict buffer Y { float y[]; };  // read too when ACCUMULATE
layout(push_constant) uniform PushBlock { MatmulPush p; };
#include "matmul_out.glsl"
uint n0, x0, batch;  // the workgroup's first token and its batch

bool x_row(uint nn, out uint start) {
  uint n = n0 + nn;
  start = x0 + min(n, p.N - 1) * p.x_row_stride;
  return n < p.N;
}
void store(uint m, uint nn, float v) {
  uint n = n0 + nn;
  if (m >= p.M || n >= p.N) return;
  if (HAS_BIAS) v += bias[batch * p.M + m];
  uint at = y_index(batch, n, m);
  y[at] = ACCUMULATE ? y[at] + v : v;
}
#endif

// A tile row: BK f16 values as 16-byte words, plus one word of padding so that the rows of a
// matrix load fall in different shared-memory banks.
const uint ROW = BK / 8 + 1;
const uint RUNS = BK / 8;                        // 8-value runs per tile row
const uint A_RUNS = BM * RUNS / WG;              // runs each thread loads per step (the host
const uint B_RUNS = BN * RUNS / WG;              // checks that they divide)
const uint TI = WM / CM, TJ = WN / CN;           // accumulators per subgroup
const uint NSG = (BM / WM) * (BN / WN);          // subgroups with a tile
shared uvec4 a_sh[BM * ROW];                     // weights: BM rows (K contiguous)
shared uvec4 b_sh[BN * ROW];                     // x: BN tokens (K contiguous)
shared float stage[NSG * CM * CN];               // one accumulator tile per subgroup

uvec4 a_reg[A_RUNS], b_reg[B_RUNS];  // the next step's runs, loaded ahead

// Eight floats as f16, held to f16's range (an overflow would become infinity).
uvec4 pack8(vec4 lo, vec4 hi) {
  f16vec4 l = f16vec4(clamp(lo, -65504.0, 65504.0)), h = f16vec4(clamp(hi, -65504.0, 65504.0));
  return uvec4(packFloat2x16(l.xy), packFloat2x16(l.zw), packFloat2x16(h.xy), packFloat2x16(h.zw));
}

// Weight values k .. k+7 of row m (zeros past M or K). Branch-free where rows are whole blocks:
// past the edges the address is clamped and the values selected away, so that a step's loads and
// the multiply-adds after them are one block of straight-line code the compiler can interleave.
uvec4 load_w(uint m, uint k) {
  bool whole = all(bvec2(m < p.M, k + 8 <= p.K));  // no short-circuit branch
  vec4 lo, hi;
  dequant8(w0 + min(m, p.M - 1) * row_len, whole ? k / 8 : 0, lo, hi);
  lo = mix(vec4(0.0), lo, bvec4(whole));
  hi = mix(vec4(0.0), hi, bvec4(whole));
#ifdef W_FLOAT
  if (!whole && m < p.M && k < p.K) {  // the ragged end of a float row
    for (uint j = 0; j < 4; ++j) {
      if (k + j < p.K) lo[j] = dequant1(w0 + m * row_len, k + j);
      if (k + 4 + j < p.K) hi[j] = dequant1(w0 + m * row_len, k + 4 + j);
    }
  }
#endif
  return pack8(lo, hi);
}

// x values k .. k+7 of the tile's token nn (zeros past the tokens or K); branch-free as load_w
// where rows are aligned.
uvec4 load_x(uint nn, uint k) {
  vec4 lo = vec4(0.0), hi = vec4(0.0);
  uint start;
  bool row = x_row(nn, start);
  if (X_VEC4) {
    bool in_range = all(bvec2(row, k + 8 <= p.K));
    uint i = start + (in_range ? k : 0);
    lo = mix(vec4(0.0), x4[i / 4], bvec4(in_range));
    hi = mix(vec4(0.0), x4[i / 4 + 1], bvec4(in_range));
  } else if (row) {
    for (uint j = 0; j < 4; ++j) {
      if (k + j < p.K) lo[j] = x[start + k + j];
      if (k + 4 + j < p.K) hi[j] = x[start + k + 4 + j];
    }
  }
  return pack8(lo, hi);
}

// Thread t's runs of step k0: run t + r·WG is run (t + r·WG) % RUNS of tile row (t + r·WG) / RUNS,
// so neighbouring threads read neighbouring bytes of one weight row or token.
void fetch(uint k0) {
  uint tid = gl_LocalInvocationIndex;
  [[unroll]] for (uint r = 0; r < A_RUNS; ++r) {
    uint i = tid + r * WG;
    a_reg[r] = load_w(m0 + i / RUNS, k0 + 8 * (i % RUNS));
  }
  [[unroll]] for (uint r = 0; r < B_RUNS; ++r) {
    uint i = tid + r * WG;
    b_reg[r] = load_x(i / RUNS, k0 + 8 * (i % RUNS));
  }
}

void main() {
  uint tid = gl_LocalInvocationIndex;
  quant_init(tid, WG);
  row_len = row_size(p.K);  // in row addresses (quant.glsl)
#ifdef MOE
  uint expert, first, count;
  if (!read_tile(gl_WorkGroupID.x, BN, expert, first, count)) return;  // uniform
  for (uint i = tid; i < BN; i += WG) pair_s[i] = i < count ? uint(plan[first + i]) : 0;
  barrier();
  pairs = count;
  m0 = gl_WorkGroupID.y * BM;
  w0 = expert * p.M * row_len;
#else
  m0 = gl_WorkGroupID.x * BM, n0 = gl_WorkGroupID.y * BN, batch = gl_WorkGroupID.z;
  w0 = batch * p.M * row_len, x0 = batch * p.x_batch_stride;
#endif
  // Subgroups past NSG (a device that runs smaller subgroups than the host planned for) repeat the
  // last tile and store nothing; fewer than NSG would leave tiles out, which the pipeline's
  // self-check catches.
  bool has_tile = gl_SubgroupID < NSG;
  uint sg = min(gl_SubgroupID, NSG - 1);
  uint wm = (sg % (BM / WM)) * WM, wn = (sg / (BM / WM)) * WN;

  fcoopmatNV<32, gl_ScopeSubgroup, CM, CN> acc[TI * TJ];
  [[unroll]] for (uint i = 0; i < TI * TJ; ++i) acc[i] = fcoopmatNV<32, gl_ScopeSubgroup, CM, CN>(0.0);

  fetch(0);
  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    barrier();  // every subgroup is done with the previous step's tiles
    [[unroll]] for (uint r = 0; r < A_RUNS; ++r) {
      uint i = tid + r * WG;
      a_sh[(i / RUNS) * ROW + i % RUNS] = a_reg[r];
    }
    [[unroll]] for (uint r = 0; r < B_RUNS; ++r) {
      uint i = tid + r * WG;
      b_sh[(i / RUNS) * ROW + i % RUNS] = b_reg[r];
    }
    barrier();
    // The next step's loads (past K they read clamped addresses and yield zeros), then this
    // step's multiply-adds: no branch between them.
    fetch(k0 + BK);
    [[unroll]] for (uint kk = 0; kk < BK; kk += CK) {
      fcoopmatNV<16, gl_ScopeSubgroup, CK, CN> b[TJ];
      [[unroll]] for (uint j = 0; j < TJ; ++j) coopMatLoadNV(b[j], b_sh, (wn + j * CN) * ROW + kk / 8, ROW, true);
      [[unroll]] for (uint i = 0; i < TI; ++i) {
        fcoopmatNV<16, gl_ScopeSubgroup, CM, CK> a;
        coopMatLoadNV(a, a_sh, (wm + i * CM) * ROW + kk / 8, ROW, false);
        [[unroll]] for (uint j = 0; j < TJ; ++j) acc[i * TJ + j] = coopMatMulAddNV(a, b[j], acc[i * TJ + j]);
      }
    }
  }

  // Each accumulator through the subgroup's staging tile (column-major: element (r, c) at
  // c·CM + r), then out by lanes along m: neighbouring lanes write neighbouring floats of y.
  if (!has_tile) return;
  uint base = sg * CM * CN;
  [[unroll]] for (uint i = 0; i < TI; ++i) {
    [[unroll]] for (uint j = 0; j < TJ; ++j) {
      coopMatStoreNV(acc[i * TJ + j], stage, base, CM, true);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = gl_SubgroupInvocationID; e < CM * CN; e += gl_SubgroupSize)
        store(m0 + wm + i * CM + e % CM, wn + j * CN + e / CM, stage[base + e]);
      subgroupBarrier();
    }
  }
}
