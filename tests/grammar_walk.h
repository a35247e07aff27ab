// Grammar tests' shared pieces: the repository's real vocabularies with their token tries, a
// compiled grammar, string acceptance, and a random walk that generates a whole output by the
// masks alone (random tokens at first, then the shortest way to the grammar's end), checking on
// every step that the mask, the automaton and the matcher's token-by-token answer agree.
#pragma once
#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "catch.h"
#include "gguf/reader.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/grammar_automaton.h"
#include "text/tokenizer.h"

namespace vkllm::test {

struct GrammarVocab {
  std::unique_ptr<Tokenizer> tok;
  std::shared_ptr<grammar::TokenTrie> trie;
};

// tests/data/vocab/ggml-vocab-<name>.gguf, loaded once per process.
inline const GrammarVocab& grammar_vocab(const std::string& name) {
  static std::map<std::string, GrammarVocab> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    GgufFile f = GgufFile::open(std::string(VKLLM_SOURCE_DIR) + "/tests/data/vocab/ggml-vocab-" + name + ".gguf");
    GrammarVocab v;
    v.tok = std::make_unique<Tokenizer>(Tokenizer::from_gguf(f));
    v.trie = std::make_shared<grammar::TokenTrie>(*v.tok);
    it = cache.emplace(name, std::move(v)).first;
  }
  return it->second;
}

inline std::shared_ptr<grammar::GrammarAutomaton> compile(const std::string& gbnf, const GrammarVocab& v) {
  auto g = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf, v.tok.get()));
  return std::make_shared<grammar::GrammarAutomaton>(g, v.trie);
}

inline bool accepts(grammar::GrammarAutomaton& a, std::string_view s) {
  int32_t st = a.after_bytes(a.initial(), s);
  return st >= 0 && a.accepting(st);
}

inline bool viable(grammar::GrammarAutomaton& a, std::string_view s) { return a.after_bytes(a.initial(), s) >= 0; }

// The shortest way from an automaton state to the end of the grammar: bytes and whole (special)
// tokens, found breadth first. Each move is a token id: a single-byte text token or a
// special one. Empty when the state accepts already.
inline std::vector<int32_t> shortest_completion(grammar::GrammarAutomaton& a, const Tokenizer& tok, int32_t state) {
  std::vector<int32_t> moves;  // a single-byte token per byte, and the special tokens
  std::vector<bool> byte_seen(256);
  for (uint32_t u = 0; u < tok.vocab_size(); ++u) {
    int32_t id = int32_t(u);
    if (a.trie().is_end_of_generation(id)) continue;
    if (!a.trie().is_text(id)) {
      moves.push_back(id);
    } else if (a.trie().bytes(id).size() == 1 && !byte_seen[uint8_t(a.trie().bytes(id)[0])]) {
      byte_seen[uint8_t(a.trie().bytes(id)[0])] = true;
      moves.push_back(id);
    }
  }
  std::map<int32_t, std::pair<int32_t, int32_t>> from;  // state -> (previous state, token)
  std::vector<int32_t> frontier = {state};
  from[state] = {-1, -1};
  for (size_t i = 0; i < frontier.size() && i < 20000; ++i) {
    int32_t s = frontier[i];
    if (a.accepting(s)) {
      std::vector<int32_t> path;
      for (int32_t at = s; from[at].first >= 0; at = from[at].first) path.insert(path.begin(), from[at].second);
      return path;
    }
    for (int32_t id : moves) {
      int32_t next = a.after_token(s, id);
      if (next >= 0 && from.emplace(next, std::make_pair(s, id)).second) frontier.push_back(next);
    }
  }
  FAIL("no way to finish the grammar from this state");
  return {};
}

