// GrammarAutomaton: runs a Grammar over a vocabulary. A matcher state is the set of parse stacks
// a pushdown recogniser can be in (each stack a chain of interned frames: a position in the
// grammar and the frame to return to). States are interned, so a state is a number, and the
// automaton is built lazily as a DFA over bytes: transition(state, byte) is computed once, then
// read from a table (one computation for each set of bytes the state's elements cannot tell
// apart). The tokens allowed in a state (its mask) come from one scan of the token trie, which
// follows those cached transitions and skips a rejected prefix's whole subtree, and an accepted
// one's where every character below keeps the state on a run (inside a string: any character
// leads on, for as many characters as a length bound leaves); the mask is cached too, so a state
// seen again (inside a long string, the next item of an array, the same schema in the next
// request) costs a lookup.
// Thread-safe (one mutex): a compiled grammar may be shared by requests on different threads.
// Memory is bounded: past kMaxStates an operation throws Error, and cached masks beyond a budget
// are dropped (and recomputed when needed).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "text/grammar/grammar.h"
#include "text/grammar/token_trie.h"

namespace vkllm::grammar {

using TokenMask = std::vector<uint64_t>;  // (ceil(vocab / 64)) bit i: token i allowed

inline bool allowed(const TokenMask& m, int32_t id) { return m[size_t(id) >> 6] >> (id & 63) & 1; }

class GrammarAutomaton {
 public:
  static constexpr int32_t kDead = -1;
  static constexpr size_t kMaxStates = size_t(1) << 16;
  static constexpr size_t kMaskBudgetBytes = size_t(256) << 20;

  GrammarAutomaton(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie);

  int32_t initial() const { return initial_; }
  // The state after a token, or kDead when it may not come next. End-of-generation tokens are
  // not consumed here (the caller ends when accepting()).
  int32_t after_token(int32_t state, int32_t token);
  // The state after some bytes (a lazily started grammar is fed the text since its trigger).
  int32_t after_bytes(int32_t state, std::string_view bytes);
  bool accepting(int32_t state);  // the grammar may end here
  // The tokens that may come next: text tokens that continue the grammar, the whole tokens it
  // names here, and the end-of-generation tokens when it may end.
  std::shared_ptr<const TokenMask> mask(int32_t state);
  // One token's bit of mask(state), found by stepping its bytes: what a sampler asks of its best
  // few candidates before paying for a whole mask (a scan of the vocabulary's trie).
  bool allows(int32_t state, int32_t token);
  bool mask_cached(int32_t state);  // mask(state) is a lookup now

  const TokenTrie& trie() const { return *trie_; }
  size_t states() const;  // interned so far (for tests and the benchmark)

 private:
  struct Frame {
    uint32_t pos, parent;  // parent 0: the bottom of the stack
  };
  uint32_t frame(uint32_t pos, uint32_t parent);
  void expand(uint32_t pos, uint32_t parent, std::vector<uint32_t>& out);
  int32_t intern(std::vector<uint32_t>& frames);
  int32_t transition(int32_t state, uint8_t byte);
  int32_t advance_byte(int32_t state, uint8_t byte);
  int32_t walk(int32_t state, std::string_view bytes);  // transitions over bytes; the lock held
  bool takes_whole(const Element& e, int32_t token) const;
  std::span<const uint32_t> frames_of(int32_t state) const {
    size_t begin = state_start_[size_t(state)], end = state_start_[size_t(state) + 1];
    return std::span(state_frames_).subspan(begin, end - begin);
  }
  // Where characters lead a state uniformly: every ASCII byte in `ascii` (and, with utf8, every
  // multi-byte character) goes to `next`, and so on for `run` characters (kForever: next is the
  // state itself). run 0: no such run.
  struct Run {
    bool known = false, utf8 = false;  // known: next, ascii, utf8 found
    bool exact = false;                // run is its length (else a lower bound, or not found yet)
    int32_t next = -1;
    std::array<uint64_t, 2> ascii{};
    uint32_t run = 0;
  };
  static constexpr uint32_t kForever = UINT32_MAX;
  const Run& run_of(int32_t state);
  void find_run(int32_t state, Run& r);
  bool utf8_leads_to(int32_t state, int32_t target);
  bool skips_below(size_t node, int32_t state);  // every token below `node` is allowed from `state`
  void scan_trie(int32_t state, TokenMask& bits);

  std::shared_ptr<const Grammar> g_;
  std::shared_ptr<const TokenTrie> trie_;
  mutable std::mutex mutex_;
  std::vector<Frame> frames_;  // frame 0: the empty stack
  std::unordered_map<uint64_t, uint32_t> frame_ids_;
  std::vector<uint32_t> state_frames_, state_start_;  // state s: its sorted frame ids
  std::vector<bool> accepting_;
  std::unordered_map<std::string, int32_t> state_ids_;   // the frame ids' bytes -> state
  std::vector<int32_t> next_;                            // (states, 256) transitions; kUnknown until computed
  std::vector<std::shared_ptr<const TokenMask>> masks_;  // (states) cached masks, or null
  std::vector<Run> runs_;                                // (states) computed on first use
  size_t mask_bytes_ = 0;
  int32_t initial_ = kDead;
  // scratch
  std::vector<std::pair<uint32_t, uint32_t>> work_;
  std::unordered_set<uint64_t> seen_;
  std::vector<uint32_t> scratch_;
  std::vector<int32_t> scan_states_;
};

// One generation's position in a grammar.
class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<GrammarAutomaton> automaton)
      : a_(std::move(automaton)), state_(a_->initial()) {}
  std::shared_ptr<const TokenMask> allowed() { return a_->mask(state_); }
  bool allows(int32_t token) { return !finished_ && a_->allows(state_, token); }  // allowed()'s bit, alone
  bool mask_cached() { return a_->mask_cached(state_); }
  // Advances by a token; false (and no change) when the grammar does not allow it here.
  // An end-of-generation token is allowed where the grammar may end, and finishes it.
  bool accept(int32_t token);
  bool accept_bytes(std::string_view bytes);
  bool accepting() { return a_->accepting(state_); }
  bool finished() const { return finished_; }

 private:
  std::shared_ptr<GrammarAutomaton> a_;
  int32_t state_;
  bool finished_ = false;
};

}  // namespace vkllm::grammar
