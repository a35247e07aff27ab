// Digit-by-digit range grammars for integers and bounded decimals, and the exact decimals they
// compare against.
#include "text/grammar/json_schema_numbers.h"

#include <fmt/format.h>
#include <vector>

namespace vkllm::grammar {

namespace {

constexpr size_t kMaxDigits = 19;                   // an unbounded magnitude has at most this many digits
constexpr size_t kFractionDigits = 16;              // the most fraction digits a bounded decimal writes
constexpr uint64_t kHuge = 1000000000000000000ull;  // 1e18
const char* const kFraction = "(\".\" [0-9]{1,16})";

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

std::string pow10_string(size_t digits) {
  std::string s(digits, '0');
  s[0] = '1';
  return s;
}

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

// --- fractions: digit strings D (the digits after the point) with lo <= 0.D <= hi, the bounds
// given by their digits (none: unbounded; "" is zero), each strict or not.

using Digits = std::optional<std::string>;

bool zero_fits(const Digits& lo, bool lo_strict, const Digits& hi, bool hi_strict) {
  return (!lo || (lo->empty() && !lo_strict)) && (!hi || !(hi->empty() && hi_strict));
}

std::optional<std::string> digits_between(const Digits& lo, bool ls, const Digits& hi, bool hs, size_t k);

// Zero or more digits (at most k) within the bounds.
std::optional<std::string> maybe_digits(const Digits& lo, bool ls, const Digits& hi, bool hs, size_t k) {
  std::optional<std::string> more = k ? digits_between(lo, ls, hi, hs, k) : std::nullopt;
  bool empty = zero_fits(lo, ls, hi, hs);
  if (!more) return empty ? std::optional<std::string>("\"\"") : std::nullopt;
  return empty ? "( " + *more + " )?" : *more;
}

Digits rest(const Digits& d) { return d ? Digits(d->empty() ? "" : d->substr(1)) : std::nullopt; }

// One to k digits within the bounds.
std::optional<std::string> digits_between(const Digits& lo, bool ls, const Digits& hi, bool hs, size_t k) {
  if (hi && hi->empty() && hs) return std::nullopt;  // below zero
  bool lo_free = !lo || (lo->empty() && !ls);
  if (lo_free && !hi) return fmt::format("[0-9]{{1,{}}}", k);
  char a = lo && !lo->empty() ? (*lo)[0] : '0', b = hi ? (hi->empty() ? '0' : (*hi)[0]) : '9';
  Digits lo_rest = lo_free ? std::nullopt : rest(lo);
  std::vector<std::string> alts;
  auto add = [&](char d, std::optional<std::string> tail) {
    if (tail) alts.push_back(fmt::format("\"{}\" {}", d, *tail));
  };
  if (a == b) {
    add(a, maybe_digits(lo_rest, ls, rest(hi), hs, k - 1));
  } else {
    add(a, maybe_digits(lo_rest, ls, std::nullopt, false, k - 1));
    if (b - a >= 2) alts.push_back(digit_range(char(a + 1), char(b - 1)) + fmt::format(" [0-9]{{0,{}}}", k - 1));
    add(b, maybe_digits(std::nullopt, false, rest(hi), hs, k - 1));
  }
  if (alts.empty()) return std::nullopt;
  return join(alts);
}

// The optional fraction of a number whose integer part is fixed: ( "." digits )? within bounds.
std::optional<std::string> fraction_part(const Digits& lo, bool ls, const Digits& hi, bool hs) {
  std::optional<std::string> digits = digits_between(lo, ls, hi, hs, kFractionDigits);
  bool empty = zero_fits(lo, ls, hi, hs);
  if (!digits) return empty ? std::optional<std::string>("") : std::nullopt;
  return fmt::format("( \".\" {} ){}", *digits, empty ? "?" : "");
}

// Decimals m >= 0 with lo <= m (or <) and m <= hi (or <); lo is not negative.
std::string decimal_magnitude(const NumberBound& lo, const std::optional<NumberBound>& hi) {
  if (hi && (lo.value > hi->value || (lo.value == hi->value && (lo.exclusive || hi->exclusive)))) return "";
  uint64_t a = lo.value.whole;
  std::vector<std::string> alts;
  auto at = [&](uint64_t whole, std::optional<std::string> fraction) {
    if (fraction) alts.push_back(fmt::format("\"{}\" {}", whole, *fraction));
  };
  if (hi && hi->value.whole == a) {
    at(a, fraction_part(lo.value.fraction, lo.exclusive, hi->value.fraction, hi->exclusive));
    return join(alts);
  }
  at(a, fraction_part(lo.value.fraction, lo.exclusive, std::nullopt, false));
  if (!hi)
    alts.push_back(magnitude_range(a + 1, std::nullopt) + " " + kFraction + "?");
  else if (hi->value.whole - a >= 2)
    alts.push_back(magnitude_range(a + 1, hi->value.whole - 1) + " " + kFraction + "?");
  if (hi) at(hi->value.whole, fraction_part(std::nullopt, false, hi->value.fraction, hi->exclusive));
  return join(alts);
}

Decimal magnitude_of(const Decimal& d) {
  Decimal m = d;
  m.negative = false;
  return m;
}

}  // namespace

// --- Decimal

std::optional<Decimal> Decimal::of(const nlohmann::ordered_json& v) {
  if (!v.is_number()) return std::nullopt;
  Decimal d;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    d.whole = u, d.huge = u >= kHuge;
    return d;
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    d.whole = magnitude(i), d.negative = i < 0, d.huge = d.whole >= kHuge;
    return d;
  }
  std::string text = v.dump();  // the shortest text that reads back as this double: "1.1", "1e-05"
  size_t i = 0;
  if (text[0] == '-') d.negative = true, i = 1;
  std::string digits;
  long point = -1, exponent = 0;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i)
    if (text[i] == '.')
      point = long(digits.size());
    else
      digits += text[i];
  if (point < 0) point = long(digits.size());
  if (i < text.size()) exponent = std::stol(text.substr(i + 1));
  point += exponent;
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return Decimal{};  // zero (also -0.0)
  if (point > long(first) + 18) {
    d.huge = true;
    return d;
  }
  std::string whole = point > 0 ? digits.substr(0, std::min<size_t>(size_t(point), digits.size())) : "";
  while (point > 0 && whole.size() < size_t(point)) whole += '0';
  d.fraction = point >= 0 ? (size_t(point) < digits.size() ? digits.substr(size_t(point)) : "")
                          : std::string(size_t(-point), '0') + digits;
  while (!d.fraction.empty() && d.fraction.back() == '0') d.fraction.pop_back();
  for (char c : whole) d.whole = d.whole * 10 + uint64_t(c - '0');
  d.huge = d.whole >= kHuge;
  return d;
}

