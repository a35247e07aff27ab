// Weight storage types, read in their stored format (byte layouts: docs/formats.md §2, ggml-common.h).
// The variant (CMakeLists.txt) defines exactly one WTYPE_<T>; an includer gets, for that type:
//   QK, QB                  values and bytes per block (1 and 4/2 for plain floats)
//   W_FLOAT                 defined for F32/F16/BF16 (any row length; others need K % QK == 0)
//   uint row_size(uint K)   the size of a row of K values in the unit row addresses are given in:
//                           16-bit words, or bytes where W_BYTES is defined (MXFP4)
//   void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi)
//       values 8*k8 .. 8*k8+7 of the row that starts at address row16 (16-bit words, or bytes
//       with W_BYTES) of binding 0
//   float dequant1(uint row16, uint k)    (W_FLOAT only) value k, for rows with K % 8 != 0
//   void quant_init(uint tid, uint n_threads)
//       fills the workgroup's lookup tables in shared memory (IQ3_S's grid; nothing for the other
//       types); every kernel calls it first, in uniform control flow, before any dequantisation
// Weights are bound at binding 0 and read as 16-bit words where every block size is even (so every
// row and block starts 2-byte aligned), as 32-bit words where the type keeps them 4-byte aligned
// (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K, IQ4_XS, 4-aligned float runs), and as 16-byte vectors for aligned
// float runs. MXFP4's 17-byte blocks start at any byte: its rows are addressed in bytes and read
// as aligned 32-bit words, funnel-shifted.
// f16 goes through unpackHalf2x16, so no f16 arithmetic is needed.
#ifndef VKLLM_QUANT_GLSL
#define VKLLM_QUANT_GLSL

#extension GL_EXT_shader_16bit_storage : require

layout(std430, binding = 0) readonly restrict buffer W16 { uint16_t w16[]; };
layout(std430, binding = 0) readonly restrict buffer W32 { uint w32[]; };
layout(std430, binding = 0) readonly restrict buffer W128 { uvec4 w128[]; };

// --- word access and unpacking

uint u16_at(uint i) { return uint(w16[i]); }
uint u32_at16(uint i) { return uint(w16[i]) | (uint(w16[i + 1]) << 16); }  // 2-byte aligned u32
float f16_at(uint i) { return unpackHalf2x16(uint(w16[i])).x; }

// The aligned word i; a binding whose size is 2 mod 4 ends in half a word, read as 16 bits.
uint word_at(uint i) {
  if (i < w32.length()) return w32[i];
  return 2 * i < w16.length() ? uint(w16[2 * i]) : 0;
}

// s[k] = the 32 bits at 16-bit words i16 + 2k, i16 + 2k + 1 (k < n <= 8), from n + 1 aligned loads
// (funnel-shifted when i16 is odd) instead of 2n 16-bit ones: llvmpipe pays per load.
void span(uint i16, uint n, out uint s[8]) {
  uint b = i16 >> 1, odd = (i16 & 1) * 16;
  uint a = w32[b];
  for (uint k = 0; k < n; ++k) {
    uint c = k + 1 < n ? w32[b + k + 1] : word_at(b + k + 1);
    s[k] = odd != 0 ? (a >> 16) | (c << 16) : a;
    a = c;
  }
}

// The four bytes of w, each shifted right by s and masked: byte lanes as a vec4, low byte first.
vec4 bits4(uint w, uint s, uint mask) {
  uvec4 v = (uvec4(w) >> (uvec4(0, 8, 16, 24) + s)) & mask;
  return vec4(v);
}
vec4 sbytes4(uint w) {  // the four bytes of w as int8
  return vec4(ivec4(uvec4(w) << uvec4(24, 16, 8, 0)) >> 24);
}

