// TokenIndex and PairIndex: linear probing in power-of-two tables kept at most half full.
#include "text/token_index.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "error.h"

namespace vkllm {

uint64_t hash_bytes(std::string_view s) {
  constexpr uint64_t k1 = 0xBF58476D1CE4E5B9ull, k2 = 0x94D049BB133111EBull;
  auto load = [&](size_t at, size_t bytes) {  // fixed sizes: the compiler emits plain loads, no call
    uint64_t w = 0;
    if (bytes == 8) std::memcpy(&w, s.data() + at, 8);
    if (bytes == 4) std::memcpy(&w, s.data() + at, 4);
    return w;
  };
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (s.size() * k2);
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    h = (h ^ load(i, 8)) * k1;
    h ^= h >> 29;
  }
  size_t rest = s.size() - i;
  uint64_t w = 0;
  if (rest >= 4) {  // two overlapping 4-byte words
    w = load(i, 4) << 32 | load(s.size() - 4, 4);
  } else if (rest > 0) {
    auto at = [&](size_t k) { return uint64_t(static_cast<unsigned char>(s[i + k])); };
    w = at(0) << 16 | at(rest / 2) << 8 | at(rest - 1);
  }
  h = (h ^ w) * k2;
  h ^= h >> 32;
  h *= k1;
  return h ^ (h >> 29);
}

namespace {

size_t table_size(size_t n) { return std::bit_ceil(std::max<size_t>(16, 2 * n)); }

}  // namespace

TokenIndex::TokenIndex(const std::vector<std::string>& texts) {
  offsets_.reserve(texts.size() + 1);
  size_t total = 0;
  for (const std::string& t : texts) total += t.size();
  ENSURE(total < UINT32_MAX, "the vocabulary's texts are larger than 4 GiB");
  arena_.reserve(total);
  for (const std::string& t : texts) {
    offsets_.push_back(uint32_t(arena_.size()));
    arena_ += t;
  }
  offsets_.push_back(uint32_t(arena_.size()));
  slots_.resize(table_size(texts.size()));
  mask_ = slots_.size() - 1;
  for (size_t id = 0; id < texts.size(); ++id) {
    uint64_t h = hash_bytes(texts[id]);
    uint32_t tag = uint32_t(h >> 32);
    for (size_t i = size_t(h) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id < 0) {
        s = {tag, int32_t(id)};
        break;
      }
      if (s.tag == tag && text(s.id) == texts[id]) break;  // a duplicate: the first id stays
    }
  }
}

int32_t TokenIndex::find(std::string_view t) const {
  if (slots_.empty()) return -1;
  uint64_t h = hash_bytes(t);
  uint32_t tag = uint32_t(h >> 32);
  for (size_t i = size_t(h) & mask_;; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.id < 0) return -1;
    if (s.tag == tag && text(s.id) == t) return s.id;
  }
}

PairIndex::PairIndex(size_t capacity) : slots_(table_size(capacity)), mask_(slots_.size() - 1) {}

void PairIndex::insert(int32_t left, int32_t right, Merge m) {
  uint64_t key = pack(left, right);
  ENSURE(key != kEmpty, "a BPE merge of two invalid symbols");
  for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.key == key) return;
    if (s.key == kEmpty) {
      ENSURE(2 * ++size_ <= slots_.size(), "more BPE merges than the pair index was made for");
      s = {key, m};
      return;
    }
  }
}

bool WordCache::find(std::string_view word, uint64_t hash, std::vector<int32_t>& out) const {
  if (slots_.empty()) return false;
  size_t mask = slots_.size() - 1;
  for (size_t i = size_t(hash) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.key_size == 0) return false;
    if (s.hash == hash && std::string_view(keys_).substr(s.key, s.key_size) == word) {
      out.insert(out.end(), ids_.begin() + s.ids, ids_.begin() + s.ids + s.ids_size);
      return true;
    }
  }
}

void WordCache::insert(std::string_view word, uint64_t hash, std::span<const int32_t> ids) {
  if (word.empty() || word.size() > kMaxWord || size_ >= kMaxWords) return;
  if (2 * (size_ + 1) > slots_.size()) {  // grow (or start): rehash into twice the slots
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(std::max<size_t>(1024, 2 * slots_.size())));
    size_t mask = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.key_size != 0) {
        size_t i = size_t(s.hash) & mask;
        while (slots_[i].key_size != 0) i = (i + 1) & mask;
        slots_[i] = s;
      }
  }
  size_t mask = slots_.size() - 1;
  size_t i = size_t(hash) & mask;
  while (slots_[i].key_size != 0) i = (i + 1) & mask;
  slots_[i] = {hash, uint32_t(keys_.size()), uint32_t(word.size()), uint32_t(ids_.size()), uint32_t(ids.size())};
  keys_ += word;
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  ++size_;
}

}  // namespace vkllm
