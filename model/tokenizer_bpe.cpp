// Byte-level BPE encoding, as llama.cpp's llm_tokenizer_bpe_session: pre-tokenize, map each byte to
// its GPT-2 character, then per word repeatedly merge the adjacent pair with the lowest merge rank
// (leftmost on ties). Leftover characters become their single-byte tokens.
#include <array>
#include <queue>

#include "tokenizer.h"

namespace vkllm {

// --- the GPT-2 byte table (FORMATS §4.2)

namespace {

struct ByteTable {
  std::array<std::string, 256> chars;  // UTF-8 of the character standing for each byte
  std::array<int16_t, 324> bytes;      // code point (< 256 + 68) -> byte, -1 if none

  ByteTable() {
    bytes.fill(-1);
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      uint32_t cp = printable ? uint32_t(b) : uint32_t(256 + extra++);
      bytes[cp] = int16_t(b);
      chars[b] = cp < 0x80 ? std::string(1, char(cp))
                           : std::string{char(0xC0 | (cp >> 6)), char(0x80 | (cp & 0x3F))};
    }
  }
};

const ByteTable& byte_table() {
  static const ByteTable t;
  return t;
}

}  // namespace

std::string_view gpt2_byte_char(uint8_t b) { return byte_table().chars[b]; }

int gpt2_char_byte(uint32_t cp) { return cp < byte_table().bytes.size() ? byte_table().bytes[cp] : -1; }

// --- merging

namespace {

struct Symbol {
  int prev, next;   // live neighbours (-1: none)
  size_t begin, n;  // byte range in the word; n = 0 once merged away
};

struct Bigram {
  int left, right;
  int32_t rank;
  std::string text;  // left + right when queued, to detect stale entries
};

struct BigramOrder {  // priority: lowest rank, then leftmost
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

class BpeWord {
 public:
  BpeWord(const Tokenizer& t, std::string_view word) : t_(t), word_(word) {}

  void run(std::vector<int32_t>& out) {
    for (size_t at = 0; at < word_.size();) {
      size_t n = std::min(utf8_char_length(static_cast<unsigned char>(word_[at])), word_.size() - at);
      int i = int(symbols_.size());
      symbols_.push_back({i - 1, at + n == word_.size() ? -1 : i + 1, at, n});
      at += n;
    }
    for (int i = 1; i < int(symbols_.size()); ++i) try_add(i - 1, i);
    while (!queue_.empty()) {
      Bigram b = queue_.top();
      queue_.pop();
      Symbol& l = symbols_[b.left];
      Symbol& r = symbols_[b.right];
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.text.size() || word_.substr(l.begin, l.n + r.n) != b.text) continue;
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
  std::string_view str(const Symbol& s) const { return word_.substr(s.begin, s.n); }

  void try_add(int left, int right) {
    if (left < 0 || right < 0) return;
    int32_t rank = t_.merge_rank(str(symbols_[left]), str(symbols_[right]));
    if (rank < 0) return;
    queue_.push({left, right, rank, std::string(word_.substr(symbols_[left].begin, symbols_[left].n + symbols_[right].n))});
  }

  // A merge result that is not a token (a malformed vocabulary): its characters one by one.
  void emit(const Symbol& s, std::vector<int32_t>& out) const {
    if (int32_t id = t_.find(str(s)); id >= 0) {
      out.push_back(id);
      return;
    }
    std::string_view text = str(s);
    for (size_t at = 0; at < text.size();) {
      size_t n = std::min(utf8_char_length(static_cast<unsigned char>(text[at])), text.size() - at);
      int32_t id = t_.find(text.substr(at, n));
      if (id < 0) id = t_.unk();  // lost: the vocabulary lacks this byte's character
      if (id >= 0) out.push_back(id);
      at += n;
    }
  }

  const Tokenizer& t_;
  std::string_view word_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue_;
};

}  // namespace

void bpe_encode(const Tokenizer& t, const PreTokenizer& pre, std::string_view text, std::vector<int32_t>& out) {
  const ByteTable& table = byte_table();
  std::string word;
  for (std::string_view piece : pre.split(text)) {
    word.clear();
    for (char c : piece) word += table.chars[static_cast<uint8_t>(c)];
    if (pre.ignore_merges()) {
      if (int32_t id = t.find(word); id >= 0) {
        out.push_back(id);
        continue;
      }
    }
    BpeWord(t, word).run(out);
  }
}

}  // namespace vkllm