// IQ4_NL / IQ4_XS: a 4-bit code selects one of 16 int8 values (ggml's kvalues_iq4nl), packed here
// four to a word, low byte first: -127 -104 -83 -65 | -49 -35 -22 -10 | 1 13 25 38 | 53 69 89 113.
// The word is chosen by selects on bits 2 and 3 and the byte by a shift: no indexed load, which
// llvmpipe would gather lane by lane (2.7x slower than Q4_0 when the table was indexed).
const uint IQ4_W0 = 0xBFAD9881u, IQ4_W1 = 0xF6EADDCFu, IQ4_W2 = 0x26190D01u, IQ4_W3 = 0x71594535u;
vec4 iq4_4(uint w, uint s) {  // the nibbles at shift s of the four bytes of w, as table values
  uvec4 q = (uvec4(w) >> (uvec4(0, 8, 16, 24) + s)) & 15;
  bvec4 b2 = notEqual(q & 4, uvec4(0)), b3 = notEqual(q & 8, uvec4(0));
  uvec4 word = mix(mix(uvec4(IQ4_W0), uvec4(IQ4_W1), b2), mix(uvec4(IQ4_W2), uvec4(IQ4_W3), b2), b3);
  return vec4(ivec4(word << (24 - 8 * (q & 3))) >> 24);
}

// --- what quant_init prepares: IQ3_S's 512-entry grid in shared memory (2 KiB, filled once per
// workgroup); MXFP4's partial last word (in a register, once per thread)

#if defined(WTYPE_IQ3_S)
#include "iq3s_grid.glsl"
shared uint iq3s_grid[512];
void quant_init(uint tid, uint n_threads) {
  for (uint i = tid; i < 512; i += n_threads) iq3s_grid[i] = IQ3S_GRID[i];
  barrier();
}
#elif defined(WTYPE_MXFP4)
// MXFP4's blocks start at any byte, so the aligned words that hold a binding's last block may run
// into a partial word (a binding size not a multiple of 4), whose bytes only 8-bit loads reach.
// quant_init reads it once; word_at_tail then picks it by a select: a branch to byte loads in the
// inner loop made llvmpipe's matvec 1.3x slower (it runs both sides of a divergent branch).
#extension GL_EXT_shader_8bit_storage : require
layout(std430, binding = 0) readonly restrict buffer W8 { uint8_t w8[]; };
uint w_tail;  // the bytes past the last whole word, low byte first (zeros past the end)
void quant_init(uint tid, uint n_threads) {
  w_tail = 0;
  for (uint j = 0; j < 3; ++j)
    if (4 * w32.length() + j < w8.length()) w_tail |= uint(w8[4 * w32.length() + j]) << (8 * j);
}
// The aligned word i, i <= w32.length() (that one is w_tail).
uint word_at_tail(uint i) {
  uint n = w32.length(), w = w32[min(i, n - 1)];
  return i < n ? w : w_tail;
}
#else
void quant_init(uint tid, uint n_threads) {}
#endif

// --- legacy 32-value blocks: run r = k8 % 4 holds values 8r .. 8r+7 of block k8 / 4. Runs 0, 1 are
// the low nibbles of qs[0..7], qs[8..15]; runs 2, 3 their high nibbles.

#if defined(WTYPE_Q4_0)
const uint QK = 32, QB = 18;  // d, qs[16]
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = row16 + (k8 >> 2) * 9, r = k8 & 3;
  float d = f16_at(b);
  uint q = b + 1 + (r & 1) * 4, s = (r >> 1) * 4;
  lo = (bits4(u32_at16(q), s, 15) - 8.0) * d;
  hi = (bits4(u32_at16(q + 2), s, 15) - 8.0) * d;
}

#elif defined(WTYPE_Q4_1)
const uint QK = 32, QB = 20;  // d, m, qs[16]: 5 words, always 4-byte aligned
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = (row16 >> 1) + (k8 >> 2) * 5, r = k8 & 3;
  vec2 dm = unpackHalf2x16(w32[b]);
  uint q = b + 1 + (r & 1) * 2, s = (r >> 1) * 4;
  lo = bits4(w32[q], s, 15) * dm.x + dm.y;
  hi = bits4(w32[q + 1], s, 15) * dm.x + dm.y;
}

