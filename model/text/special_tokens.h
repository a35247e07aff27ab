// SpecialTokens: splits the special tokens out of a text before it is encoded, with the result of
// llama.cpp's tokenizer_st_partition (docs/formats.md §4.2): each special token in turn, longest
// text first, takes every occurrence left in the text still unsplit, leftmost first. Done in one
// scan for all of them (the texts are found by a hash per candidate length, after a two-byte
// filter) instead of one search of the whole text per special token.
#pragma once
#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/token_index.h"

namespace vkllm {

// A run of text still to encode, or a special token found.
struct TextFragment {
  std::string_view text;
  int32_t token = -1;
};

struct SpecialToken {
  int32_t id;
  std::string text;
  bool control;  // matched only with parse_special (control and unknown tokens; user-defined always)
  bool rstrip;   // the whitespace after it is dropped (llama.cpp's RSTRIP attribute, Phi-3)
};

class SpecialTokens {
 public:
  SpecialTokens() = default;
  // Tokens with an empty text are left out; the order of the rest is the order they are tried in.
  explicit SpecialTokens(std::vector<SpecialToken> tokens);

  // The fragments of `text` in order; runs of text are never empty.
  std::vector<TextFragment> split(std::string_view text, bool parse_special) const;

 private:
  struct Group {
    size_t length;
    TokenIndex index;           // text -> position in ranks
    std::vector<int32_t> rank;  // priority of each text of this length (index into tokens_)
  };
  struct Occurrence {
    int32_t rank;
    size_t at;
  };
  std::vector<Occurrence> occurrences(std::string_view text, bool parse_special) const;
  size_t next_lead(std::string_view text, size_t i) const;  // the next byte some text starts with

  std::vector<SpecialToken> tokens_;  // in priority order
  std::vector<Group> groups_;
  std::bitset<65536> first2_;     // the first two bytes of some text of length >= 2
  std::bitset<256> first1_;       // a text of length 1
  std::array<bool, 256> lead_{};  // the first byte of some text
  int single_lead_ = -1;          // the one first byte of all texts, or -1
};

}  // namespace vkllm
