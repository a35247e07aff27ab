// Splitting code-point ranges into UTF-8 byte-range sequences (as regex engines compile classes).
#include "text/grammar/utf8_ranges.h"

#include <algorithm>

namespace vkllm::grammar {

std::vector<CodeRange> normalize(std::vector<CodeRange> ranges, bool negate) {
  for (CodeRange& r : ranges) r.hi = std::min(r.hi, kMaxCodePoint);
  std::erase_if(ranges, [](const CodeRange& r) { return r.lo > r.hi; });
  std::sort(ranges.begin(), ranges.end(), [](const CodeRange& a, const CodeRange& b) { return a.lo < b.lo; });
  std::vector<CodeRange> merged;
  for (const CodeRange& r : ranges) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1)
      merged.back().hi = std::max(merged.back().hi, r.hi);
    else
      merged.push_back(r);
  }
  if (!negate) return merged;
  std::vector<CodeRange> out;
  uint32_t next = 0;
  for (const CodeRange& r : merged) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

std::vector<uint8_t> utf8_encode(uint32_t cp) {
  if (cp < 0x80) return {uint8_t(cp)};
  if (cp < 0x800) return {uint8_t(0xC0 | cp >> 6), uint8_t(0x80 | (cp & 0x3F))};
  if (cp < 0x10000) return {uint8_t(0xE0 | cp >> 12), uint8_t(0x80 | (cp >> 6 & 0x3F)), uint8_t(0x80 | (cp & 0x3F))};
  return {uint8_t(0xF0 | cp >> 18), uint8_t(0x80 | (cp >> 12 & 0x3F)), uint8_t(0x80 | (cp >> 6 & 0x3F)),
          uint8_t(0x80 | (cp & 0x3F))};
}

namespace {

size_t encoded_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

// [lo, hi] with both ends of the same encoded length: split until, in every piece, the bytes
// after the first that differ run over their whole range (then byte-wise ranges are exact).
void split_same_length(uint32_t lo, uint32_t hi, std::vector<std::vector<ByteRange>>& out) {
  size_t n = encoded_length(lo);
  for (size_t i = 1; i < n; ++i) {
    uint32_t max = (1u << (6 * i)) - 1;  // the low i continuation bytes
    if ((lo & ~max) == (hi & ~max)) continue;
    if ((lo & max) != 0) {
      split_same_length(lo, lo | max, out);
      split_same_length((lo | max) + 1, hi, out);
      return;
    }
    if ((hi & max) != max) {
      split_same_length(lo, (hi & ~max) - 1, out);
      split_same_length(hi & ~max, hi, out);
      return;
    }
  }
  std::vector<uint8_t> a = utf8_encode(lo), b = utf8_encode(hi);
  std::vector<ByteRange> seq;
  for (size_t i = 0; i < n; ++i) seq.push_back({a[i], b[i]});
  out.push_back(std::move(seq));
}

}  // namespace

std::vector<std::vector<ByteRange>> utf8_sequences(uint32_t lo, uint32_t hi) {
  std::vector<std::vector<ByteRange>> out;
  hi = std::min(hi, kMaxCodePoint);
  // Pieces that stay within one encoded length and avoid the surrogates.
  const CodeRange parts[] = {{0, 0x7F}, {0x80, 0x7FF}, {0x800, 0xD7FF}, {0xE000, 0xFFFF}, {0x10000, kMaxCodePoint}};
  for (const CodeRange& p : parts) {
    uint32_t a = std::max(lo, p.lo), b = std::min(hi, p.hi);
    if (a <= b) split_same_length(a, b, out);
  }
  return out;
}

std::optional<std::vector<uint32_t>> utf8_decode(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    uint8_t c = uint8_t(s[i]);
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!n || i + size_t(n) > s.size()) return std::nullopt;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) {
      if ((uint8_t(s[i + size_t(k)]) & 0xC0) != 0x80) return std::nullopt;
      cp = cp << 6 | (uint8_t(s[i + size_t(k)]) & 0x3F);
    }
    out.push_back(cp);
    i += size_t(n);
  }
  return out;
}

std::string class_char(uint32_t cp) {
  if (cp < 0x80) {
    static const char* const hex = "0123456789ABCDEF";
    return std::string("\\x") + hex[cp >> 4] + hex[cp & 15];
  }
  std::string out;
  for (uint8_t b : utf8_encode(cp)) out += char(b);
  return out;
}

}  // namespace vkllm::grammar
