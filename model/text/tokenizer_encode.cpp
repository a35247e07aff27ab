// Tokenizer::encode: special tokens split out, then the encoders of a text fragment, as llama.cpp's
// llm_tokenizer_spm_session and llm_tokenizer_bpe_session, sharing one merge loop: start from UTF-8
// characters (byte-level BPE: bytes) and repeatedly merge the adjacent pair with the best priority (SentencePiece: the
// merged token's score, highest first; BPE: the merge rank, lowest first), leftmost on ties. Each word merges on its
// own (byte-level BPE: a pre-tokenizer piece; SentencePiece: from one U+2581 to the next, when the vocabulary lets no
// token span that; SentencePiece-style BPE: a line, or a run of newlines), in buffers reused across the words of one
// call, so the time is linear in the text. Also GPT-2's byte table.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

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

constexpr int32_t kNotLookedUp = -2;  // SPM: a character's token is looked up only if it stays alone

struct Symbol {
  int32_t id;          // token (SPM: -1 for a character that is none; BPE: may be past the vocabulary)
  int32_t prev, next;  // live neighbours (-1: none)
  uint32_t begin, n;   // byte range in the word; n = 0 once merged into its left neighbour
};

// A candidate merge. key orders the queue: priority in the high half (lower merges first), the
// left symbol's index in the low half (leftmost first on equal priority).
struct Candidate {
  uint64_t key;
  uint32_t size;   // bytes of the merged text: a pair whose sides changed since is stale
  int32_t result;  // the merged symbol's id
  bool operator<(const Candidate& o) const { return key > o.key; }  // std heaps put the largest first
};

// A float's bits as an unsigned integer of the same order.
uint32_t ordered_bits(float f) {
  if (f == 0.0f) f = 0.0f;  // -0 ties with +0, as the comparison llama.cpp makes
  uint32_t u = std::bit_cast<uint32_t>(f);
  return u & 0x80000000u ? ~u : u | 0x80000000u;
}

}  // namespace

struct Tokenizer::Work {
  std::vector<Symbol> symbols;
  std::vector<Candidate> queue;
  std::string word;                     // BPE: a piece in GPT-2 characters
  WordCache cache;                      // SPM: words
  std::vector<WordCache> level_caches;  // BPE: pieces at each pre-tokenizer level, then words
  std::vector<bool> uncut;              // SpmBpe: bytes of a line inside a text that spans words
};

namespace {

// Merges the symbols of one word in place; `pair(l, r)` gives the candidate of two neighbours or
// nothing (result < 0). Afterwards the live symbols are those reached from symbol 0 by next.
template <class Pair>
void merge_symbols(std::vector<Symbol>& s, std::vector<Candidate>& queue, const Pair& pair) {
  queue.clear();
  auto add = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    auto [priority, result] = pair(s[size_t(l)], s[size_t(r)]);
    if (result < 0) return;
    queue.push_back({uint64_t(priority) << 32 | uint32_t(l), s[size_t(l)].n + s[size_t(r)].n, result});
    std::push_heap(queue.begin(), queue.end());
  };
  for (size_t i = 1; i < s.size(); ++i) add(int32_t(i - 1), int32_t(i));
  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end());
    Candidate c = queue.back();
    queue.pop_back();
    Symbol& l = s[uint32_t(c.key)];
    if (l.n == 0 || l.next < 0) continue;
    Symbol& r = s[size_t(l.next)];
    // Sizes only grow, so an unchanged total means both sides are still the queued pair.
    if (r.n == 0 || l.n + r.n != c.size) continue;
    l.n += r.n;
    l.id = c.result;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) s[size_t(r.next)].prev = r.prev;
    add(l.prev, r.prev);
    add(r.prev, l.next);
  }
}

}  // namespace

// --- encode

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (add_special && add_bos_) out.push_back(bos_);
  Work w;
  bool after_special = true;  // the start counts as after a special token (SPM prefix space)
  for (const TextFragment& f : specials_.split(text, parse_special)) {
    if (f.token >= 0)
      out.push_back(f.token);
    else
      encode_fragment(f.text, after_special, w, out);
    after_special = f.token >= 0;
  }
  if (add_special && add_eos_) out.push_back(eos_);
  return out;
}

namespace {

// The bytes of the character at s[at] as llama.cpp's unicode_cpt_from_utf8 reads them: a lead
// byte and its continuation bytes; a byte that starts no such sequence stands alone (llama.cpp
// reads it as U+FFFD), so a valid character after it is always a symbol of its own.
size_t checked_char_length(std::string_view s, size_t at) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[at + k]); };
  size_t n = byte(0) >= 0xF8 ? 1 : utf8_char_length(byte(0));
  if (at + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((byte(k) & 0xC0) != 0x80) return 1;
  return n;
}

