// The two encoders of a text fragment, as llama.cpp's llm_tokenizer_spm_session and
// llm_tokenizer_bpe_session, sharing one merge loop: start from UTF-8 characters and repeatedly
// merge the adjacent pair with the best priority (SentencePiece: the merged token's score, highest
// first; BPE: the merge rank, lowest first), leftmost on ties. Also GPT-2's byte table.
#include <array>
#include <functional>
#include <optional>
#include <queue>

#include "text/tokenizer.h"

namespace vkllm {

// --- the GPT-2 byte table (docs/formats.md §4.2)

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
      chars[b] = cp < 0x80 ? std::string(1, char(cp)) : std::string{char(0xC0 | (cp >> 6)), char(0x80 | (cp & 0x3F))};
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

// --- the merge loop

namespace {

struct Symbol {
  int prev, next;   // live neighbours in the linked list (-1: none)
  size_t begin, n;  // byte range in the text; n = 0 once merged into its left neighbour
};

struct Bigram {
  int left, right;
  double priority;  // higher merges first
  size_t size;      // bytes of the merged text: a pair whose sides changed since is stale
};

struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.priority < b.priority || (a.priority == b.priority && a.left > b.left);
  }
};

// Priority of merging two adjacent pieces, or nullopt when they do not merge.
using PairPriority = std::function<std::optional<double>(std::string_view left, std::string_view right)>;

// The pieces `text` ends up as, in order.
std::vector<std::string_view> merge_pieces(std::string_view text, const PairPriority& priority) {
  std::vector<Symbol> s;
  for (size_t at = 0; at < text.size();) {
    size_t n = std::min(utf8_char_length(static_cast<unsigned char>(text[at])), text.size() - at);
    int i = int(s.size());
    s.push_back({i - 1, at + n == text.size() ? -1 : i + 1, at, n});
    at += n;
  }
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    if (auto p = priority(text.substr(s[l].begin, s[l].n), text.substr(s[r].begin, s[r].n)))
      queue.push({l, r, *p, s[l].n + s[r].n});
  };
  for (int i = 1; i < int(s.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    Bigram b = queue.top();
    queue.pop();
    Symbol& l = s[b.left];
    Symbol& r = s[b.right];
    // Both sides alive and of the queued length: then they are still exactly the queued pair.
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) s[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  std::vector<std::string_view> pieces;
  for (int i = s.empty() ? -1 : 0; i != -1; i = s[i].next) pieces.push_back(text.substr(s[i].begin, s[i].n));
  return pieces;
}

}  // namespace

// --- SentencePiece

void spm_encode(const Tokenizer& t, std::string_view text, std::vector<int32_t>& out) {
  auto score = [&](std::string_view l, std::string_view r) -> std::optional<double> {
    int32_t id = t.find(std::string_view(l.data(), l.size() + r.size()));  // l and r are adjacent
    if (id < 0) return std::nullopt;
    return t.score(id);
  };
  for (std::string_view p : merge_pieces(text, score)) {
    if (int32_t id = t.find(p); id >= 0) {
      out.push_back(id);
      continue;
    }
    // A merged piece is always a token; a single character may not be: then its bytes.
    for (char c : p) {
      int32_t id = t.byte_token(static_cast<uint8_t>(c));
      if (id < 0) id = t.unk();  // a vocabulary without byte tokens loses this byte
      if (id >= 0) out.push_back(id);
    }
  }
}

// --- byte-level BPE

void bpe_encode(const Tokenizer& t, const PreTokenizer& pre, std::string_view text, std::vector<int32_t>& out) {
  auto rank = [&](std::string_view l, std::string_view r) -> std::optional<double> {
    int32_t rank = t.merge_rank(l, r);
    if (rank < 0) return std::nullopt;
    return -double(rank);
  };
  std::string word;
  for (std::string_view piece : pre.split(text)) {
    word.clear();
    for (char c : piece) word += byte_table().chars[static_cast<uint8_t>(c)];
    if (int32_t id = pre.ignore_merges() ? t.find(word) : -1; id >= 0) {
      out.push_back(id);  // llama-bpe: a word that is a whole token skips the merges
      continue;
    }
    for (std::string_view p : merge_pieces(word, rank)) {
      if (int32_t id = t.find(p); id >= 0) {
        out.push_back(id);
        continue;
      }
      // A merge result that is no token (a malformed vocabulary): its characters one by one.
      for (size_t at = 0; at < p.size();) {
        size_t n = std::min(utf8_char_length(static_cast<unsigned char>(p[at])), p.size() - at);
        int32_t id = t.find(p.substr(at, n));
        if (id < 0) id = t.unk();  // lost: the vocabulary lacks this byte's character
        if (id >= 0) out.push_back(id);
        at += n;
      }
    }
  }
}

}  // namespace vkllm
