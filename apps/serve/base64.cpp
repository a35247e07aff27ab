// Base64 both ways (base64.h).
#include "serve/base64.h"

#include <array>
#include <cstdint>

namespace vkllm::serve {

namespace {

constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Each character's 6 bits; -1 not a digit, -2 skipped (whitespace).
constexpr std::array<int8_t, 256> decode_table() {
  std::array<int8_t, 256> t{};
  for (int8_t& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[uint8_t(kDigits[i])] = int8_t(i);
  t['-'] = 62, t['_'] = 63;
  for (char c : {' ', '\t', '\r', '\n'}) t[uint8_t(c)] = -2;
  return t;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) n |= uint32_t(uint8_t(bytes[i + 2]));
    out += kDigits[n >> 18 & 63];
    out += kDigits[n >> 12 & 63];
    out += i + 1 < bytes.size() ? kDigits[n >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[n & 63] : '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  static constexpr std::array<int8_t, 256> table = decode_table();
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0, n = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] != '='; ++i) {
    int8_t v = table[uint8_t(text[i])];
    if (v == -2) continue;
    if (v < 0) return std::nullopt;
    bits = bits << 6 | uint32_t(v);
    if (++n % 4 == 0) out += char(bits >> 16), out += char(bits >> 8 & 255), out += char(bits & 255), bits = 0;
  }
  if (n % 4 == 1) return std::nullopt;  // 6 bits cannot end a byte
  if (n % 4 == 2) out += char(bits >> 4);
  if (n % 4 == 3) out += char(bits >> 10), out += char(bits >> 2 & 255);
  for (; i < text.size(); ++i)  // only padding and whitespace after the first '='
    if (text[i] != '=' && table[uint8_t(text[i])] != -2) return std::nullopt;
  return out;
}

}  // namespace vkllm::serve
