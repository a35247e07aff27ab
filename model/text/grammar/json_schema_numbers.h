// Numbers within bounds as grammar text, for JSON Schema's minimum/maximum (and the exclusive
// forms): decimal integers without leading zeros, built digit by digit ([lo, hi] over numbers of
// one length is a few alternatives of digit ranges), and decimals (an integer part in range, then
// a fraction only where it keeps the value in range). Used by json_schema_grammar.cpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace vkllm::grammar {

struct NumberBound {
  int64_t value;
  bool exclusive = false;
};

// GBNF for an integer x with lo <= x <= hi (none: unbounded), e.g. "-"? digits. Empty string when
// no integer fits.
std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);
// GBNF for a decimal (no exponent) within integer bounds, each inclusive or exclusive.
std::string number_range_gbnf(std::optional<NumberBound> lo, std::optional<NumberBound> hi);

}  // namespace vkllm::grammar
