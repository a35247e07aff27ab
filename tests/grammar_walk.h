// Grammar tests' shared pieces: the repository's real vocabularies with their token tries, a
// compiled grammar, string acceptance, and a random walk that generates a whole output by the
// masks alone (random tokens at first, then tokens that close the structure), checking on every
// step that the mask and the automaton agree.
#pragma once
#include <map>
#include <memory>
#include <random>
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

// Generates an output token by token from the masks; returns its text (the end-of-generation
// token not included), or fails the test on a disagreement. random_steps: tokens drawn at random
// (by a random first byte, then a random token) before closing in.
inline std::string walk(const std::shared_ptr<grammar::GrammarAutomaton>& a, const Tokenizer& tok, uint64_t seed,
                        int random_steps, int max_steps = 3000) {
  std::mt19937_64 rng(seed);
  grammar::GrammarMatcher m(a);
  std::string out;
  const std::string closers = "\"]}01tfn:,{[ ";
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
    }
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
      for (size_t c = 0; pick < 0 && c < closers.size(); ++c)
        for (int32_t id : ok)
          if (a->trie().bytes(id) == std::string(1, closers[c])) {
            pick = id;
            break;
          }
      for (int32_t id : ok)
        if (pick < 0 && a->trie().bytes(id).size() == 1) pick = id;
      if (pick < 0) pick = ok[0];
    }
    REQUIRE(m.accept(pick));
    if (m.finished()) return out;
    out += a->trie().is_text(pick) ? a->trie().bytes(pick) : tok.piece(pick);
  }
  FAIL("the walk did not finish in " << max_steps << " tokens: " << out);
  return out;
}

}  // namespace vkllm::test
