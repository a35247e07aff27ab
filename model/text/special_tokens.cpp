// SpecialTokens: all occurrences of all special texts in one scan, then llama.cpp's priority order
// replayed over them (docs/formats.md §4.2).
#include "text/special_tokens.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace vkllm {

namespace {

// C's isspace in the "C" locale, which llama.cpp's RSTRIP uses.
bool is_c_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

uint32_t first_two(std::string_view s) { return uint32_t(uint8_t(s[0])) << 8 | uint8_t(s[1]); }

}  // namespace

SpecialTokens::SpecialTokens(std::vector<SpecialToken> tokens) {
  std::erase_if(tokens, [](const SpecialToken& t) { return t.text.empty(); });
  tokens_ = std::move(tokens);
  std::map<size_t, std::vector<int32_t>> by_length;
  for (size_t r = 0; r < tokens_.size(); ++r) by_length[tokens_[r].text.size()].push_back(int32_t(r));
  for (auto& [length, ranks] : by_length) {
    std::vector<std::string> texts;
    for (int32_t r : ranks) {
      const std::string& t = tokens_[size_t(r)].text;
      texts.push_back(t);
      if (length == 1)
        first1_.set(uint8_t(t[0]));
      else
        first2_.set(first_two(t));
    }
    groups_.push_back({length, TokenIndex(texts), std::move(ranks)});  // ascending lengths
  }
  int leads = 0;
  for (const SpecialToken& t : tokens_) {
    leads += !lead_[uint8_t(t.text[0])];
    lead_[uint8_t(t.text[0])] = true;
    single_lead_ = leads == 1 ? uint8_t(t.text[0]) : -1;
  }
}

size_t SpecialTokens::next_lead(std::string_view text, size_t i) const {
  if (single_lead_ >= 0) {  // often every special token starts with '<': memchr's vector scan
    const void* at = std::memchr(text.data() + i, single_lead_, text.size() - i);
    return at ? size_t(static_cast<const char*>(at) - text.data()) : text.size();
  }
  while (i < text.size() && !lead_[uint8_t(text[i])]) ++i;
  return i;
}

std::vector<SpecialTokens::Occurrence> SpecialTokens::occurrences(std::string_view text, bool parse_special) const {
  std::vector<Occurrence> out;
  for (size_t i = 0; i < text.size(); ++i) {
    i = next_lead(text, i);
    if (i == text.size()) break;
    bool one = first1_[uint8_t(text[i])];
    bool two = i + 1 < text.size() && first2_[first_two(text.substr(i))];
    if (!one && !two) continue;
    for (const Group& g : groups_) {
      if (g.length > text.size() - i) break;
      if (g.length == 1 ? !one : !two) continue;
      int32_t k = g.index.find(text.substr(i, g.length));
      if (k < 0) continue;
      int32_t rank = g.rank[size_t(k)];
      if (parse_special || !tokens_[size_t(rank)].control) out.push_back({rank, i});
    }
  }
  // By priority, then left to right: the order llama.cpp takes them in.
  std::sort(out.begin(), out.end(), [](const Occurrence& a, const Occurrence& b) {
    return a.rank < b.rank || (a.rank == b.rank && a.at < b.at);
  });
  return out;
}

std::vector<TextFragment> SpecialTokens::split(std::string_view text, bool parse_special) const {
  std::vector<TextFragment> out;
  if (text.empty()) return out;
  std::vector<Occurrence> occ = occurrences(text, parse_special);
  if (occ.empty()) {
    out.push_back({text});
    return out;
  }
  std::map<size_t, size_t> raw{{0, text.size()}};  // begin -> end of each run still unsplit
  std::map<size_t, int32_t> taken;                 // where a special token was taken -> its id
  for (const Occurrence& o : occ) {
    const SpecialToken& t = tokens_[size_t(o.rank)];
    auto it = raw.upper_bound(o.at);  // the run holding o.at, if any, is the one before
    if (it == raw.begin()) continue;
    --it;
    auto [begin, end] = *it;
    size_t after = o.at + t.text.size();
    if (after > end) continue;  // not inside one run: overlaps a token taken before
    raw.erase(it);
    if (o.at > begin) raw.emplace(begin, o.at);
    if (t.rstrip)
      while (after < end && is_c_space(text[after])) ++after;
    if (after < end) raw.emplace(after, end);
    taken.emplace(o.at, t.id);
  }
  auto r = raw.begin();
  auto s = taken.begin();
  while (r != raw.end() || s != taken.end()) {
    if (s == taken.end() || (r != raw.end() && r->first < s->first)) {
      out.push_back({text.substr(r->first, r->second - r->first)});
      ++r;
    } else {
      out.push_back({{}, s->second});
      ++s;
    }
  }
  return out;
}

}  // namespace vkllm
