// Code-point ranges as UTF-8 byte sequences: the grammar engine matches bytes, so that a token
// holding half of a character is judged by the bytes it has. [U+0080, U+07FF] becomes
// [C2-DF][80-BF]; a range whose ends differ in more than the last byte is split until every piece
// is a sequence of byte ranges. Surrogates (U+D800..U+DFFF) are not characters and are left out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm::grammar {

struct ByteRange {
  uint8_t lo, hi;
  bool operator==(const ByteRange&) const = default;
};

struct CodeRange {
  uint32_t lo, hi;  // inclusive
};

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// Sorted, merged, in [0, kMaxCodePoint]; `negate` takes the complement.
std::vector<CodeRange> normalize(std::vector<CodeRange> ranges, bool negate);

// The byte sequences (each 1..4 byte ranges) that spell exactly the characters in [lo, hi].
std::vector<std::vector<ByteRange>> utf8_sequences(uint32_t lo, uint32_t hi);

// The UTF-8 encoding of one code point (no surrogates, at most kMaxCodePoint).
std::vector<uint8_t> utf8_encode(uint32_t cp);
// The code points of UTF-8 text (loosely: overlong forms pass); nothing for broken sequences.
std::optional<std::vector<uint32_t>> utf8_decode(std::string_view s);
// One code point as GBNF class text: \xNN for ASCII (so that ] ^ - \ need no care), else itself.
std::string class_char(uint32_t cp);

}  // namespace vkllm::grammar
