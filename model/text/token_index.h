// The tokenizer's lookup tables as open-addressing hash tables over flat arrays: TokenIndex (token
// text -> id) and PairIndex ((left id, right id) -> BPE merge). Encoding looks up every candidate
// pair of neighbouring symbols; these keep a lookup to one hash and a cache line or two, where a
// std::unordered_map walks a node list and a key string has to be built first.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm {

// A 64-bit hash of bytes, 8 at a time (not for untrusted keys against a chosen-collision attack:
// probing stays correct, only slower).
uint64_t hash_bytes(std::string_view s);

class TokenIndex {
 public:
  TokenIndex() = default;
  // The first id wins for a text listed twice.
  explicit TokenIndex(const std::vector<std::string>& texts);
  int32_t find(std::string_view s) const;  // -1: not a token

 private:
  struct Slot {
    uint32_t tag = 0;  // high hash bits, to skip most wrong candidates without touching the text
    int32_t id = -1;   // -1: empty
  };
  std::string_view text(int32_t id) const { return {arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]}; }

  std::vector<Slot> slots_;
  std::string arena_;              // all texts back to back
  std::vector<uint32_t> offsets_;  // (n + 1) where each text starts in arena_
  size_t mask_ = 0;
};

// One BPE merge: its rank (lower merges first) and the symbol it makes.
struct Merge {
  int32_t rank = -1;  // -1: the pair does not merge
  int32_t result = -1;
};

class PairIndex {
 public:
  explicit PairIndex(size_t capacity = 0);
  // Keeps the first merge of a pair listed twice (its lower rank), as llama.cpp does.
  void insert(int32_t left, int32_t right, Merge m);
  Merge find(int32_t left, int32_t right) const {
    uint64_t key = pack(left, right);
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.merge;
      if (s.key == kEmpty) return {};
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  struct Slot {
    uint64_t key = kEmpty;
    Merge merge;
  };
  static uint64_t pack(int32_t l, int32_t r) { return uint64_t(uint32_t(l)) << 32 | uint32_t(r); }
  size_t slot_of(uint64_t key) const {
    key ^= key >> 31;
    key *= 0x9E3779B97F4A7C15ull;
    return size_t(key >> 20) & mask_;
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
};

// The ids each word of one encode call came out as, so that a word seen again skips its merges
// (prose and code repeat most of their words). Words longer than kMaxWord bytes are not kept,
// nor new words once kMaxWords are.
class WordCache {
 public:
  static constexpr size_t kMaxWord = 64, kMaxWords = size_t(1) << 16;
  // Appends the ids of `word` (hash: hash_bytes(word)) to out; false if the word is not cached.
  bool find(std::string_view word, uint64_t hash, std::vector<int32_t>& out) const;
  void insert(std::string_view word, uint64_t hash, std::span<const int32_t> ids);

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t key = 0, key_size = 0;  // key_size 0: empty
    uint32_t ids = 0, ids_size = 0;
  };
  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<int32_t> ids_;
  size_t size_ = 0;
};

}  // namespace vkllm
