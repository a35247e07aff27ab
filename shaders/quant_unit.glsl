// Matvec units: per weight type, the natural chunk of a row whose values share their loads (both
// nibbles of each byte, one decode of the scales), so a unit costs few memory accesses per value.
// Needs quant.glsl and bool constants ALIGNED (K % 8 == 0: float rows start 16-byte aligned) and
// WIDE_LOADS (16-byte weight loads; the binding's size a multiple of 16) first.
// For the type selected by WTYPE_<T>:
//   UNIT                    values per unit; a row has K / UNIT whole units (plain floats: a
//                           ragged tail of K % UNIT values is left to dequant1)
//   void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4])   (row16: quant.glsl's row address)
//   uint unit_k(uint u, uint j)   position in the row of v[j][0] (v[j] holds 4 consecutive values)
#ifndef VKLLM_QUANT_UNIT_GLSL
#define VKLLM_QUANT_UNIT_GLSL

#if defined(WTYPE_Q4_0) || defined(WTYPE_Q4_1) || defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1) || \
    defined(WTYPE_Q8_0) || defined(WTYPE_IQ4_NL) || defined(WTYPE_MXFP4) || defined(W_FLOAT)
const uint UNIT = 32;  // one block (32-value types), 32 values (floats)
uint unit_k(uint u, uint j) { return 32 * u + 4 * j; }
#else
const uint UNIT = 64;
#endif
#if defined(WTYPE_Q2_K) || defined(WTYPE_Q3_K) || defined(WTYPE_IQ4_XS) || defined(WTYPE_IQ3_S)
uint unit_k(uint u, uint j) { return 64 * u + 4 * j; }  // unit u = values 64u .. 64u+63 in order
#endif

#if defined(WTYPE_Q4_0) || defined(WTYPE_IQ4_NL)
// WIDE_LOADS: the 18-byte block at 16-bit word b from the two aligned 16-byte words that hold it
// (it starts at an even byte of the first), instead of six 2- and 4-byte loads. As block34_wide,
// the host enables it only where the binding's size is a multiple of 16.
void block18_wide(uint b, out float d, out uint qs[8]) {
  uint c = b >> 3, last = w128.length() - 1;
  uvec4 a0 = w128[c], a1 = w128[min(c + 1, last)];
  uint w[8] = uint[8](a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w);
  uint ws = (b >> 1) & 3, s[5];  // the block starts in word ws of the window, at bit 16·(b & 1)
  for (uint k = 0; k < 5; ++k) s[k] = ws < 2 ? (ws == 0 ? w[k] : w[k + 1]) : (ws == 2 ? w[k + 2] : w[k + 3]);
  bool odd = (b & 1) != 0;
  d = unpackHalf2x16(odd ? s[0] >> 16 : s[0]).x;
  for (uint i = 0; i < 4; ++i) qs[i] = odd ? s[i + 1] : (s[i] >> 16) | (s[i + 1] << 16);
}
// d and the four qs words of the 18-byte block at 16-bit word b.
void block18(uint b, out float d, out uint qs[8]) {
  if (WIDE_LOADS) {
    block18_wide(b, d, qs);
    return;
  }
  d = f16_at(b);
  span(b + 1, 4, qs);
}
#endif

#if defined(WTYPE_Q4_0)
// qs word i (bytes 4i..4i+3) holds values 4i.. in its low nibbles and 16+4i.. in its high ones.
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = row16 + u * 9, qs[8];
  float d;
  block18(b, d, qs);
  for (uint i = 0; i < 4; ++i) {
    uint q = qs[i];
    v[i] = (bits4(q, 0, 15) - 8.0) * d;
    v[4 + i] = (bits4(q, 4, 15) - 8.0) * d;
  }
}

#elif defined(WTYPE_Q4_1)
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = (row16 >> 1) + u * 5;
  vec2 dm = unpackHalf2x16(w32[b]);
  for (uint i = 0; i < 4; ++i) {
    uint q = w32[b + 1 + i];
    v[i] = bits4(q, 0, 15) * dm.x + dm.y;
    v[4 + i] = bits4(q, 4, 15) * dm.x + dm.y;
  }
}