#elif defined(WTYPE_Q5_0)
const uint QK = 32, QB = 22;  // d, qh[4], qs[16]; bit j of qh is bit 4 of value j
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = row16 + (k8 >> 2) * 11, r = k8 & 3;
  float d = f16_at(b);
  uint h = u32_at16(b + 1) >> (8 * r);  // the high bits of values 8r .. 8r+7
  uint q = b + 3 + (r & 1) * 4, s = (r >> 1) * 4;
  vec4 h_lo = vec4((uvec4(h) >> uvec4(0, 1, 2, 3)) & 1), h_hi = vec4((uvec4(h) >> uvec4(4, 5, 6, 7)) & 1);
  lo = (bits4(u32_at16(q), s, 15) + h_lo * 16.0 - 16.0) * d;
  hi = (bits4(u32_at16(q + 2), s, 15) + h_hi * 16.0 - 16.0) * d;
}

#elif defined(WTYPE_Q5_1)
const uint QK = 32, QB = 24;  // d, m, qh[4], qs[16]: 6 words, always 4-byte aligned
vec4 high_bits(uint h, uint s) { return vec4((uvec4(h) >> (uvec4(0, 1, 2, 3) + s)) & 1); }
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = (row16 >> 1) + (k8 >> 2) * 6, r = k8 & 3;
  vec2 dm = unpackHalf2x16(w32[b]);
  uint h = w32[b + 1] >> (8 * r);  // the high bits of values 8r .. 8r+7
  uint q = b + 2 + (r & 1) * 2, s = (r >> 1) * 4;
  lo = (bits4(w32[q], s, 15) + high_bits(h, 0) * 16.0) * dm.x + dm.y;
  hi = (bits4(w32[q + 1], s, 15) + high_bits(h, 4) * 16.0) * dm.x + dm.y;
}

#elif defined(WTYPE_IQ4_NL)
const uint QK = 32, QB = 18;  // d, qs[16]: as Q4_0, each nibble an index into IQ4_VALUES
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = row16 + (k8 >> 2) * 9, r = k8 & 3;
  float d = f16_at(b);
  uint q = b + 1 + (r & 1) * 4, s = (r >> 1) * 4;
  lo = iq4_4(u32_at16(q), s) * d;
  hi = iq4_4(u32_at16(q + 2), s) * d;
}

#elif defined(WTYPE_Q8_0)
const uint QK = 32, QB = 34;  // d, qs[32] int8
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = row16 + (k8 >> 2) * 17, r = k8 & 3;
  float d = f16_at(b);
  uint q = b + 1 + r * 4;
  lo = sbytes4(u32_at16(q)) * d;
  hi = sbytes4(u32_at16(q + 2)) * d;
}

// --- K-quants, 256-value super-blocks: run r = k8 % 32 holds values 8r .. 8r+7, in sub-block
// i = r/4 (32 values, one 6-bit scale and min) and 64-value chunk c = r/8, whose values are the low
// (i even) or high (i odd) nibbles of qs[32c .. 32c+31].

#elif defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K)
#if defined(WTYPE_Q4_K)
const uint QK = 256, QB = 144;  // d, dmin, scales[12], qs[128]: 36 words
const uint QWORDS = 36, QS_WORD = 4;
#else
const uint QK = 256, QB = 176;  // d, dmin, scales[12], qh[32], qs[128]: 44 words
const uint QWORDS = 44, QS_WORD = 12;
#endif
// (scale, min) of sub-block i from the 12 scale bytes in words sb .. sb+2 (docs/formats.md §2 Q4_K).
vec2 scale_min_k4(uint sb, uint i) {
  uint j = 8 * (i & 3);
  uint a = (w32[sb] >> j) & 255, m = (w32[sb + 1] >> j) & 255, c = (w32[sb + 2] >> j) & 255;
  return i < 4 ? vec2(a & 63, m & 63) : vec2((c & 15) | ((a >> 6) << 4), (c >> 4) | ((m >> 6) << 4));
}
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = (row16 >> 1) + (k8 >> 5) * QWORDS, r = k8 & 31, i = r >> 2;
  vec2 dm = unpackHalf2x16(w32[b]);
  vec2 sm = scale_min_k4(b + 1, i);
  float dl = dm.x * sm.x, ml = dm.y * sm.y;
  uint q = b + QS_WORD + 8 * (r >> 3) + 2 * (r & 3), s = (i & 1) * 4;
  vec4 qlo = bits4(w32[q], s, 15), qhi = bits4(w32[q + 1], s, 15);
