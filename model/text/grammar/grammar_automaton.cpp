// The lazy DFA over parse-stack sets, its masks, and the per-generation matcher.
#include "text/grammar/grammar_automaton.h"

#include <fmt/format.h>
#include <algorithm>

#include "error.h"

namespace vkllm::grammar {

namespace {

constexpr int32_t kUnknown = -2;  // a transition not computed yet

uint64_t key(uint32_t pos, uint32_t parent) { return uint64_t(pos) << 32 | parent; }

}  // namespace

GrammarAutomaton::GrammarAutomaton(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie)
    : g_(std::move(grammar)), trie_(std::move(trie)) {
  frames_.push_back({0, 0});
  state_start_.push_back(0);
  std::vector<uint32_t> start;
  seen_.clear();
  for (uint32_t alt : g_->alternatives(g_->root())) expand(alt, 0, start);
  initial_ = intern(start);
}

size_t GrammarAutomaton::states() const {
  std::lock_guard lock(mutex_);
  return accepting_.size();
}

uint32_t GrammarAutomaton::frame(uint32_t pos, uint32_t parent) {
  auto [it, fresh] = frame_ids_.emplace(key(pos, parent), uint32_t(frames_.size()));
  if (fresh) frames_.push_back({pos, parent});
  return it->second;
}

// Follows rule references and ends of alternatives from (pos, parent) until every path stands
// before a byte range or a token: those stacks go to `out` (frame 0 when a path ends the root).
// A reference in tail position returns straight to the caller's frame, so repetitions
// (R ::= x R) do not deepen the stack. seen_ cuts paths already taken in this step.
void GrammarAutomaton::expand(uint32_t pos, uint32_t parent, std::vector<uint32_t>& out) {
  work_.clear();
  work_.emplace_back(pos, parent);
  while (!work_.empty()) {
    auto [p, f] = work_.back();
    work_.pop_back();
    if (!seen_.insert(key(p, f)).second) continue;
    const Element& e = g_->at(p);
    if (e.op == Op::End) {
      if (f == 0)
        out.push_back(0);
      else
        work_.emplace_back(frames_[f].pos, frames_[f].parent);
    } else if (e.op == Op::Rule) {
      uint32_t ret = g_->at(p + 1).op == Op::End ? f : frame(p + 1, f);
      for (uint32_t alt : g_->alternatives(e.arg)) work_.emplace_back(alt, ret);
    } else {
      out.push_back(frame(p, f));
    }
  }
}

int32_t GrammarAutomaton::intern(std::vector<uint32_t>& frames) {
  if (frames.empty()) return kDead;
  std::sort(frames.begin(), frames.end());
  frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
  std::string k(reinterpret_cast<const char*>(frames.data()), frames.size() * sizeof(uint32_t));
  auto [it, fresh] = state_ids_.emplace(std::move(k), int32_t(accepting_.size()));
  if (!fresh) return it->second;
  ENSURE(accepting_.size() < kMaxStates,
         fmt::format("the grammar needs more than {} matcher states (deeply nested output?)", kMaxStates));
  state_frames_.insert(state_frames_.end(), frames.begin(), frames.end());
  state_start_.push_back(uint32_t(state_frames_.size()));
  accepting_.push_back(frames.front() == 0);
  next_.resize(next_.size() + 256, kUnknown);
  masks_.emplace_back();
  loops_.emplace_back();
  loops_known_.push_back(false);
  return it->second;
}

int32_t GrammarAutomaton::advance_byte(int32_t state, uint8_t b) {
  std::vector<uint32_t> out;
  seen_.clear();
  for (uint32_t f : frames_of(state)) {
    if (f == 0) continue;
    const Element& e = g_->at(frames_[f].pos);
    if (e.op == Op::Bytes && b >= e.lo && b <= e.hi) expand(frames_[f].pos + 1, frames_[f].parent, out);
  }
  return intern(out);
}

int32_t GrammarAutomaton::transition(int32_t state, uint8_t b) {
  size_t at = size_t(state) * 256 + b;
  int32_t t = next_[at];
  if (t == kUnknown) next_[at] = t = advance_byte(state, b);  // (advance_byte may grow next_)
  return t;
}

int32_t GrammarAutomaton::walk(int32_t state, std::string_view bytes) {
  for (char c : bytes) {
    if (state == kDead) break;
    state = transition(state, uint8_t(c));
  }
  return state;
}

// A whole-token element (<[id]>, !<[id]>) that admits `token`; never an end-of-generation token.
bool GrammarAutomaton::takes_whole(const Element& e, int32_t token) const {
  return (e.op == Op::Token && e.arg == uint32_t(token)) ||
         (e.op == Op::NotToken && e.arg != uint32_t(token) && !trie_->is_end_of_generation(token));
}

int32_t GrammarAutomaton::after_bytes(int32_t state, std::string_view bytes) {
  std::lock_guard lock(mutex_);
  return walk(state, bytes);
}

int32_t GrammarAutomaton::after_token(int32_t state, int32_t token) {
  std::lock_guard lock(mutex_);
  std::vector<uint32_t> out;
  if (trie_->is_text(token)) {
    if (int32_t s = walk(state, trie_->bytes(token)); s != kDead) {
      auto f = frames_of(s);
      out.assign(f.begin(), f.end());
    }
  }
  seen_.clear();
  for (uint32_t f : frames_of(state))
    if (f != 0 && takes_whole(g_->at(frames_[f].pos), token)) expand(frames_[f].pos + 1, frames_[f].parent, out);
  return intern(out);
}

bool GrammarAutomaton::allows(int32_t state, int32_t token) {
  std::lock_guard lock(mutex_);
  if (state < 0 || token < 0 || uint32_t(token) >= trie_->vocab_size()) return false;
  if (trie_->is_end_of_generation(token)) return accepting_[size_t(state)];
  if (trie_->is_text(token) && walk(state, trie_->bytes(token)) != kDead) return true;
  for (uint32_t f : frames_of(state))
    if (f != 0 && takes_whole(g_->at(frames_[f].pos), token)) return true;
  return false;
}

bool GrammarAutomaton::mask_cached(int32_t state) {
  std::lock_guard lock(mutex_);
  return state >= 0 && masks_[size_t(state)] != nullptr;
}

bool GrammarAutomaton::accepting(int32_t state) {
  std::lock_guard lock(mutex_);
  return state >= 0 && accepting_[size_t(state)];
}

const std::array<uint64_t, 4>& GrammarAutomaton::loops(int32_t state) {
  if (!loops_known_[size_t(state)]) {
    std::array<uint64_t, 4> l{};
    for (int b = 0; b < 128; ++b)
      if (transition(state, uint8_t(b)) == state) l[size_t(b) >> 6] |= uint64_t(1) << (b & 63);
    loops_[size_t(state)] = l;
    loops_known_[size_t(state)] = true;
  }
  return loops_[size_t(state)];
}

// One pass over the trie in preorder: at[d] is the state after the first d bytes of the current
// node's path; a dead transition skips the node's whole subtree, and so does a big subtree whose
// bytes all loop back to the state it reaches (then every token in it is accepted).
void GrammarAutomaton::scan_trie(int32_t state, TokenMask& bits) {
  scan_states_.resize(trie_->max_depth() + 1);
  scan_states_[0] = state;
  const TokenTrie& t = *trie_;
  auto set = [&](int32_t id) { bits[size_t(id) >> 6] |= uint64_t(1) << (id & 63); };
  for (size_t i = 0, n = t.nodes(); i < n;) {
    uint32_t d = t.depth(i);
    int32_t s = transition(scan_states_[d - 1], t.byte(i));
    if (s == kDead) {
      i = t.end(i);
      continue;
    }
    scan_states_[d] = s;
    for (int32_t id : t.tokens_at(i)) set(id);
    // Only where the node's byte loops (inside a string): elsewhere the test would cost a new
    // state's 128 transitions and hardly ever pass.
    if (s == scan_states_[d - 1] && t.end(i) - i > TokenTrie::kSummaryMinNodes) {
      const auto &below = t.bytes_below(i), &loop = loops(s);
      if ((below[0] & ~loop[0]) == 0 && (below[1] & ~loop[1]) == 0 && (below[2] | below[3]) == 0) {
        for (int32_t id : t.tokens_below(i)) set(id);
        i = t.end(i);
        continue;
      }
    }
    ++i;
  }
}

std::shared_ptr<const TokenMask> GrammarAutomaton::mask(int32_t state) {
  std::lock_guard lock(mutex_);
  ENSURE(state >= 0, "no token can continue the grammar");
  if (auto m = masks_[size_t(state)]) return m;
  uint32_t vocab = trie_->vocab_size();
  auto bits = std::make_shared<TokenMask>((vocab + 63) / 64, 0);
  scan_trie(state, *bits);
  auto set = [&](int32_t id) { (*bits)[size_t(id) >> 6] |= uint64_t(1) << (id & 63); };
  for (uint32_t f : frames_of(state)) {
    if (f == 0) continue;
    const Element& e = g_->at(frames_[f].pos);
    if (e.op == Op::Token && e.arg < vocab) set(int32_t(e.arg));
    if (e.op == Op::NotToken)
      for (uint32_t id = 0; id < vocab; ++id)
        if (id != e.arg && !trie_->is_end_of_generation(int32_t(id))) set(int32_t(id));
  }
  if (accepting_[size_t(state)])
    for (int32_t id : trie_->end_of_generation()) set(id);
  size_t bytes = bits->size() * sizeof(uint64_t);
  if (mask_bytes_ + bytes > kMaskBudgetBytes) {  // drop the cache; masks in use stay alive
    for (auto& m : masks_) m.reset();
    mask_bytes_ = 0;
  }
  mask_bytes_ += bytes;
  masks_[size_t(state)] = bits;
  return bits;
}

// --- GrammarMatcher

bool GrammarMatcher::accept(int32_t token) {
  if (finished_) return false;
  if (a_->trie().is_end_of_generation(token)) {
    if (!a_->accepting(state_)) return false;
    finished_ = true;
    return true;
  }
  int32_t next = a_->after_token(state_, token);
  if (next == GrammarAutomaton::kDead) return false;
  state_ = next;
  return true;
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  int32_t next = a_->after_bytes(state_, bytes);
  if (next == GrammarAutomaton::kDead) return false;
  state_ = next;
  return true;
}

}  // namespace vkllm::grammar