#elif defined(WTYPE_Q5_0)
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = row16 + u * 11, s[8];  // s: qh, then the four qs words
  float d = f16_at(b);
  span(b + 1, 5, s);
  uint h = s[0];
  for (uint i = 0; i < 4; ++i) {
    uint q = s[1 + i];
    v[i] = (bits4(q, 0, 15) + vec4((uvec4(h) >> (uvec4(0, 1, 2, 3) + 4 * i)) & 1) * 16.0 - 16.0) * d;
    v[4 + i] = (bits4(q, 4, 15) + vec4((uvec4(h) >> (uvec4(16, 17, 18, 19) + 4 * i)) & 1) * 16.0 - 16.0) * d;
  }
}

#elif defined(WTYPE_Q5_1)
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = (row16 >> 1) + u * 6;
  vec2 dm = unpackHalf2x16(w32[b]);
  uint h = w32[b + 1];
  for (uint i = 0; i < 4; ++i) {
    uint q = w32[b + 2 + i];
    v[i] = (bits4(q, 0, 15) + high_bits(h, 4 * i) * 16.0) * dm.x + dm.y;
    v[4 + i] = (bits4(q, 4, 15) + high_bits(h, 16 + 4 * i) * 16.0) * dm.x + dm.y;
  }
}

#elif defined(WTYPE_IQ4_NL)
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = row16 + u * 9, qs[8];
  float d;
  block18(b, d, qs);
  for (uint i = 0; i < 4; ++i) {
    v[i] = iq4_4(qs[i], 0) * d;
    v[4 + i] = iq4_4(qs[i], 4) * d;
  }
}

#elif defined(WTYPE_Q8_0)
// WIDE_LOADS (llvmpipe): the 34-byte block from three aligned 16-byte loads instead of ten 2- and
// 4-byte ones. llvmpipe gathers every load lane by lane in a loop whose cost barely depends on the
// load's width, so this is ~3x fewer gathers. The host enables it only where the binding's size is
// a multiple of 16, so the window's words past the binding lie wholly past it (clamped, unused).
void block34_wide(uint b, out float d, out uint qs[8]) {
  uint c = b >> 3, last = w128.length() - 1;
  uvec4 a0 = w128[c], a1 = w128[min(c + 1, last)], a2 = w128[min(c + 2, last)];
  uint w[12] = uint[12](a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w, a2.x, a2.y, a2.z, a2.w);
  uint ws = (b >> 1) & 3, s[9];  // the block starts in word ws of the window, at bit 16·(b & 1)
  for (uint k = 0; k < 9; ++k) s[k] = ws < 2 ? (ws == 0 ? w[k] : w[k + 1]) : (ws == 2 ? w[k + 2] : w[k + 3]);
  bool odd = (b & 1) != 0;
  d = unpackHalf2x16(odd ? s[0] >> 16 : s[0]).x;
  for (uint i = 0; i < 8; ++i) qs[i] = odd ? s[i + 1] : (s[i] >> 16) | (s[i + 1] << 16);
}
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = row16 + u * 17, qs[8];
  float d;
  if (WIDE_LOADS) {
    block34_wide(b, d, qs);
  } else {
    d = f16_at(b);
    span(b + 1, 8, qs);
  }
  for (uint i = 0; i < 8; ++i) v[i] = sbytes4(qs[i]) * d;
}

#elif defined(WTYPE_MXFP4)
// One 17-byte block from the five aligned words that hold it: e is byte a % 4 of the first, qs
// starts o = a % 4 + 1 bytes in (o = 4: the next word, no shift).
void dequant_unit(uint row8, uint u, out vec4 v[UNIT / 4]) {
  uint a = row8 + u * 17, b = a >> 2, o = (a & 3) + 1, w[5];
  for (uint i = 0; i < 4; ++i) w[i] = w32[b + i];
  w[4] = word_at_tail(b + 4);  // the binding's partial last word for its last block
  float d = e8m0_half((w[0] >> (8 * (a & 3))) & 255);
  uint sh = 8 * (o & 3);
  for (uint i = 0; i < 4; ++i) {
    uint q = sh == 0 ? w[i + 1] : (w[i] >> sh) | (w[i + 1] << (32 - sh));
    v[i] = fp4_4(q, 0) * d;
    v[4 + i] = fp4_4(q, 4) * d;
  }
}