// Generates an output token by token from the masks; returns its text (the end-of-generation
// token not included), or fails the test on a disagreement. random_steps: tokens drawn at random
// (by a random first byte, then a random token) before closing in.
inline std::string walk(const std::shared_ptr<grammar::GrammarAutomaton>& a, const Tokenizer& tok, uint64_t seed,
                        int random_steps, int max_steps = 3000) {
  std::mt19937_64 rng(seed);
  grammar::GrammarMatcher m(a);
  int32_t state = a->initial();
  std::vector<int32_t> closing;  // the planned completion, next move last
  const std::string closers = "\"]}01tfn:,{[ \n</>=abcdeghijklmopqrsuvwxyz_";
  std::set<int32_t> closed;  // states the closing phase has been in
  std::string out;
  for (int step = 0; step < max_steps; ++step) {
    std::shared_ptr<const grammar::TokenMask> mask = m.allowed();
    std::vector<int32_t> ok;
    for (uint32_t id = 0; id < tok.vocab_size(); ++id)
      if (grammar::allowed(*mask, int32_t(id))) ok.push_back(int32_t(id));
    REQUIRE(!ok.empty());
    // The mask agrees with stepping the automaton token by token, on a sample of tokens.
    for (int k = 0; k < 64; ++k) {
      int32_t id = int32_t(rng() % tok.vocab_size());
      if (a->trie().is_end_of_generation(id)) continue;
      grammar::GrammarMatcher probe = m;
      INFO("token " << id << " '" << tok.piece(id) << "' after '" << out << "'");
      CHECK(probe.accept(id) == grammar::allowed(*mask, id));
      CHECK(m.allows(id) == grammar::allowed(*mask, id));
    }
    for (int32_t id : a->trie().end_of_generation()) CHECK(m.allows(id) == grammar::allowed(*mask, id));
    for (int k = 0; k < 64; ++k) CHECK(m.allows(ok[rng() % ok.size()]));
    int32_t pick = -1;
    if (step < random_steps) {
      pick = ok[rng() % ok.size()];
      if (a->trie().is_text(pick)) {  // a random first byte, then a random token starting with it
        std::vector<int32_t> group;
        char first = a->trie().bytes(pick)[0];
        for (int32_t id : ok)
          if (a->trie().is_text(id) && a->trie().bytes(id)[0] == first) group.push_back(id);
        pick = group[rng() % group.size()];
      }
    } else {
      for (int32_t id : ok)
        if (a->trie().is_end_of_generation(id)) pick = id;
      // JSON closes fastest by its closers; where they would go round in circles (free text),
      // the shortest completion. The allowed one-byte tokens are found once per step: a vocabulary
      // pass per closer was most of this test's time.
      std::vector<int32_t> single;
      for (int32_t id : ok)
        if (a->trie().is_text(id) && a->trie().bytes(id).size() == 1) single.push_back(id);
      for (size_t c = 0; pick < 0 && c < closers.size(); ++c)
        for (int32_t id : single)
          if (a->trie().bytes(id)[0] == closers[c] && !closed.count(a->after_token(state, id))) {
            pick = id;
            closing.clear();  // a plan made before is stale now
            break;
          }
      for (int32_t id : single)
        if (pick < 0 && !closed.count(a->after_token(state, id))) pick = id, closing.clear();
      if (pick < 0) {
        if (closing.empty()) {
          INFO("closing after '" << out << "'");
          closing = shortest_completion(*a, tok, state);
          std::reverse(closing.begin(), closing.end());
        }
        REQUIRE(!closing.empty());
        pick = closing.back();
        closing.pop_back();
        REQUIRE(grammar::allowed(*mask, pick));
      }
    }
    REQUIRE(m.accept(pick));
    if (m.finished()) return out;
    state = a->after_token(state, pick);
    if (step >= random_steps) closed.insert(state);
    REQUIRE(state >= 0);
    out += a->trie().is_text(pick) ? a->trie().bytes(pick) : tok.piece(pick);
  }
  FAIL("the walk did not finish in " << max_steps << " tokens: " << out);
  return out;
}

}  // namespace vkllm::test