// SentencePiece's alphabet: spaces as U+2581, and with `prefix` one more in front.
std::string escape_spaces(std::string_view text, bool prefix) {
  std::string s;
  s.reserve(text.size() * 2 + kSpmSpace.size());
  if (prefix) s = kSpmSpace;
  for (size_t at = 0; at < text.size();) {
    size_t space = std::min(text.find(' ', at), text.size());
    s.append(text, at, space - at);
    if (space < text.size()) s += kSpmSpace;
    at = space + 1;
  }
  return s;
}

}  // namespace

void Tokenizer::encode_fragment(std::string_view text, bool after_special, Work& w, std::vector<int32_t>& out) const {
  if (kind_ == Kind::Bpe)
    encode_bpe(text, w, out);
  else if (kind_ == Kind::SpmBpe)
    encode_spm_bpe(escape_spaces(text, false), w, out);
  else  // a prefix space after a special token (or at the start)
    encode_spm(escape_spaces(text, add_space_prefix_ && after_special), w, out);
}

// --- words through the cache

template <class Encode>
void cached_word(std::string_view word, WordCache& cache, std::vector<int32_t>& out, const Encode& encode) {
  if (word.size() > WordCache::kMaxWord) {
    encode(word);
    return;
  }
  uint64_t hash = hash_bytes(word);
  if (cache.find(word, hash, out)) return;
  size_t before = out.size();
  encode(word);
  cache.insert(word, hash, std::span<const int32_t>(out).subspan(before));
}

// --- SentencePiece

void Tokenizer::encode_spm(std::string_view text, Work& w, std::vector<int32_t>& out) const {
  if (!spm_words_) {  // a token may span words: the fragment merges as one
    spm_word(text, w, out);
    return;
  }
  for (size_t start = 0; start < text.size();) {
    // A word runs from its U+2581s to the next U+2581 (or to the end).
    size_t at = start;
    while (text.compare(at, kSpmSpace.size(), kSpmSpace) == 0) at += kSpmSpace.size();
    size_t end = std::min(text.find(kSpmSpace, at), text.size());
    cached_word(text.substr(start, end - start), w.cache, out, [&](std::string_view word) { spm_word(word, w, out); });
    start = end;
  }
}

void Tokenizer::spm_word(std::string_view word, Work& w, std::vector<int32_t>& out) const {
  w.symbols.clear();
  for (size_t at = 0; at < word.size();) {
    uint32_t n = uint32_t(std::min(utf8_char_length(static_cast<unsigned char>(word[at])), word.size() - at));
    int32_t i = int32_t(w.symbols.size());
    w.symbols.push_back({kNotLookedUp, i - 1, at + n == word.size() ? -1 : i + 1, uint32_t(at), n});
    at += n;
  }
  merge_symbols(w.symbols, w.queue, [&](const Symbol& l, const Symbol& r) -> std::pair<uint32_t, int32_t> {
    int32_t id = find(word.substr(l.begin, l.n + r.n));  // l and r are adjacent
    if (id < 0) return {0, -1};
    return {~ordered_bits(score(id)), id};  // the highest score first
  });
  for (int32_t i = 0; i >= 0; i = w.symbols[size_t(i)].next) {
    const Symbol& s = w.symbols[size_t(i)];
    int32_t id = s.id == kNotLookedUp ? find(word.substr(s.begin, s.n)) : s.id;
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    // A merged piece is always a token; a single character may not be: then its bytes.
    for (char c : word.substr(s.begin, s.n)) {
      int32_t b = byte_id_[static_cast<uint8_t>(c)];
      if (b < 0) b = unk_;  // a vocabulary without byte tokens loses this byte
      if (b >= 0) out.push_back(b);
    }
  }
}

// --- BPE: byte-level, and SentencePiece-style (Gemma 4)

void Tokenizer::encode_bpe(std::string_view text, Work& w, std::vector<int32_t>& out) const {
  w.level_caches.resize(pre_->levels() + 1);
  bpe_level(0, text, w, out);
}

// Level k of the pre-tokenizer splits `text`; each piece goes on to level k + 1, and past the last
// level through the merges. A piece met before at the same level repeats its ids from the cache,
// skipping the later regexes as well as the merges.
void Tokenizer::bpe_level(size_t k, std::string_view text, Work& w, std::vector<int32_t>& out) const {
  cached_word(text, w.level_caches[k], out, [&](std::string_view t) {
    if (k == pre_->levels())
      bpe_word(t, w, out);
    else
      pre_->split_level(k, t, [&](std::string_view piece) { bpe_level(k + 1, piece, w, out); });
  });
}