#elif defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K)
// Unit u = 64-value chunk c = u % 4 of super-block u / 4: the low nibbles of qs[32c ..] are
// sub-block 2c, the high nibbles sub-block 2c+1. Blocks are 16-byte aligned: vector loads.
uint unit_k(uint u, uint j) { return 64 * u + 4 * j; }
vec2 scale_min_of(uvec4 head, uint i) {  // head = (d|dmin, scale words 0..2)
  uint s = 8 * (i & 3);
  uint a = (head.y >> s) & 255, m = (head.z >> s) & 255, c = (head.w >> s) & 255;
  return i < 4 ? vec2(a & 63, m & 63) : vec2((c & 15) | ((a >> 6) << 4), (c >> 4) | ((m >> 6) << 4));
}
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = (row16 >> 3) + (u >> 2) * (QWORDS / 4), c = u & 3;  // in 16-byte units
  uvec4 head = w128[b];
  vec2 dm = unpackHalf2x16(head.x);
  vec2 lo = scale_min_of(head, 2 * c), hi = scale_min_of(head, 2 * c + 1);
  float dl0 = dm.x * lo.x, ml0 = dm.y * lo.y, dl1 = dm.x * hi.x, ml1 = dm.y * hi.y;
  uvec4 q[2] = {w128[b + QS_WORD / 4 + 2 * c], w128[b + QS_WORD / 4 + 2 * c + 1]};
#if defined(WTYPE_Q5_K)
  uvec4 h[2] = {w128[b + 1], w128[b + 2]};  // qh[32]: bit 2c of qh[l] for sub-block 2c, 2c+1 for 2c+1
#endif
  for (uint i = 0; i < 8; ++i) {
    uint w = q[i >> 2][i & 3];
    vec4 q0 = bits4(w, 0, 15), q1 = bits4(w, 4, 15);
#if defined(WTYPE_Q5_K)
    uint hw = h[i >> 2][i & 3];
    q0 += bits4(hw, 2 * c, 1) * 16.0;
    q1 += bits4(hw, 2 * c + 1, 1) * 16.0;
#endif
    v[i] = q0 * dl0 - ml0;
    v[8 + i] = q1 * dl1 - ml1;
  }
}

#elif defined(WTYPE_Q6_K)
// Unit u: super-block u / 4, half h = u / 2 % 2, g0 = u % 2: values 128h + 32g0 + l (low nibbles of
// ql[64h + 32g0 + l], qh bits 2g0) and, 64 further on, 128h + 32(g0+2) + l (high nibbles, bits 2g0+4).
uint unit_k(uint u, uint j) {
  return 256 * (u >> 2) + 128 * ((u >> 1) & 1) + 32 * (u & 1) + (j < 8 ? 4 * j : 64 + 4 * (j - 8));
}
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = row16 + (u >> 2) * 105, h = (u >> 1) & 1, g0 = u & 1;
  float d = f16_at(b + 104);
  // Scales of the four 16-value groups: bytes 8h + 2g0 + {0, 1} and 8h + 2g0 + 4 + {0, 1}.
  uint s0 = u16_at(b + 96 + 4 * h + g0), s1 = u16_at(b + 96 + 4 * h + g0 + 2);
  vec4 sc = vec4(ivec4(uvec4(s0, s0, s1, s1) << uvec4(24, 16, 24, 16)) >> 24) * d;
  uint L[8], Q[8];
  span(b + 32 * h + 16 * g0, 8, L);
  span(b + 64 + 16 * h, 8, Q);
  for (uint i = 0; i < 8; ++i) {
    v[i] = (bits4(L[i], 0, 15) + bits4(Q[i], 2 * g0, 3) * 16.0 - 32.0) * sc[i < 4 ? 0 : 1];
    v[8 + i] = (bits4(L[i], 4, 15) + bits4(Q[i], 2 * g0 + 4, 3) * 16.0 - 32.0) * sc[i < 4 ? 2 : 3];
  }
}

#elif defined(WTYPE_Q2_K)
// Unit u = values 64c .. 64c+63 (c = u % 4) of super-block u / 4: the 2-bit fields at shifts 4(c%2)
// and 4(c%2)+2 of qs[32(c/2) ..], with the scale bytes 4c .. 4c+3 (one word).
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = (row16 >> 1) + (u >> 2) * 21, c = u & 3, s0 = 4 * (c & 1);
  vec2 dm = unpackHalf2x16(w32[b + 20]);
  uvec4 sc = (uvec4(w32[b + c]) >> uvec4(0, 8, 16, 24)) & 255;
  vec4 dl = dm.x * vec4(sc & 15), ml = dm.y * vec4(sc >> 4);
  for (uint i = 0; i < 8; ++i) {
    uint w = w32[b + 4 + 8 * (c >> 1) + i];
    v[i] = bits4(w, s0, 3) * dl[i >> 2] - ml[i >> 2];
    v[8 + i] = bits4(w, s0 + 2, 3) * dl[2 + (i >> 2)] - ml[2 + (i >> 2)];
  }
}

