// The lazy DFA over parse-stack sets, its masks, and the per-generation matcher.
#include "text/grammar/grammar_automaton.h"

#include <fmt/format.h>
#include <algorithm>
#include <bit>

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
  runs_.emplace_back();
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

// A transition depends only on which of the state's byte ranges hold the byte: it is computed
// once for the whole interval of bytes that lie in the same ranges.
int32_t GrammarAutomaton::transition(int32_t state, uint8_t b) {
  size_t at = size_t(state) * 256 + b;
  int32_t t = next_[at];
  if (t != kUnknown) return t;
  int lo = 0, hi = 255;
  for (uint32_t f : frames_of(state)) {
    if (f == 0) continue;
    const Element& e = g_->at(frames_[f].pos);
    if (e.op != Op::Bytes) continue;
    if (b < e.lo)
      hi = std::min(hi, e.lo - 1);
    else if (b > e.hi)
      lo = std::max(lo, e.hi + 1);
    else
      lo = std::max(lo, int(e.lo)), hi = std::min(hi, int(e.hi));
  }
  t = advance_byte(state, b);  // (may grow next_)
  auto row = next_.begin() + long(size_t(state) * 256);
  std::fill(row + lo, row + hi + 1, t);
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

// Whether every multi-byte UTF-8 character read from `state` ends at `target`: each lead byte's
// state, then each continuation byte's (the ranges UTF-8 allows after that lead), must agree.
bool GrammarAutomaton::utf8_leads_to(int32_t state, int32_t target) {
  struct Lead {  // lead bytes lo..hi, the range of the byte after them, and how many 80-BF follow
    uint8_t lo, hi, first_lo, first_hi;
    int more;
  };
  constexpr Lead leads[] = {{0xC2, 0xDF, 0x80, 0xBF, 0}, {0xE0, 0xE0, 0xA0, 0xBF, 1}, {0xE1, 0xEC, 0x80, 0xBF, 1},
                            {0xED, 0xED, 0x80, 0x9F, 1}, {0xEE, 0xEF, 0x80, 0xBF, 1}, {0xF0, 0xF0, 0x90, 0xBF, 2},
                            {0xF1, 0xF3, 0x80, 0xBF, 2}, {0xF4, 0xF4, 0x80, 0x8F, 2}};
  // every byte in [lo, hi] from p goes to one state, which after `more` bytes 80-BF is target
  auto uniform = [&](auto&& self, int32_t p, uint8_t lo, uint8_t hi, int more) -> bool {
    int32_t q = transition(p, lo);
    if (q == kDead) return false;
    for (int b = lo + 1; b <= hi; ++b)
      if (transition(p, uint8_t(b)) != q) return false;
    return more == 0 ? q == target : self(self, q, 0x80, 0xBF, more - 1);
  };
  for (const Lead& l : leads) {
    int32_t checked = kDead;  // the lead state just verified (a range's leads usually share it)
    for (int b = l.lo; b <= l.hi; ++b) {
      int32_t p = transition(state, uint8_t(b));
      if (p == checked) continue;
      if (p == kDead || !uniform(uniform, p, l.first_lo, l.first_hi, l.more)) return false;
      checked = p;
    }
  }
  return true;
}

// The state most printable ASCII bytes lead to from `state`, the ASCII bytes that lead there,
// and whether multi-byte characters do too (r.next kDead: none worth testing subtrees against).
void GrammarAutomaton::find_run(int32_t state, Run& r) {
  r.known = true;
  // Most states (a key, a number, punctuation) run on nothing: a few letters, a digit and a space
  // that do not all lead to one state say so at the cost of a few transitions.
  int32_t probe = transition(state, 'e');
  if (probe == kDead) return;
  for (uint8_t b : {'t', 'A', '0', ' ', '.'})
    if (transition(state, b) != probe) return;
  std::array<int32_t, 128> to;
  for (int b = 0; b < 128; ++b) to[size_t(b)] = transition(state, uint8_t(b));
  int32_t best = kDead;
  int most = 0;
  for (int b = 0x20; b < 0x7F && most <= 0x2F; ++b) {  // stop at a majority of the 95 printable bytes
    int n = 0;
    for (int c = 0x20; c < 0x7F; ++c) n += to[size_t(c)] == to[size_t(b)];
    if (to[size_t(b)] != kDead && n > most) most = n, best = to[size_t(b)];
  }
  if (best == kDead || most < 16) return;
  for (int b = 0; b < 128; ++b)
    if (to[size_t(b)] == best) r.ascii[size_t(b) >> 6] |= uint64_t(1) << (b & 63);
  r.next = best;
  r.utf8 = utf8_leads_to(state, best);
}

// How long the run from `state` lasts: follow the chain while each state runs on the same bytes
// (a length-bounded string: a state per character written) until a state runs on others, loops
// to itself (for ever), or one whose run is known; then count back. A chain is followed at most
// kMaxRun states: the run of its last one is then only a lower bound, computed again when asked.
const GrammarAutomaton::Run& GrammarAutomaton::run_of(int32_t state) {
  constexpr size_t kMaxRun = 256;  // more than the characters below any trie node (chars_below)
  if (runs_[size_t(state)].exact) return runs_[size_t(state)];
  auto known = [&](int32_t s) -> const Run& {
    if (!runs_[size_t(s)].known) {
      Run r;
      find_run(s, r);  // (may intern states: runs_ grows)
      runs_[size_t(s)] = r;
    }
    return runs_[size_t(s)];
  };
  std::vector<int32_t> chain = {state};
  for (;;) {
    int32_t s = chain.back();
    Run r = known(s);
    if (r.next == kDead || r.next == s || chain.size() >= kMaxRun) break;
    const Run& n = known(r.next);
    if (n.next == kDead || n.ascii != r.ascii || n.utf8 != r.utf8 || n.exact) break;
    chain.push_back(r.next);
  }
  for (size_t k = chain.size(); k-- > 0;) {
    Run& r = runs_[size_t(chain[k])];
    r.exact = true;
    if (r.next == kDead) {
      r.run = 0;
    } else if (r.next == chain[k]) {
      r.run = kForever;
    } else if (k + 1 == chain.size()) {  // the chain stopped here: its next runs on other bytes, or is known
      const Run& n = runs_[size_t(r.next)];
      bool same = n.next != kDead && n.ascii == r.ascii && n.utf8 == r.utf8;
      r.run = !same ? 1 : n.run == kForever ? kForever : n.run + 1;
      r.exact = !same || n.exact;
      if (chain.size() >= kMaxRun && same && !n.exact) r.run = 1, r.exact = false;
    } else {
      const Run& n = runs_[size_t(chain[k + 1])];
      r.run = n.run == kForever ? kForever : n.run + 1;
      r.exact = n.exact;
    }
  }
  return runs_[size_t(state)];
}

// Every token below `node` is allowed from `state` (the state after the node's bytes) when the
// subtree is big, its bytes are characters of the state's run (ASCII of the run, whole UTF-8
// characters from the node on), and no path holds more characters than the run lasts.
bool GrammarAutomaton::skips_below(size_t node, int32_t state) {
  const TokenTrie& t = *trie_;
  if (t.end(node) - node <= TokenTrie::kSummaryMinNodes || !t.utf8_below(node)) return false;
  const Run& r = run_of(state);
  uint32_t chars = t.chars_below(node);  // 255: that many or more
  if (r.run == 0 || (r.run != kForever && (r.run < chars || chars == 255))) return false;
  const auto& below = t.bytes_below(node);
  return (below[0] & ~r.ascii[0]) == 0 && (below[1] & ~r.ascii[1]) == 0 && (r.utf8 || (below[2] | below[3]) == 0);
}

// One pass over the trie in preorder: scan_states_[d] is the state after the first d bytes of the
// current node's path; a dead transition skips the node's whole subtree, and so does a subtree
// whose tokens are all allowed (skips_below). Where the state runs on most bytes (free text),
// most tokens are allowed: the mask starts with every text token and the scan clears the
// rejected ones; elsewhere it starts empty and the scan sets the allowed ones.
void GrammarAutomaton::scan_trie(int32_t state, TokenMask& bits) {
  scan_states_.resize(trie_->max_depth() + 1);
  scan_states_[0] = state;
  const TokenTrie& t = *trie_;
  const Run& start = run_of(state);
  bool dense = start.run != 0 && std::popcount(start.ascii[0]) + std::popcount(start.ascii[1]) >= 64;
  if (dense) bits = t.text_bits();
  auto set = [&](int32_t id) { bits[size_t(id) >> 6] |= uint64_t(1) << (id & 63); };
  auto clear = [&](int32_t id) { bits[size_t(id) >> 6] &= ~(uint64_t(1) << (id & 63)); };
  for (size_t i = 0, n = t.nodes(); i < n;) {
    uint32_t d = t.depth(i);
    int32_t s = transition(scan_states_[d - 1], t.byte(i));
    if (s == kDead) {
      if (dense) {
        for (int32_t id : t.tokens_at(i)) clear(id);
        for (int32_t id : t.tokens_below(i)) clear(id);
      }
      i = t.end(i);
      continue;
    }
    scan_states_[d] = s;
    if (!dense)
      for (int32_t id : t.tokens_at(i)) set(id);
    if (skips_below(i, s)) {
      if (!dense)
        for (int32_t id : t.tokens_below(i)) set(id);
      i = t.end(i);
      continue;
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
