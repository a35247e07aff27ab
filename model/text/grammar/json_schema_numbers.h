// Numbers within bounds as grammar text, for JSON Schema's minimum/maximum (and the exclusive
// forms): decimal integers without leading zeros, built digit by digit ([lo, hi] over numbers of
// one length is a few alternatives of digit ranges), and decimals whose bounds are decimals too
// (an integer part in range, then a fraction compared digit by digit where the integer part
// equals a bound's). Bounds are exact decimals read from the schema's numbers, so 1.1 is 1.1 and
// not the double nearest to it. Used by json_schema_grammar.cpp and json_schema_node.cpp.
#pragma once
#include <compare>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace vkllm::grammar {

// A decimal number: sign, integer part, fraction digits (no trailing zeros). Magnitudes up to
// 1e18 (what the grammar's numbers can reach); larger ones are `huge`.
struct Decimal {
  bool negative = false;  // never set for zero
  uint64_t whole = 0;
  std::string fraction;  // digits after the point, without trailing zeros
  bool huge = false;     // |x| >= 1e18: beyond every number the grammar writes

  // From a JSON number (its shortest decimal text for floats); nothing for other values.
  static std::optional<Decimal> of(const nlohmann::ordered_json& v);
  bool is_integer() const { return fraction.empty() && !huge; }
  std::string text() const;  // "-12.5"
};
std::strong_ordering operator<=>(const Decimal& a, const Decimal& b);
inline bool operator==(const Decimal& a, const Decimal& b) { return (a <=> b) == 0; }

struct NumberBound {
  Decimal value;
  bool exclusive = false;
};

// Whether x satisfies a lower (or upper) bound.
bool above(const Decimal& x, const NumberBound& lo);
bool below(const Decimal& x, const NumberBound& hi);

// The tightest of two lower (or upper) bounds.
std::optional<NumberBound> tighter_lower(std::optional<NumberBound> a, std::optional<NumberBound> b);
std::optional<NumberBound> tighter_upper(std::optional<NumberBound> a, std::optional<NumberBound> b);

// Integer bounds from decimal ones (rounded inwards); false when no integer fits a huge bound.
bool integer_bounds(const std::optional<NumberBound>& lo, const std::optional<NumberBound>& hi,
                    std::optional<int64_t>& ilo, std::optional<int64_t>& ihi);

// GBNF for an integer x with lo <= x <= hi (none: unbounded), e.g. "-"? digits. Empty string when
// no integer fits.
std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);
// GBNF for a decimal (no exponent, at most 16 fraction digits) within decimal bounds, each
// inclusive or exclusive. Empty string when none fits.
std::string number_range_gbnf(std::optional<NumberBound> lo, std::optional<NumberBound> hi);

}  // namespace vkllm::grammar