#elif defined(WTYPE_Q3_K)
// As Q2_K (2-bit fields at shifts 4(c%2), +2 of qs[32(c/2) ..]), plus hmask bits 2c and 2c+1;
// scales 4c .. 4c+3: low nibbles c/2 of scales[4(c%2) ..], high bits 2c of scales[8 ..].
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = row16 + (u >> 2) * 55, c = u & 3, s0 = 4 * (c & 1), Q[8], H[8];
  uvec4 lo4 = (uvec4(u32_at16(b + 48 + 2 * (c & 1))) >> (uvec4(0, 8, 16, 24) + 4 * (c >> 1))) & 15;
  uvec4 hi2 = (uvec4(u32_at16(b + 52)) >> (uvec4(0, 8, 16, 24) + 2 * c)) & 3;
  vec4 dl = f16_at(b + 54) * (vec4(lo4 | (hi2 << 4)) - 32.0);
  span(b + 16 + 16 * (c >> 1), 8, Q);
  span(b, 8, H);
  for (uint i = 0; i < 8; ++i) {
    v[i] = (bits4(Q[i], s0, 3) + bits4(H[i], 2 * c, 1) * 4.0 - 4.0) * dl[i >> 2];
    v[8 + i] = (bits4(Q[i], s0 + 2, 3) + bits4(H[i], 2 * c + 1, 1) * 4.0 - 4.0) * dl[2 + (i >> 2)];
  }
}

#elif defined(WTYPE_IQ4_XS)
// Unit u = sub-blocks 2c and 2c+1 (c = u % 4) of super-block u / 4: qs words 8c .. 8c+7.
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = (row16 >> 1) + (u >> 2) * 34, c = u & 3;
  float dl0 = iq4_xs_scale(b, 2 * c), dl1 = iq4_xs_scale(b, 2 * c + 1);
  for (uint i = 0; i < 4; ++i) {
    uint q0 = w32[b + 2 + 8 * c + i], q1 = w32[b + 6 + 8 * c + i];
    v[i] = iq4_4(q0, 0) * dl0;
    v[4 + i] = iq4_4(q0, 4) * dl0;
    v[8 + i] = iq4_4(q1, 0) * dl1;
    v[12 + i] = iq4_4(q1, 4) * dl1;
  }
}

#elif defined(WTYPE_IQ3_S)
// Unit u = sub-blocks 2c and 2c+1 (c = u % 4) of super-block u / 4: groups g = 8c .. 8c+7, their
// qs bytes 16c .., qh bytes 2c, 2c+1, sign bytes 8c .. and scale byte c.
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint b = row16 + (u >> 2) * 55, c = u & 3, Q[8], S[8];
  float d = f16_at(b);
  span(b + 1 + 8 * c, 4, Q);
  span(b + 37 + 4 * c, 2, S);
  uint qh = u16_at(b + 33 + c), sc = u16_at(b + 53 + (c >> 1)) >> (8 * (c & 1));
  for (uint g = 0; g < 8; ++g) {
    uint half_ = g >> 2;  // which sub-block of the two
    float db = d * float(1 + 2 * ((sc >> (4 * half_)) & 15));
    iq3s_group(Q[g >> 1] >> (16 * (g & 1)), qh >> (8 * half_), g & 3, S[g >> 2] >> (8 * (g & 3)), db, v[2 * g],
               v[2 * g + 1]);
  }
}

#elif defined(WTYPE_F32)
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint i = (row16 >> 1) + 32 * u;
  for (uint j = 0; j < 8; ++j) {
    uint k = i + 4 * j;
    v[j] = uintBitsToFloat(ALIGNED ? w128[k >> 2] : uvec4(w32[k], w32[k + 1], w32[k + 2], w32[k + 3]));
  }
}

#elif defined(WTYPE_F16) || defined(WTYPE_BF16)
void dequant_unit(uint row16, uint u, out vec4 v[UNIT / 4]) {
  uint i = row16 + 32 * u;
  for (uint j = 0; j < 4; ++j) {
    uint k = i + 8 * j;
    uvec4 w = ALIGNED ? w128[k >> 3] : uvec4(u_pair(k), u_pair(k + 2), u_pair(k + 4), u_pair(k + 6));
    v[2 * j] = vec4(pair(w.x), pair(w.y));
    v[2 * j + 1] = vec4(pair(w.z), pair(w.w));
  }
}
#endif

#endif