#if defined(WTYPE_Q5_K)
  uint h = b + 4 + 2 * (r & 3);  // qh[l] for the same l = 8(r%4) ..; bit i adds 16
  qlo += bits4(w32[h], i, 1) * 16.0;
  qhi += bits4(w32[h + 1], i, 1) * 16.0;
#endif
  lo = qlo * dl - ml;
  hi = qhi * dl - ml;
}

#elif defined(WTYPE_Q2_K) || defined(WTYPE_Q3_K)
// Value e = 128h + 32j + l takes the 2 bits at shift 2j of qs[32h + l] and the scale of its
// 16-value group e/16. Run r: h = r/16, j = r/4 % 4, l = 8(r%4) ..
#if defined(WTYPE_Q2_K)
const uint QK = 256, QB = 84;  // scales[16] (4-bit scale | 4-bit min << 4), qs[64], d, dmin: 21 words
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = (row16 >> 1) + (k8 >> 5) * 21, r = k8 & 31, j = (r >> 2) & 3;
  vec2 dm = unpackHalf2x16(w32[b + 20]);
  uint sc = (w32[b + (r >> 3)] >> (8 * ((r >> 1) & 3))) & 255;
  float dl = dm.x * float(sc & 15), ml = dm.y * float(sc >> 4);
  uint q = b + 4 + 8 * (r >> 4) + 2 * (r & 3);
  lo = bits4(w32[q], 2 * j, 3) * dl - ml;
  hi = bits4(w32[q + 1], 2 * j, 3) * dl - ml;
}
#else
const uint QK = 256, QB = 110;  // hmask[32], qs[64], scales[12], d: 55 16-bit words
// Scale i (6 bits, minus 32): low 4 bits = nibble i/8 of scales[i%8], high 2 = bits 2(i/4) of
// scales[8 + i%4] (docs/formats.md §2.2 Q3_K). The value is q − 4 where bit e/32 of hmask[l] is clear.
float q3_scale(uint b, uint i) {
  uint lo = (u16_at(b + 48 + ((i & 7) >> 1)) >> (8 * (i & 1) + 4 * (i >> 3))) & 15;
  uint hi = (u16_at(b + 52 + ((i & 3) >> 1)) >> (8 * (i & 1) + 2 * (i >> 2))) & 3;
  return float(lo | (hi << 4)) - 32.0;
}
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = row16 + (k8 >> 5) * 55, r = k8 & 31, j = (r >> 2) & 3;
  float dl = f16_at(b + 54) * q3_scale(b, r >> 1);
  uint q = b + 16 + 16 * (r >> 4) + 4 * (r & 3), m = b + 4 * (r & 3);
  lo = (bits4(u32_at16(q), 2 * j, 3) + bits4(u32_at16(m), r >> 2, 1) * 4.0 - 4.0) * dl;
  hi = (bits4(u32_at16(q + 2), 2 * j, 3) + bits4(u32_at16(m + 2), r >> 2, 1) * 4.0 - 4.0) * dl;
}
#endif

#elif defined(WTYPE_Q6_K)
const uint QK = 256, QB = 210;  // ql[128], qh[64], scales[16] int8, d: 105 16-bit words
// Value e = 128h + 32g + l: low 4 bits from nibble g/2 of ql[64h + 32(g%2) + l], high 2 bits from
// bits 2g of qh[32h + l]; scale scales[e/16]. Run r: h = r/16, g = r/4 % 4, l = 8(r%4) ..
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = row16 + (k8 >> 5) * 105, r = k8 & 31;
  uint h = r >> 4, g = (r >> 2) & 3, l = 8 * (r & 3);
  float d = f16_at(b + 104);
  float sc = float(bitfieldExtract(int(u16_at(b + 96 + (r >> 2))), 8 * int((r >> 1) & 1), 8));
  uint L = b + (64 * h + 32 * (g & 1) + l) / 2, Q = b + 64 + (32 * h + l) / 2;
  uint ls = 4 * (g >> 1), hs = 2 * g;
  lo = (bits4(u32_at16(L), ls, 15) + bits4(u32_at16(Q), hs, 3) * 16.0 - 32.0) * (d * sc);
  hi = (bits4(u32_at16(L + 2), ls, 15) + bits4(u32_at16(Q + 2), hs, 3) * 16.0 - 32.0) * (d * sc);
}

