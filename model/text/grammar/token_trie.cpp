// Building the preorder token trie from the sorted token bytes.
#include "text/grammar/token_trie.h"

#include <algorithm>

#include "text/tokenizer.h"

namespace vkllm::grammar {

namespace {

constexpr size_t kMaxTokenBytes = 65535;  // depth is stored in 16 bits; no real token comes close

// UTF-8 validity as a DFA over bytes: 0 at a character boundary; 1-3 that many continuation bytes
// due; 4 after E0 (A0-BF next), 5 after ED (80-9F), 6 after F0 (90-BF), 7 after F4 (80-8F); 8 invalid.
constexpr uint8_t kInvalid = 8;

uint8_t utf8_step(uint8_t q, uint8_t b) {
  auto in = [&](int lo, int hi) { return b >= lo && b <= hi; };
  switch (q) {
    case 0:
      if (b < 0x80) return 0;
      if (in(0xC2, 0xDF)) return 1;
      if (b == 0xE0) return 4;
      if (b == 0xED) return 5;
      if (in(0xE1, 0xEF)) return 2;
      if (b == 0xF0) return 6;
      if (b == 0xF4) return 7;
      return in(0xF1, 0xF3) ? 3 : kInvalid;
    case 1:
    case 2:
    case 3:
      return in(0x80, 0xBF) ? uint8_t(q - 1) : kInvalid;
    case 4:
      return in(0xA0, 0xBF) ? 1 : kInvalid;
    case 5:
      return in(0x80, 0x9F) ? 1 : kInvalid;
    case 6:
      return in(0x90, 0xBF) ? 2 : kInvalid;
    case 7:
      return in(0x80, 0x8F) ? 2 : kInvalid;
    default:
      return kInvalid;
  }
}

}  // namespace

TokenTrie::TokenTrie(const Tokenizer& tok) {
  uint32_t n = tok.vocab_size();
  text_.resize(n);
  eog_flag_.resize(n, false);
  for (int32_t id : tok.end_of_generation()) eog_flag_[size_t(id)] = true, eog_.push_back(id);
  std::vector<int32_t> order;
  for (uint32_t i = 0; i < n; ++i) {
    int32_t id = int32_t(i);
    TokenType type = tok.type(id);
    if (eog_flag_[i] || type == TokenType::Control || type == TokenType::Unknown || type == TokenType::Unused) continue;
    std::string piece = tok.piece(id);
    if (piece.empty() || piece.size() > kMaxTokenBytes) continue;
    text_[i] = std::move(piece);
    order.push_back(id);
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    int c = text_[size_t(a)].compare(text_[size_t(b)]);
    return c < 0 || (c == 0 && a < b);
  });
  std::vector<uint32_t> path;  // nodes of the previous token's bytes
  const std::string* prev = nullptr;
  for (int32_t id : order) {
    const std::string& t = text_[size_t(id)];
    size_t common = 0;
    if (prev)
      while (common < prev->size() && common < t.size() && (*prev)[common] == t[common]) ++common;
    while (path.size() > common) end_[path.back()] = uint32_t(byte_.size()), path.pop_back();
    for (size_t k = common; k < t.size(); ++k) {
      path.push_back(uint32_t(byte_.size()));
      byte_.push_back(uint8_t(t[k]));
      depth_.push_back(uint16_t(k + 1));
      end_.push_back(0);
      first_.push_back(uint32_t(ids_.size()));
    }
    ids_.push_back(id);  // the last node made (or the same node, for a duplicate text)
    max_depth_ = std::max(max_depth_, t.size());
    prev = &t;
  }
  while (!path.empty()) end_[path.back()] = uint32_t(byte_.size()), path.pop_back();
  first_.push_back(uint32_t(ids_.size()));
  summarize();
  text_bits_.assign((n + 63) / 64, 0);
  for (int32_t id : order) text_bits_[size_t(id) >> 6] |= uint64_t(1) << (id & 63);
}

// Byte summaries of the big subtrees, UTF-8 validity and character heights, children before
// parents (a reverse preorder scan). valid[i]: the UTF-8 states (bits) from which every path
// below node i stays valid.
void TokenTrie::summarize() {
  summaries_.push_back({~0ull, ~0ull, ~0ull, ~0ull});
  summary_of_.assign(byte_.size(), 0);
  utf8_ok_.assign(byte_.size(), 0);
  chars_below_.assign(byte_.size(), 0);
  std::vector<std::array<uint64_t, 4>> below(byte_.size());  // scratch, freed at the end
  std::vector<uint16_t> valid(byte_.size(), 0x1FF);
  for (size_t i = byte_.size(); i-- > 0;) {
    for (size_t c = i + 1; c < end_[i]; c = end_[c]) {
      for (int w = 0; w < 4; ++w) below[i][size_t(w)] |= below[c][size_t(w)];
      below[i][byte_[c] >> 6] |= uint64_t(1) << (byte_[c] & 63);
      uint16_t v = 0;
      for (uint8_t q = 0; q < kInvalid; ++q)
        if (uint8_t r = utf8_step(q, byte_[c]); r != kInvalid && (valid[c] >> r & 1)) v |= uint16_t(1) << q;
      valid[i] &= v;
      bool starts = byte_[c] < 0x80 || byte_[c] >= 0xC0;  // a character's first byte
      chars_below_[i] = uint8_t(std::min<uint32_t>(255, std::max<uint32_t>(chars_below_[i], chars_below_[c] + starts)));
    }
    utf8_ok_[i] = valid[i] & 1;
    if (end_[i] - i > kSummaryMinNodes) {
      summary_of_[i] = uint32_t(summaries_.size());
      summaries_.push_back(below[i]);
    }
  }
}

const std::array<uint64_t, 4>& TokenTrie::bytes_below(size_t node) const { return summaries_[summary_of_[node]]; }

}  // namespace vkllm::grammar
