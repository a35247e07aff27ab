// libFuzzer target: the grammar engine and the JSON Schema compiler. Byte 0 picks the input's
// kind (even: GBNF text, odd: a JSON schema, written as JSON or, with bit 1, in Gemma 4's call
// syntax) and seeds the walk; the rest is the text. What compiles is run over a small byte-level
// vocabulary (every byte; some words; every string of one to three of a few pieces, ASCII,
// multi-byte characters and a lone lead byte, so that the trie has subtrees big enough for the
// mask to accept or reject whole; two special tokens):
// at each step the mask must agree with stepping the automaton token by token and with the
// matcher's answer for each token asked before the mask, and a token the mask allows must be
// accepted. Anything but a vkllm::Error (a crash, a sanitizer report, a hang
// past the grammar's limits) is a bug.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string_view>

#include "error.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/grammar_automaton.h"
#include "text/grammar/json_schema_grammar.h"
#include "text/tokenizer.h"

namespace {

using namespace vkllm;

const Tokenizer& vocab() {
  static const Tokenizer t = [] {
    VocabConfig v;
    v.model = "gpt2";
    v.pre = "gpt-2";
    for (int b = 0; b < 256; ++b) v.tokens.emplace_back(gpt2_byte_char(uint8_t(b)));
    for (const char* w : {"{\"", "\":", "\",", "true", "null", "12", "<tool_call>"}) v.tokens.emplace_back(w);
    const std::vector<std::string> pieces = {
        "a", " ", "\"", "\\", "\n", "<", "0", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xC3"};
    auto piece = [](const std::string& p) {  // as GPT-2's byte characters
      std::string out;
      for (unsigned char c : p) out += gpt2_byte_char(c);
      return out;
    };
    for (const std::string& x : pieces)
      for (const std::string& y : pieces) {
        v.tokens.push_back(piece(x + y));
        for (const std::string& z : pieces) v.tokens.push_back(piece(x + y + z));
      }
    v.types.assign(v.tokens.size(), TokenType::Normal);
    v.tokens.emplace_back("<|end|>"), v.types.push_back(TokenType::Control);
    v.tokens.emplace_back("<|channel|>"), v.types.push_back(TokenType::Control);
    v.eos = int32_t(v.tokens.size()) - 2;
    return Tokenizer(std::move(v));
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  static auto trie = std::make_shared<const grammar::TokenTrie>(vocab());
  try {
    std::string gbnf(text);
    if (data[0] & 1) {
      nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, false);
      if (schema.is_discarded()) return 0;
      grammar::GrammarBuilder b;
      if (data[0] & 2) b.gemma_syntax("<|channel|>");  // a special token as the string mark
      gbnf = b.text(b.schema(schema, "schema"));
    }
    auto g = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf, &vocab()));
    auto a = std::make_shared<grammar::GrammarAutomaton>(g, trie);
    grammar::GrammarMatcher m(a);
    std::mt19937 rng(data[0]);
    for (int step = 0; step < 24 && !m.finished(); ++step) {
      std::vector<bool> by_token;  // asked token by token before the mask exists, as the sampler does
      for (uint32_t id = 0; id < vocab().vocab_size(); ++id) by_token.push_back(m.allows(int32_t(id)));
      std::shared_ptr<const grammar::TokenMask> mask = m.allowed();
      std::vector<int32_t> ok;
      for (uint32_t id = 0; id < vocab().vocab_size(); ++id) {
        bool allowed = grammar::allowed(*mask, int32_t(id));
        if (allowed) ok.push_back(int32_t(id));
        if (by_token[id] != allowed) __builtin_trap();  // the matcher's answer and its mask disagree
        if (!trie->is_end_of_generation(int32_t(id))) {
          grammar::GrammarMatcher probe = m;
          if (probe.accept(int32_t(id)) != allowed) __builtin_trap();  // mask and automaton disagree
        }
      }
      if (ok.empty()) break;
      if (!m.accept(ok[rng() % ok.size()])) __builtin_trap();
    }
  } catch (const Error&) {
  }
  return 0;
}
