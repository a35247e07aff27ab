// Building the preorder token trie from the sorted token bytes.
#include "text/grammar/token_trie.h"

#include <algorithm>

#include "text/tokenizer.h"

namespace vkllm::grammar {

namespace {

constexpr size_t kMaxTokenBytes = 65535;  // depth is stored in 16 bits; no real token comes close

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
}

// Byte summaries of the big subtrees, children before parents (a reverse preorder scan).
void TokenTrie::summarize() {
  summaries_.push_back({~0ull, ~0ull, ~0ull, ~0ull});
  summary_of_.assign(byte_.size(), 0);
  std::vector<std::array<uint64_t, 4>> below(byte_.size());  // scratch, freed at the end
  for (size_t i = byte_.size(); i-- > 0;) {
    for (size_t c = i + 1; c < end_[i]; c = end_[c]) {
      for (int w = 0; w < 4; ++w) below[i][size_t(w)] |= below[c][size_t(w)];
      below[i][byte_[c] >> 6] |= uint64_t(1) << (byte_[c] & 63);
    }
    if (end_[i] - i > kSummaryMinNodes) {
      summary_of_[i] = uint32_t(summaries_.size());
      summaries_.push_back(below[i]);
    }
  }
}

const std::array<uint64_t, 4>& TokenTrie::bytes_below(size_t node) const { return summaries_[summary_of_[node]]; }

}  // namespace vkllm::grammar
