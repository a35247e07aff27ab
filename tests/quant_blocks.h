// One hand-made block of each weight type with values worked out by hand from docs/formats.md §2, so the
// byte layouts are proven independently of any quantiser (used by test_quant and test_get_rows).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "dtype.h"

namespace vkllm::test {

struct HandBlock {
  DType type;
  std::vector<uint8_t> bytes;                 // one block (or a few values of a float type)
  std::vector<std::pair<int, float>> expect;  // (value index, exact value)
};

inline void put_u16(std::vector<uint8_t>& b, size_t at, uint16_t v) { b[at] = uint8_t(v), b[at + 1] = uint8_t(v >> 8); }

// Q4_0, Q4_1, Q5_0, Q8_0 and the plain float types.
inline void add_legacy_blocks(std::vector<HandBlock>& out) {
  {  // Q4_0: d = 0.5; qs[j] = j | (15-j) << 4, so y[j] = (j-8)/2 and y[j+16] = (7-j)/2.
    std::vector<uint8_t> b(18);
    put_u16(b, 0, 0x3800);
    for (int j = 0; j < 16; ++j) b[2 + j] = uint8_t(j | (15 - j) << 4);
    out.push_back({DType::Q4_0, b, {{0, -4}, {3, -2.5}, {15, 3.5}, {16, 3.5}, {31, -4}}});
  }
  {  // Q4_1: d = 0.25, m = -1; same nibbles: y[j] = j/4 - 1, y[j+16] = (15-j)/4 - 1.
    std::vector<uint8_t> b(20);
    put_u16(b, 0, 0x3400), put_u16(b, 2, 0xBC00);
    for (int j = 0; j < 16; ++j) b[4 + j] = uint8_t(j | (15 - j) << 4);
    out.push_back({DType::Q4_1, b, {{0, -1}, {5, 0.25}, {16, 2.75}, {31, -1}}});
  }
  {  // Q5_0: d = 1; qh bits 0 and 31 set; qs[15] = 0xF7, others 0.
    std::vector<uint8_t> b(22);
    put_u16(b, 0, 0x3C00);
    b[2] = 0x01, b[5] = 0x80, b[6 + 15] = 0xF7;
    // y0 = (0|16)-16, y1 = -16, y15 = 7-16, y16 = -16, y31 = (15|16)-16.
    out.push_back({DType::Q5_0, b, {{0, 0}, {1, -16}, {15, -9}, {16, -16}, {31, 15}}});
  }
  {  // Q8_0: d = 2; qs[j] = j - 16 as int8.
    std::vector<uint8_t> b(34);
    put_u16(b, 0, 0x4000);
    for (int j = 0; j < 32; ++j) b[2 + j] = uint8_t(int8_t(j - 16));
    out.push_back({DType::Q8_0, b, {{0, -32}, {16, 0}, {31, 30}}});
  }
  {  // F16: 1, -2, 2^-24 (smallest subnormal), 65504 (largest finite).
    std::vector<uint8_t> b(8);
    put_u16(b, 0, 0x3C00), put_u16(b, 2, 0xC000), put_u16(b, 4, 0x0001), put_u16(b, 6, 0x7BFF);
    out.push_back({DType::F16, b, {{0, 1}, {1, -2}, {2, 5.9604644775390625e-8f}, {3, 65504}}});
  }
  {  // BF16: the top halves of f32 1.0 and -5.0.
    std::vector<uint8_t> b(4);
    put_u16(b, 0, 0x3F80), put_u16(b, 2, 0xC0A0);
    out.push_back({DType::BF16, b, {{0, 1}, {1, -5}}});
  }
}

// Q4_K, Q5_K, Q6_K.
inline void add_k_blocks(std::vector<HandBlock>& out) {
  // Q4_K / Q5_K: d = 1, dmin = 0.5; scale bytes giving sc = {1,2,3,4,17,0,0,15}, mn = {5,6,7,8,2,0,0,51}
  // (sc4 = 1 | (s[0]>>6)<<4 = 17, mn7 = 3 | (s[7]>>6)<<4 = 51); qs[32c+l] = (l%16) | (15 - l%16) << 4.
  auto k4 = [](bool five) {
    std::vector<uint8_t> b(five ? 176 : 144);
    put_u16(b, 0, 0x3C00), put_u16(b, 2, 0x3800);
    const uint8_t s[12] = {0x41, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xC8, 0x21, 0x00, 0x00, 0x3F};
    for (int i = 0; i < 12; ++i) b[4 + i] = s[i];
    size_t qs = five ? 48 : 16;
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) b[qs + 32 * c + l] = uint8_t((l % 16) | (15 - l % 16) << 4);
    if (five) b[16 + 1] = 0x02, b[16 + 31] = 0x80;  // qh[1] bit 1 (sub-block 1), qh[31] bit 7
    return b;
  };
  // e=0: 1·0 - 0.5·5; e=33 (sub-block 1, high nibble 14): 2·14 - 3; e=130 (sub-block 4, low 2): 17·2 - 1;
  // e=224 (sub-block 7, high 15): 15·15 - 25.5; e=255 (high 0): -25.5.
  out.push_back({DType::Q4_K, k4(false), {{0, -2.5}, {33, 25}, {130, 33}, {224, 199.5}, {255, -25.5}}});
  // Q5_K adds 16 to e=33 (qh[1] bit 1) and e=255 (qh[31] bit 7): 2·30 - 3 and 15·16 - 25.5.
  out.push_back({DType::Q5_K, k4(true), {{0, -2.5}, {31, 12.5}, {33, 57}, {130, 33}, {255, 214.5}}});
  {  // Q6_K: d = 0.5, scales[g] = g - 8, ql[k] = k, qh = 0xE4 (2-bit field g holds g).
    std::vector<uint8_t> b(210);
    for (int k = 0; k < 128; ++k) b[k] = uint8_t(k);
    for (int k = 0; k < 64; ++k) b[128 + k] = 0xE4;
    for (int g = 0; g < 16; ++g) b[192 + g] = uint8_t(int8_t(g - 8));
    put_u16(b, 208, 0x3800);
    // e=0: q = 0 → 0.5·-8·-32; e=40: ql[40] low 8 | 1<<4 = 24, scale -6; e=77: ql[13] high 0 | 2<<4 = 32;
    // e=200: ql[72] high 4 | 2<<4 = 36, scale 4; e=255: ql[127] high 7 | 3<<4 = 55, scale 7.
    out.push_back({DType::Q6_K, b, {{0, 128}, {40, 24}, {77, 0}, {200, 8}, {255, 80.5}}});
  }
}