// --- non-linear 256-value types

#elif defined(WTYPE_IQ4_XS)
const uint QK = 256, QB = 136;  // d, scales_h, scales_l[4], qs[128]: 34 words
// Sub-block ib (32 values, laid out as one IQ4_NL block's nibbles) has scale d·(ls − 32), ls = nibble
// ib%2 of scales_l[ib/2] | bits 2ib of scales_h << 4. Run r: sub-block r/4, run r%4 of it.
float iq4_xs_scale(uint b, uint ib) {
  uint w = w32[b];
  uint ls = ((w32[b + 1] >> (4 * ib)) & 15) | (((w >> (16 + 2 * ib)) & 3) << 4);
  return unpackHalf2x16(w).x * (float(ls) - 32.0);
}
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = (row16 >> 1) + (k8 >> 5) * 34, r = k8 & 31, ib = r >> 2;
  float dl = iq4_xs_scale(b, ib);
  uint q = b + 2 + 4 * ib + (r & 1) * 2, s = ((r >> 1) & 1) * 4;
  lo = iq4_4(w32[q], s) * dl;
  hi = iq4_4(w32[q + 1], s) * dl;
}

#elif defined(WTYPE_IQ3_S)
const uint QK = 256, QB = 110;  // d, qs[64], qh[8], signs[32], scales[4]: 55 16-bit words
// 8-value group g (sub-block s = g/4, l = g%4): magnitudes = the bytes of grid[qs[2g] | bit 2l of
// qh[s] << 8] then grid[qs[2g+1] | bit 2l+1 of qh[s] << 8]; value i negative where bit i of
// signs[g] is set; scale d·(1 + 2·nibble s%2 of scales[s/2]) (docs/formats.md §2.4).
vec4 signs4(uint w, uint s) { return 1.0 - 2.0 * vec4((uvec4(w) >> (uvec4(0, 1, 2, 3) + s)) & 1); }
void iq3s_group(uint qs2, uint qh, uint l, uint sign, float db, out vec4 lo, out vec4 hi) {
  uint i0 = (qs2 & 255) | (((qh >> (2 * l)) & 1) << 8), i1 = ((qs2 >> 8) & 255) | (((qh >> (2 * l + 1)) & 1) << 8);
  lo = bits4(iq3s_grid[i0], 0, 255) * signs4(sign, 0) * db;
  hi = bits4(iq3s_grid[i1], 0, 255) * signs4(sign, 4) * db;
}
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint b = row16 + (k8 >> 5) * 55, g = k8 & 31, s = g >> 2;
  uint qh = u16_at(b + 33 + (s >> 1)) >> (8 * (s & 1));
  uint sign = u16_at(b + 37 + (g >> 1)) >> (8 * (g & 1));
  uint sc = (u16_at(b + 53 + (s >> 2)) >> (8 * ((s >> 1) & 1) + 4 * (s & 1))) & 15;
  iq3s_group(u16_at(b + 1 + g), qh, g & 3, sign, f16_at(b) * float(1 + 2 * sc), lo, hi);
}

// --- MXFP4: 32-value blocks of 17 bytes, e (E8M0 scale), qs[16] (E2M1 nibbles, Q4_0's order: value
// j < 16 the low nibble of qs[j], j + 16 the high one). Rows and blocks start at any byte.

#elif defined(WTYPE_MXFP4)
#define W_BYTES
const uint QK = 32, QB = 17;

// s[k] = the 32 bits at bytes a + 4k .. a + 4k + 3 (k < n <= 4), from n + 1 aligned loads.
void byte_span(uint a, uint n, out uint s[4]) {
  uint b = a >> 2, sh = 8 * (a & 3);
  uint lo = w32[b];
  for (uint k = 0; k < n; ++k) {
    uint hi = k + 1 < n ? w32[b + k + 1] : word_at_tail(b + k + 1);  // past the end only when sh = 0
    s[k] = sh == 0 ? lo : (lo >> sh) | (hi << (32 - sh));
    lo = hi;
  }
}