// SentencePiece-style BPE splits its text (spaces already U+2581) only into lines and runs of
// newlines, as llama.cpp's gemma4 pre-tokenizer "[^\n]+|[\n]+". A run of newlines that is a token
// is that token, unmerged (llama.cpp's rule for Gemma 4).
void Tokenizer::encode_spm_bpe(std::string_view text, Work& w, std::vector<int32_t>& out) const {
  for (size_t at = 0; at < text.size();) {
    bool newlines = text[at] == '\n';
    size_t end = std::min(newlines ? text.find_first_not_of('\n', at) : text.find('\n', at), text.size());
    std::string_view run = text.substr(at, end - at);
    if (int32_t id = newlines ? find(run) : -1; id >= 0)
      out.push_back(id);
    else if (spm_words_)
      spm_bpe_words(run, w, out);
    else
      cached_word(run, w.cache, out, [&](std::string_view word) { bpe_word(word, w, out); });
    at = end;
  }
}

// A line merges as its words, cut where U+2581 follows another character: a merge across such a
// place would make a text with U+2581 after another character, and the vocabulary's few such texts
// (spanning_) are looked for in the line; no cut is made inside one. Each word then merges exactly
// as it would within the whole line, in the same order.
void Tokenizer::spm_bpe_words(std::string_view line, Work& w, std::vector<int32_t>& out) const {
  w.uncut.assign(line.size(), false);
  for (const std::string& s : spanning_)
    for (size_t at = line.find(s); at != std::string_view::npos; at = line.find(s, at + 1))
      std::fill(w.uncut.begin() + long(at) + 1, w.uncut.begin() + long(at + s.size()), true);
  auto word = [&](std::string_view x) {
    cached_word(x, w.cache, out, [&](std::string_view y) { bpe_word(y, w, out); });
  };
  size_t start = 0;
  for (size_t at = line.find(kSpmSpace, 1); at != std::string_view::npos; at = line.find(kSpmSpace, at + 1)) {
    bool after_space = at >= kSpmSpace.size() && line.compare(at - kSpmSpace.size(), kSpmSpace.size(), kSpmSpace) == 0;
    if (after_space || w.uncut[at]) continue;
    word(line.substr(start, at - start));
    start = at;
  }
  word(line.substr(start));
}

void Tokenizer::bpe_word(std::string_view piece, Work& w, std::vector<int32_t>& out) const {
  if (piece.empty()) return;
  if (pre_ && pre_->ignore_merges()) {  // llama-bpe: a word that is a whole token skips the merges
    w.word.clear();
    for (char c : piece) w.word += byte_table().chars[static_cast<uint8_t>(c)];
    if (int32_t id = find(w.word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  // Symbols start as bytes (byte-level) or UTF-8 characters (SentencePiece-style).
  bool chars = kind_ == Kind::SpmBpe;
  w.symbols.clear();
  for (size_t at = 0; at < piece.size();) {
    size_t n = chars ? checked_char_length(piece, at) : 1;
    int32_t id = n == 1 ? byte_symbol_[static_cast<uint8_t>(piece[at])] : symbol_id(piece.substr(at, n));
    int32_t i = int32_t(w.symbols.size());
    w.symbols.push_back({id, i - 1, at + n == piece.size() ? -1 : i + 1, uint32_t(at), uint32_t(n)});
    at += n;
  }
  merge_symbols(w.symbols, w.queue, [&](const Symbol& l, const Symbol& r) -> std::pair<uint32_t, int32_t> {
    Merge m = l.id < 0 || r.id < 0 ? Merge{} : merges_.find(l.id, r.id);
    return {uint32_t(m.rank), m.rank < 0 ? -1 : m.result};
  });
  int32_t vocab = int32_t(text_.size());
  for (int32_t i = 0; i >= 0; i = w.symbols[size_t(i)].next) {
    const Symbol& s = w.symbols[size_t(i)];
    if (s.id >= 0 && s.id < vocab) {
      out.push_back(s.id);
      continue;
    }
    // A symbol that is no token (a character outside the vocabulary, or a malformed vocabulary):
    // its bytes one by one, each dropped where the vocabulary lacks it (as llama.cpp does).
    for (char c : piece.substr(s.begin, s.n))
      if (int32_t id = byte_id_[static_cast<uint8_t>(c)]; id >= 0) out.push_back(id);
  }
}

}  // namespace vkllm