// Q5_1, Q2_K, Q3_K.
inline void add_low_bit_blocks(std::vector<HandBlock>& out) {
  {  // Q5_1: d = 0.5, m = -4; qh bits 0 and 31; qs[j] = j | (15-j) << 4: y[j] = q/2 - 4.
    std::vector<uint8_t> b(24);
    put_u16(b, 0, 0x3800), put_u16(b, 2, 0xC400);
    b[4] = 0x01, b[7] = 0x80;
    for (int j = 0; j < 16; ++j) b[8 + j] = uint8_t(j | (15 - j) << 4);
    // y0 = (0|16)/2 - 4, y1 = 1/2 - 4, y15 = 15/2 - 4, y16 = 15/2 - 4, y31 = (0|16)/2 - 4.
    out.push_back({DType::Q5_1, b, {{0, 4}, {1, -3.5}, {15, 3.5}, {16, 3.5}, {31, 4}}});
  }
  {  // Q2_K: scales[g] = g | (15-g) << 4 (sc = g, mn = 15-g), d = 1, dmin = 0.5; qs = 0xE4 (the
     // 2-bit field at shift 2j holds j) except qs[5] = 0x1B (field j holds 3-j).
    std::vector<uint8_t> b(84);
    for (int g = 0; g < 16; ++g) b[g] = uint8_t(g | (15 - g) << 4);
    for (int k = 0; k < 64; ++k) b[16 + k] = k == 5 ? 0x1B : 0xE4;
    put_u16(b, 80, 0x3C00), put_u16(b, 82, 0x3800);
    // y = sc·q - mn/2, e = 128h + 32j + l: e=0 (g 0, q 0): -7.5; e=40 (g 2, q 1): 2 - 6.5;
    // e=37 (l 5, g 2, q 2): 4 - 6.5; e=101 (l 5, g 6, q 0): -4.5; e=200 (g 12, q 2): 24 - 1.5; e=255: 45.
    out.push_back({DType::Q2_K, b, {{0, -7.5}, {40, -4.5}, {37, -2.5}, {101, -4.5}, {200, 22.5}, {255, 45}}});
  }
  {  // Q3_K: scales S[i] = 4i (scale S - 32), d = 0.5; qs = 0xE4 (low bits j); hmask = 0xFF except
     // hmask[3] = 0 and hmask[7] = 0x0F (bit 4h + j clear: q - 4).
    std::vector<uint8_t> b(110);
    for (int l = 0; l < 32; ++l) b[l] = l == 3 ? 0x00 : l == 7 ? 0x0F : 0xFF;
    for (int k = 0; k < 64; ++k) b[32 + k] = 0xE4;
    const uint8_t s[12] = {0x00, 0x44, 0x88, 0xCC, 0x00, 0x44, 0x88, 0xCC, 0xE4, 0xE4, 0xE4, 0xE4};
    for (int i = 0; i < 12; ++i) b[96 + i] = s[i];
    put_u16(b, 108, 0x3800);
    // e=3 (g 0: -32, q 0-4): 64; e=40 (g 2: -24, q 1): -12; e=99 (l 3, g 6: -8, q 3-4): 4;
    // e=167 (l 7, bit 5 clear, g 10: 8, q 1-4): -12; e=255 (g 15: 28, q 3): 42.
    out.push_back({DType::Q3_K, b, {{3, 64}, {40, -12}, {99, 4}, {167, -12}, {255, 42}}});
  }
}