std::string Decimal::text() const {
  if (huge) return negative ? "-1e18" : "1e18";
  return fmt::format("{}{}{}{}", negative ? "-" : "", whole, fraction.empty() ? "" : ".", fraction);
}

std::strong_ordering operator<=>(const Decimal& a, const Decimal& b) {
  if (a.negative != b.negative) return a.negative ? std::strong_ordering::less : std::strong_ordering::greater;
  std::strong_ordering m = std::strong_ordering::equal;  // of the magnitudes
  if (a.huge != b.huge)
    m = a.huge ? std::strong_ordering::greater : std::strong_ordering::less;
  else if (!a.huge && a.whole != b.whole)
    m = a.whole <=> b.whole;
  else if (!a.huge)
    m = a.fraction <=> b.fraction;  // no trailing zeros: text order is value order
  if (!a.negative) return m;
  return m == std::strong_ordering::less      ? std::strong_ordering::greater
         : m == std::strong_ordering::greater ? std::strong_ordering::less
                                              : m;
}

bool above(const Decimal& x, const NumberBound& lo) { return lo.exclusive ? x > lo.value : x >= lo.value; }
bool below(const Decimal& x, const NumberBound& hi) { return hi.exclusive ? x < hi.value : x <= hi.value; }

std::optional<NumberBound> tighter_lower(std::optional<NumberBound> a, std::optional<NumberBound> b) {
  if (!a) return b;
  if (!b) return a;
  if (a->value != b->value) return a->value > b->value ? a : b;
  return NumberBound{a->value, a->exclusive || b->exclusive};
}

std::optional<NumberBound> tighter_upper(std::optional<NumberBound> a, std::optional<NumberBound> b) {
  if (!a) return b;
  if (!b) return a;
  if (a->value != b->value) return a->value < b->value ? a : b;
  return NumberBound{a->value, a->exclusive || b->exclusive};
}

bool integer_bounds(const std::optional<NumberBound>& lo, const std::optional<NumberBound>& hi,
                    std::optional<int64_t>& ilo, std::optional<int64_t>& ihi) {
  ilo.reset(), ihi.reset();
  if (lo && lo->value.huge) {
    if (!lo->value.negative) return false;
  } else if (lo) {
    const Decimal& d = lo->value;
    int64_t w = d.negative ? -int64_t(d.whole) : int64_t(d.whole);
    // ceil, then past the bound itself when it is exclusive and whole
    ilo = d.fraction.empty() ? w + (lo->exclusive ? 1 : 0) : (d.negative ? w : w + 1);
  }
  if (hi && hi->value.huge) {
    if (hi->value.negative) return false;
  } else if (hi) {
    const Decimal& d = hi->value;
    int64_t w = d.negative ? -int64_t(d.whole) : int64_t(d.whole);
    ihi = d.fraction.empty() ? w - (hi->exclusive ? 1 : 0) : (d.negative ? w - 1 : w);
  }
  return true;
}

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
  if (lo && lo->value.huge) {
    if (!lo->value.negative) return "";
    lo.reset();
  }
  if (hi && hi->value.huge) {
    if (hi->value.negative) return "";
    hi.reset();
  }
  const Decimal zero;
  std::vector<std::string> alts;
  // x >= 0: magnitudes from max(lo, 0) to hi.
  if (!hi || below(zero, *hi)) {
    NumberBound m_lo = lo && lo->value >= zero ? *lo : NumberBound{zero, false};
    if (std::string s = decimal_magnitude(m_lo, hi); !s.empty()) alts.push_back(s);
  }
  // x < 0, x = -m with m > 0: m from max(-hi, 0) to -lo.
  if (!lo || lo->value < zero) {
    NumberBound m_lo =
        hi && hi->value < zero ? NumberBound{magnitude_of(hi->value), hi->exclusive} : NumberBound{zero, true};
    std::optional<NumberBound> m_hi;
    if (lo) m_hi = NumberBound{magnitude_of(lo->value), lo->exclusive};
    if (std::string s = decimal_magnitude(m_lo, m_hi); !s.empty()) alts.push_back("\"-\" " + s);
  }
  return join(alts);
}

}  // namespace vkllm::grammar
