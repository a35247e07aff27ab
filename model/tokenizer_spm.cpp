// SentencePiece BPE encoding, step for step as llama.cpp's llm_tokenizer_spm_session: start from
// UTF-8 characters, repeatedly merge the adjacent pair whose concatenation is the token with the
// highest score (leftmost on ties), then emit leftovers that are not tokens as <0xNN> bytes.
#include <queue>

#include "tokenizer.h"

namespace vkllm {

namespace {

struct Symbol {
  int prev, next;    // neighbours in the linked list of live symbols (-1: none)
  size_t begin, n;   // byte range in the text; n = 0 once merged into its left neighbour
};

struct Bigram {
  int left, right;
  float score;
  size_t size;       // bytes of the merged text, to detect stale entries
};

struct BigramOrder {  // priority: highest score, then leftmost
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

class SpmSession {
 public:
  SpmSession(const Tokenizer& t, std::string_view text) : t_(t), text_(text) {}

  void run(std::vector<int32_t>& out) {
    for (size_t at = 0; at < text_.size();) {
      size_t n = std::min(utf8_char_length(static_cast<unsigned char>(text_[at])), text_.size() - at);
      int i = int(symbols_.size());
      symbols_.push_back({i - 1, at + n == text_.size() ? -1 : i + 1, at, n});
      at += n;
    }
    for (int i = 1; i < int(symbols_.size()); ++i) try_add(i - 1, i);
    while (!queue_.empty()) {
      Bigram b = queue_.top();
      queue_.pop();
      Symbol& l = symbols_[b.left];
      Symbol& r = symbols_[b.right];
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // one side changed since
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) symbols_[r.next].prev = b.left;
      try_add(l.prev, b.left);
      try_add(b.left, l.next);
    }
    for (int i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[i].next) emit(symbols_[i], out);
  }

 private:
  std::string_view str(const Symbol& s) const { return text_.substr(s.begin, s.n); }

  void try_add(int left, int right) {
    if (left < 0 || right < 0) return;
    std::string_view merged = text_.substr(symbols_[left].begin, symbols_[left].n + symbols_[right].n);
    int32_t id = t_.find(merged);
    if (id < 0) return;
    queue_.push({left, right, t_.score(id), merged.size()});
  }

  // A merged symbol is always a token; a single character may not be: then its bytes.
  void emit(const Symbol& s, std::vector<int32_t>& out) const {
    if (int32_t id = t_.find(str(s)); id >= 0) {
      out.push_back(id);
      return;
    }
    for (char c : str(s)) {
      int32_t id = t_.byte_token(static_cast<uint8_t>(c));
      if (id < 0) id = t_.unk();  // a vocabulary without byte tokens loses this byte
      if (id >= 0) out.push_back(id);
    }
  }

  const Tokenizer& t_;
  std::string_view text_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue_;
};

}  // namespace

void spm_encode(const Tokenizer& t, std::string_view text, std::vector<int32_t>& out) {
  SpmSession(t, text).run(out);
}

}  // namespace vkllm