// IQ4_NL, IQ4_XS, IQ3_S. Table values used: kvalues_iq4nl = {-127, -104, -83, -65, -49, -35, -22,
// -10, 1, 13, 25, 38, 53, 69, 89, 113}; iq3s_grid[8] = 0x01010309, [15] = 0x01010905, [257] =
// 0x05090705, [319] = 0x07070903 (docs/formats.md §2.4).
inline void add_iq_blocks(std::vector<HandBlock>& out) {
  {  // IQ4_NL: d = 0.5; qs[j] = j | (15-j) << 4: y[j] = kv[j]/2, y[j+16] = kv[15-j]/2.
    std::vector<uint8_t> b(18);
    put_u16(b, 0, 0x3800);
    for (int j = 0; j < 16; ++j) b[2 + j] = uint8_t(j | (15 - j) << 4);
    out.push_back({DType::IQ4_NL, b, {{0, -63.5}, {8, 0.5}, {16, 56.5}, {20, 19}, {31, -63.5}}});
  }
  {  // IQ4_XS: d = 0.25; scales_l nibble ib = ib, scales_h = 0xAAA9 (high bits 2, but 1 for ib 0):
     // ls - 32 = ib, except -16 for ib 0; qs[16ib + j] = j | (15-j) << 4.
    std::vector<uint8_t> b(136);
    put_u16(b, 0, 0x3400), put_u16(b, 2, 0xAAA9);
    b[4] = 0x10, b[5] = 0x32, b[6] = 0x54, b[7] = 0x76;
    for (int ib = 0; ib < 8; ++ib)
      for (int j = 0; j < 16; ++j) b[8 + 16 * ib + j] = uint8_t(j | (15 - j) << 4);
    // e=0: -4·kv[0]; e=17: -4·kv[14]; e=37: 0.25·kv[5]; e=200: 1.5·kv[8]; e=255: 1.75·kv[0].
    out.push_back({DType::IQ4_XS, b, {{0, 508}, {17, -356}, {37, -8.75}, {200, 1.5}, {255, -222.25}}});
  }
  {  // IQ3_S: d = 0.5; scales[0] = 0x21 (sub-block 0: 0.5·3, 1: 0.5·5, others 0.5·1); qs[k] = k;
     // qh[0] bit 1 (qs[1] + 256), qh[7] bit 7 (qs[63] + 256); signs[0] = 0x81 (values 0 and 7).
    std::vector<uint8_t> b(110);
    put_u16(b, 0, 0x3800);
    for (int k = 0; k < 64; ++k) b[2 + k] = uint8_t(k);
    b[66] = 0x02, b[73] = 0x80, b[74] = 0x81, b[106] = 0x21;
    // e=0: -1.5·grid[0] byte 0; e=4, 5, 7: 1.5·grid[257] bytes 0, 1, 3 (e=7 negative);
    // e=33: 2.5·grid[8] byte 1; e=63: 2.5·grid[15] byte 3; e=252, 255: 0.5·grid[319] bytes 0, 3.
    out.push_back(
        {DType::IQ3_S, b, {{0, -1.5}, {4, 7.5}, {5, 10.5}, {7, -7.5}, {33, 7.5}, {63, 2.5}, {252, 1.5}, {255, 3.5}}});
  }
}

// MXFP4: doubled E2M1 values {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12} (bit 3 the
// sign), times half the E8M0 scale.
inline void add_mxfp4_block(std::vector<HandBlock>& out) {
  // e = 126: scale 2^-1, half 0.25; qs[j] = j | (15-j) << 4: y[j] = kv[j]/4, y[j+16] = kv[15-j]/4.
  std::vector<uint8_t> b(17);
  b[0] = 126;
  for (int j = 0; j < 16; ++j) b[1 + j] = uint8_t(j | (15 - j) << 4);
  out.push_back({DType::MXFP4,
                 b,
                 {{0, 0}, {1, 0.25}, {5, 1.5}, {7, 3}, {8, 0}, {13, -1.5}, {15, -3}, {16, -3}, {24, 3}, {31, 0}}});
}

inline std::vector<HandBlock> hand_blocks() {
  std::vector<HandBlock> out;
  add_legacy_blocks(out);
  add_k_blocks(out);
  add_low_bit_blocks(out);
  add_iq_blocks(out);
  add_mxfp4_block(out);
  return out;
}

}  // namespace vkllm::test
