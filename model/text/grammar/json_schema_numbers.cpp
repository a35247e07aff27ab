// Digit-by-digit range grammars for integers and bounded decimals.
#include "text/grammar/json_schema_numbers.h"

#include <fmt/format.h>
#include <vector>

namespace vkllm::grammar {

namespace {

constexpr size_t kMaxDigits = 19;  // an unbounded magnitude has at most this many digits
const char* const kFraction = "(\".\" [0-9]{1,16})";
const char* const kNonZeroFraction = "(\".\" [0-9]{0,15} [1-9] [0-9]{0,15})";
const char* const kZeroFraction = "(\".\" \"0\"{1,16})";

std::string join(const std::vector<std::string>& parts) {
  if (parts.empty()) return "";
  if (parts.size() == 1) return parts[0];
  std::string out = "(";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " | " : "") + parts[i];
  return out + ")";
}

std::string digit_range(char lo, char hi) {
  return lo == hi ? fmt::format("\"{}\"", lo) : fmt::format("[{}-{}]", lo, hi);
}

// Decimal strings of equal length, lo <= hi: the strings between them.
std::string same_length(const std::string& lo, const std::string& hi) {
  if (lo.empty()) return "";
  if (lo == hi) return fmt::format("\"{}\"", lo);
  size_t rest = lo.size() - 1;
  if (lo[0] == hi[0]) return fmt::format("\"{}\" {}", lo[0], same_length(lo.substr(1), hi.substr(1)));
  bool lo_zeros = lo.find_first_not_of('0', 1) == std::string::npos;
  bool hi_nines = hi.find_first_not_of('9', 1) == std::string::npos;
  std::string any_rest = rest ? fmt::format(" [0-9]{{{}}}", rest) : "";
  std::vector<std::string> alts;
  char first = lo_zeros ? lo[0] : char(lo[0] + 1), last = hi_nines ? hi[0] : char(hi[0] - 1);
  if (!lo_zeros) alts.push_back(fmt::format("\"{}\" {}", lo[0], same_length(lo.substr(1), std::string(rest, '9'))));
  if (first <= last) alts.push_back(digit_range(first, last) + any_rest);
  if (!hi_nines) alts.push_back(fmt::format("\"{}\" {}", hi[0], same_length(std::string(rest, '0'), hi.substr(1))));
  return join(alts);
}

std::string pow10_string(size_t digits) { return "1" + std::string(digits - 1, '0'); }

// Non-negative integers in [lo, hi] (hi none: unbounded, up to kMaxDigits digits).
std::string magnitude_range(uint64_t lo, std::optional<uint64_t> hi) {
  if (hi && *hi < lo) return "";
  std::string a = std::to_string(lo);
  std::vector<std::string> alts;
  size_t last_len = hi ? std::to_string(*hi).size() : kMaxDigits;
  for (size_t len = a.size(); len <= last_len; ++len) {
    std::string from = len == a.size() ? a : pow10_string(len);
    if (!hi && len > a.size()) {  // every longer number: one alternative for all lengths
      alts.push_back(fmt::format("[1-9] [0-9]{{{},{}}}", len - 1, kMaxDigits - 1));
      break;
    }
    std::string to = hi && len == last_len ? std::to_string(*hi) : std::string(len, '9');
    alts.push_back(same_length(from, to));
  }
  return join(alts);
}

uint64_t magnitude(int64_t v) { return v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v); }

// Decimals m >= 0 (integer part, optional fraction) with m_lo <= m (or <) and m <= m_hi (or <).
std::string decimal_magnitude(uint64_t lo, bool lo_excl, std::optional<uint64_t> hi, bool hi_excl) {
  std::vector<std::string> alts;
  std::string at_lo = fmt::format("\"{}\" {}", lo, lo_excl ? kNonZeroFraction : std::string(kFraction) + "?");
  if (!hi) {
    alts.push_back(at_lo);
    if (lo < UINT64_MAX) alts.push_back(magnitude_range(lo + 1, std::nullopt) + " " + kFraction + "?");
    return join(alts);
  }
  if (lo > *hi || (lo == *hi && (lo_excl || hi_excl))) return "";
  if (lo == *hi) return fmt::format("\"{}\" {}?", lo, kZeroFraction);
  alts.push_back(at_lo);
  if (*hi - lo >= 2) alts.push_back(magnitude_range(lo + 1, *hi - 1) + " " + kFraction + "?");
  if (!hi_excl) alts.push_back(fmt::format("\"{}\" {}?", *hi, kZeroFraction));
  return join(alts);
}

}  // namespace

std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  if (lo && hi && *lo > *hi) return "";
  std::vector<std::string> alts;
  if (!lo || *lo < 0) {  // negative part: magnitudes from max(1, -hi) to -lo
    uint64_t m_lo = hi && *hi < 0 ? magnitude(*hi) : 1;
    std::optional<uint64_t> m_hi;
    if (lo) m_hi = magnitude(*lo);
    alts.push_back("\"-\" " + magnitude_range(m_lo, m_hi));
  }
  if (!hi || *hi >= 0) {
    uint64_t m_lo = lo && *lo > 0 ? uint64_t(*lo) : 0;
    std::optional<uint64_t> m_hi;
    if (hi) m_hi = uint64_t(*hi);
    alts.push_back(magnitude_range(m_lo, m_hi));
  }
  return join(alts);
}

std::string number_range_gbnf(std::optional<NumberBound> lo, std::optional<NumberBound> hi) {
  std::vector<std::string> alts;
  // x >= 0: magnitudes from max(lo, 0) to hi.
  if (!hi || hi->value >= 0) {
    bool from_lo = lo && lo->value >= 0;
    std::optional<uint64_t> m_hi;
    if (hi) m_hi = uint64_t(hi->value);
    std::string s =
        decimal_magnitude(from_lo ? uint64_t(lo->value) : 0, from_lo && lo->exclusive, m_hi, hi && hi->exclusive);
    if (!s.empty()) alts.push_back(s);
  }
  // x < 0, x = -m: m from max(-hi, 0) to -lo.
  if (!lo || lo->value < 0) {
    bool from_hi = hi && hi->value < 0;
    std::optional<uint64_t> m_hi;
    if (lo) m_hi = magnitude(lo->value);
    std::string s =
        decimal_magnitude(from_hi ? magnitude(hi->value) : 0, from_hi && hi->exclusive, m_hi, lo && lo->exclusive);
    if (!s.empty()) alts.push_back("\"-\" " + s);
  }
  return join(alts);
}

}  // namespace vkllm::grammar