// Half the E8M0 scale 2^(e - 127) (the E2M1 values below are doubled), from its bits: e = 0, 1 give
// the subnormals 2^-128, 2^-127 (a GPU may flush them to 0; no real block is that small).
float e8m0_half(uint e) { return uintBitsToFloat(e < 2 ? 0x00200000u << e : (e - 1) << 23); }

// The nibbles at shift s of the four bytes of w as ggml's doubled E2M1 values (kvalues_mxfp4:
// 0 1 2 3 4 6 8 12, bit 3 the sign, code 8 is +0), all four bytes at once in one word: magnitude
// m < 4 is m, m >= 4 is m + (m & 3) + 2 (m == 7); a nonzero negative byte is negated as ~t + 1
// (t <= 12: no carry into the next byte); one int8 convert. No table, and 13% less CPU per
// matvec on llvmpipe than building each lane's float bits (0x3F800000 + m << 22).
vec4 fp4_4(uint w, uint s) {
  uint q = (w >> s) & 0x0F0F0F0Fu, m = q & 0x07070707u;
  uint b2 = (m >> 2) & 0x01010101u;
  uint t = m + (m & (b2 * 3u)) + (((m >> 1) & m & b2) << 1);
  uint sg = (q >> 3) & (m | (m >> 1) | (m >> 2)) & 0x01010101u;
  return sbytes4((t ^ (sg * 255u)) + sg);
}

void dequant8(uint row8, uint k8, out vec4 lo, out vec4 hi) {
  uint a = row8 + (k8 >> 2) * 17, r = k8 & 3, q[4];
  float d = e8m0_half(uint(w8[a]));
  byte_span(a + 1 + (r & 1) * 8, 2, q);
  uint s = (r >> 1) * 4;
  lo = fp4_4(q[0], s) * d;
  hi = fp4_4(q[1], s) * d;
}

// --- plain floats: any row length; runs that start 16-byte aligned load as vectors.

#elif defined(WTYPE_F32)
#define W_FLOAT
const uint QK = 1, QB = 4;
float dequant1(uint row16, uint k) { return uintBitsToFloat(w32[(row16 >> 1) + k]); }
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint i = (row16 >> 1) + 8 * k8;
  if ((i & 3) == 0) {
    lo = uintBitsToFloat(w128[i >> 2]);
    hi = uintBitsToFloat(w128[(i >> 2) + 1]);
  } else {
    lo = uintBitsToFloat(uvec4(w32[i], w32[i + 1], w32[i + 2], w32[i + 3]));
    hi = uintBitsToFloat(uvec4(w32[i + 4], w32[i + 5], w32[i + 6], w32[i + 7]));
  }
}

#elif defined(WTYPE_F16) || defined(WTYPE_BF16)
#define W_FLOAT
const uint QK = 1, QB = 2;
#if defined(WTYPE_F16)
vec2 pair(uint w) { return unpackHalf2x16(w); }
#else
vec2 pair(uint w) { return uintBitsToFloat(uvec2(w << 16, w & 0xFFFF0000u)); }
#endif
float dequant1(uint row16, uint k) { return pair(u16_at(row16 + k)).x; }
uint u_pair(uint i) { return u32_at16(i); }  // two values at any 16-bit word
void dequant8(uint row16, uint k8, out vec4 lo, out vec4 hi) {
  uint i = row16 + 8 * k8;
  uvec4 v = (i & 7) == 0 ? w128[i >> 3]
                         : uvec4(u32_at16(i), u32_at16(i + 2), u32_at16(i + 4), u32_at16(i + 6));
  lo = vec4(pair(v.x), pair(v.y));
  hi = vec4(pair(v.z), pair(v.w));
}

#else
#error "define one WTYPE_<type> (a variant row in CMakeLists.txt) before including quant.glsl"
#endif

#ifdef W_BYTES
uint row_size(uint K) { return K / QK * QB; }
#else
uint row_size(uint K) { return K / QK * (QB / 2); }
#endif

#endif
