// The grammar engine: GBNF parsing (every construct, its errors with line and column), matching
// strings byte by byte, partial UTF-8 (a token may hold part of a character), whole-token
// elements, the masks against stepping token by token on real vocabularies, and the errors an
// unusable grammar gets (empty, unsatisfiable, left-recursive, too large).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "error.h"
#include "grammar_walk.h"
#include "text/grammar/utf8_ranges.h"

using namespace vkllm;
using namespace vkllm::test;

namespace {

std::string grammar_error(const std::string& gbnf, const Tokenizer* tok = nullptr) {
  try {
    grammar::parse_gbnf(gbnf, tok);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("grammar: UTF-8 byte sequences of code-point ranges cover exactly the characters", "[grammar]") {
  using grammar::utf8_encode;
  using grammar::utf8_sequences;
  // Every character of a range matches one sequence, and characters just outside match none.
  auto matches = [](const std::vector<std::vector<grammar::ByteRange>>& seqs, uint32_t cp) {
    std::vector<uint8_t> b = utf8_encode(cp);
    for (const auto& s : seqs) {
      if (s.size() != b.size()) continue;
      bool all = true;
      for (size_t i = 0; i < b.size(); ++i) all = all && b[i] >= s[i].lo && b[i] <= s[i].hi;
      if (all) return true;
    }
    return false;
  };
  for (auto [lo, hi] : std::vector<std::pair<uint32_t, uint32_t>>{{0, 0x7F},
                                                                  {0x41, 0x5A},
                                                                  {0x7F, 0x800},
                                                                  {0x100, 0x2FFF},
                                                                  {0xD000, 0xE100},
                                                                  {0xFFFF, 0x10FFFF},
                                                                  {0x1F600, 0x1F64F}}) {
    auto seqs = utf8_sequences(lo, hi);
    for (uint32_t cp = lo > 300 ? lo - 300 : 0; cp <= std::min<uint32_t>(hi + 300, 0x10FFFF);
         cp += (hi - lo > 5000 ? 97 : 1)) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      INFO(fmt::format("U+{:X} in [U+{:X}, U+{:X}]", cp, lo, hi));
      CHECK(matches(seqs, cp) == (cp >= lo && cp <= hi));
    }
    for (uint32_t cp : {lo, hi})
      if (cp < 0xD800 || cp > 0xDFFF) CHECK(matches(seqs, cp));
  }
}

TEST_CASE("grammar: GBNF constructs match the strings they describe", "[grammar]") {
  const GrammarVocab& v = grammar_vocab("qwen2");
  struct Case {
    std::string gbnf;
    std::vector<std::string> yes, no;
  };
  const Case cases[] = {
      {R"(root ::= "abc")", {"abc"}, {"", "ab", "abcd", "abd"}},
      {R"(root ::= "a" | "b" "c")", {"a", "bc"}, {"b", "ac", "abc"}},
      {R"(root ::= [a-c]+ [0-9]?)", {"a", "abc7", "ccc"}, {"", "7", "ad", "a77"}},
      {R"(root ::= [^a-z]*)", {"", "ABC", "1 2\n", "é€😀"}, {"a", "Az"}},
      {R"(root ::= "x"{2,4})", {"xx", "xxx", "xxxx"}, {"x", "xxxxx"}},
      {R"(root ::= ("ab"){3} | "z"{0,1})", {"ababab", "", "z"}, {"abab", "zz"}},
      {R"g(root ::= "(" ( "a" | "[" root "]" )* ")")g", {"()", "(a)", "(aa)", "([(a)])"}, {"(", "(b)", "([a])"}},
      {"root ::= item (\",\" item)*\nitem ::= [0-9]+ # digits\n", {"1", "12,3,456"}, {"", ",", "1,", "a"}},
      {R"(root ::= "\x41\u00e9\U0001F600\n\t\"\\" [\]\-\^])",
       {"Aé😀\n\t\"\\]", "Aé😀\n\t\"\\-", "Aé😀\n\t\"\\^"},
       {"Aé😀"}},
      {R"(root ::= . . "!")", {"ab!", "é😀!"}, {"a!", "abc!"}},
      {"root ::= \"a\" |\n  \"b\"\n\nother ::= \"c\"", {"a", "b"}, {"c"}},
      {R"(root ::= [é-ë] [\u4e00-\u9fff])", {"é中", "ë龥"}, {"e中", "ìA"}},
      {R"(root ::= "a" x? x? "b"
x ::= "")",
       {"ab"},
       {"a", "b"}},
  };
  for (const Case& c : cases) {
    INFO(c.gbnf);
    auto a = compile(c.gbnf, v);
    for (const std::string& s : c.yes) CHECK(accepts(*a, s));
    for (const std::string& s : c.no) CHECK_FALSE(accepts(*a, s));
  }
}

TEST_CASE("grammar: bad and unusable grammars are errors that name the problem", "[grammar]") {
  const GrammarVocab& v = grammar_vocab("qwen2");
  struct Case {
    std::string gbnf, says;
  };
  const Case cases[] = {
      {"", "the grammar is empty"},
      {"# only a comment\n", "the grammar is empty"},
      {"item ::= \"a\"", "no 'root' rule"},
      {"root ::= item", "rule 'item' is used but never defined"},
      {"root ::= \"a\"\nroot ::= \"b\"", "line 2, column 9: rule 'root' is defined twice"},
      {"root ::= \"abc", "line 1, column 14: unterminated string literal"},
      {"root ::= [a-", "unterminated character class"},
      {"root ::= [z-a]", "a character range goes backwards"},
      {"root ::= \"\\q\"", "unknown escape '\\q'"},
      {"root ::= ( \"a\"", "expected ')'"},
      {"root ::= * \"a\"", "'*' repeats nothing"},
      {"root ::= \"a\"{3,2}", "repeats at most fewer times"},
      {"root ::= \"a\"{1,100000}", "a repetition count above 10000"},
      {"root ::= \"a\" ]", "unexpected ']'"},
      {"root = \"a\"", "expected '::='"},
      {"root ::= \"\\uD800\"", "is not a character"},
      {"root ::= a\na ::= \"x\" a", "unsatisfiable: rule 'root' can never complete"},
      {"root ::= root \"x\" | \"y\"", "left-recursive: rule 'root'"},
      {"root ::= a \"x\"\na ::= b a | \"y\"\nb ::= \"\" | \"z\"", "left-recursive: rule 'a'"},
      {"root ::= <[999999999]>", "outside the vocabulary"},
      {"root ::= <no-such-token>", "'<no-such-token>' is not a token"},
      {fmt::format("root ::= \"a\" <[{}]>", v.tok->end_of_generation()[0]), "ends the generation"},
      {"root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')'), "groups nested deeper than 256"},
      {"root ::= " + std::string(200, 'x') + "\n" + std::string(200, 'x') + " ::= \"a\"{10000} \"b\"{10000}", ""},
      {"root ::= " + std::string(6, ' ') +
           "\"aaaaaaaaaaaaaaaaaaaa\"{10000} \"aaaaaaaaaaaaaaaaaaaa\"{10000} "
           "\"aaaaaaaaaaaaaaaaaaaa\"{10000} \"aaaaaaaaaaaaaaaaaaaa\"{10000} \"aaaaaaaaaaaaaaaaaaaa\"{10000} "
           "\"aaaaaaaaaaaaaaaaaaaa\"{10000}",
       "too large"},
  };
  for (const Case& c : cases) {
    INFO(c.gbnf.substr(0, 200));
    std::string e = grammar_error(c.gbnf, v.tok.get());
    if (c.says.empty()) {
      CHECK(e == "");
    } else {
      CHECK(e.find(c.says) != std::string::npos);
      CHECK(e.find('\n') == std::string::npos);
    }
  }
  CHECK(grammar_error("root ::= <[1]>").find("need a model's vocabulary") != std::string::npos);
  CHECK(grammar_error(std::string(grammar::kMaxGbnfBytes + 1, ' ')).find("too large") != std::string::npos);
}

TEST_CASE("grammar: a token may end inside a character, and the next must finish it", "[grammar]") {
  for (const char* name : {"qwen2", "llama-spm"}) {
    const GrammarVocab& v = grammar_vocab(name);
    INFO(name);
    auto a = compile(R"(root ::= "é" [😀-😂] "x")", v);  // C3 A9, F0 9F 98 80..82, 78
    grammar::GrammarMatcher m(a);
    auto allowed_texts = [&](grammar::GrammarMatcher& mm) {
      std::set<std::string> s;
      auto mask = mm.allowed();
      for (uint32_t id = 0; id < v.tok->vocab_size(); ++id)
        if (grammar::allowed(*mask, int32_t(id))) s.insert(a->trie().bytes(int32_t(id)));
      return s;
    };
    std::set<std::string> first = allowed_texts(m);
    // Every allowed token is a prefix of some valid output; the lone lead byte is among them.
    CHECK(first.count("\xC3") == 1);
    for (const std::string& t : first) CHECK(viable(*a, t));
    int32_t lead = v.tok->find(v.tok->kind() == Tokenizer::Kind::Spm ? "<0xC3>" : "Ã");
    REQUIRE(lead >= 0);
    REQUIRE(m.accept(lead));
    for (const std::string& t : allowed_texts(m)) CHECK((uint8_t(t[0]) == 0xA9));
    CHECK_FALSE(accepts(*a, "\xC3\xA9\xF0\x9F\x98\x83x"));  // 😃 is outside the class
    CHECK(accepts(*a, "\xC3\xA9\xF0\x9F\x98\x81x"));
    CHECK(viable(*a, "\xC3\xA9\xF0\x9F"));
    CHECK_FALSE(viable(*a, "\xC3\xA9\xF0\x9E"));
  }
}

TEST_CASE("grammar: whole tokens (<[id]>, <text>, !<...>) match by id, and the end only where it may", "[grammar]") {
  const GrammarVocab& v = grammar_vocab("qwen2");
  int32_t im_end = v.tok->find("<|im_end|>"), im_start = v.tok->find("<|im_start|>");
  REQUIRE(im_end >= 0);
  REQUIRE(im_start >= 0);
  auto a = compile(fmt::format("root ::= <|im_start|> \"ab\" !<[{}]> <[{}]>", im_start, im_start), v);
  grammar::GrammarMatcher m(a);
  auto mask = m.allowed();
  CHECK(grammar::allowed(*mask, im_start));
  CHECK_FALSE(grammar::allowed(*mask, v.tok->find("a")));
  CHECK_FALSE(m.accept(v.tok->find("ab")));
  REQUIRE(m.accept(im_start));
  REQUIRE(m.accept(v.tok->find("ab")));
  mask = m.allowed();
  CHECK_FALSE(grammar::allowed(*mask, im_start));  // !<[im_start]>
  CHECK(grammar::allowed(*mask, v.tok->find("x")));
  for (int32_t eog : v.tok->end_of_generation()) CHECK_FALSE(grammar::allowed(*mask, eog));  // !<...> never ends
  REQUIRE(m.accept(v.tok->find("x")));
  CHECK_FALSE(m.accepting());
  REQUIRE(m.accept(im_start));
  CHECK(m.accepting());
  mask = m.allowed();
  size_t n = 0;
  for (uint32_t id = 0; id < v.tok->vocab_size(); ++id) n += grammar::allowed(*mask, int32_t(id));
  CHECK(n == v.tok->end_of_generation().size());  // only the end remains
  REQUIRE(m.accept(v.tok->end_of_generation()[0]));
  CHECK(m.finished());
}

TEST_CASE("grammar: masks agree with stepping token by token on real vocabularies", "[grammar]") {
  const char* json_like = R"(root ::= "{" ws pair ( "," ws pair )* "}"
pair ::= "\"" [a-z_]+ "\"" ws ":" ws ( [0-9]+ | "\"" [^"\\]* "\"" | "[" ws ( [0-9]+ ( "," ws [0-9]+ )* )? "]" ) ws
ws ::= [ \n]?)";
  for (const char* name : {"qwen2", "llama-bpe", "llama-spm", "phi-3"}) {
    INFO(name);
    const GrammarVocab& v = grammar_vocab(name);
    auto a = compile(json_like, v);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      std::string out = walk(a, *v.tok, seed, 12);
      INFO(out);
      CHECK(accepts(*a, out));
      CHECK(nlohmann::json::accept(out));
    }
  }
}

// The mask skips whole trie subtrees where every character keeps a state on a run (free text,
// a length-bounded string): here every token's bit is checked against stepping its bytes, in
// states inside such runs (unbounded, bounded near and far from the bound, strings that exclude a
// byte, a class without multi-byte characters) and in a prefix that a token ends mid-character.
TEST_CASE("grammar: masks on string runs agree with stepping for every token", "[grammar]") {
  const char* grammars[] = {
      R"(root ::= "\"" [^"\\\x00-\x1F]* "\"")", R"(root ::= "\"" [^"\\\x00-\x1F]{2,9} "\"" "!")",
      R"(root ::= "<" [^<]{0,40} "<" "end")",   R"(root ::= "'" [a-zA-Z ]{0,30} "'")",
      R"(root ::= ( [^\n]{0,3} "\n" )* "#")",
  };
  const char* prefixes[] = {"", "\"", "\"ab", "\"abcdefg", "<", "<x y z", "'", "'Hello wor", "ab\n", "\xC3"};
  for (const char* name : {"qwen2", "llama-spm"}) {
    const GrammarVocab& v = grammar_vocab(name);
    for (const char* g : grammars) {
      auto a = compile(g, v);
      for (const char* p : prefixes) {
        int32_t s = a->after_bytes(a->initial(), p);
        if (s < 0) continue;
        INFO(name << " " << g << " after '" << p << "'");
        std::shared_ptr<const grammar::TokenMask> mask = a->mask(s);
        size_t disagree = 0, allowed = 0;
        for (uint32_t id = 0; id < v.tok->vocab_size(); ++id) {
          bool bit = grammar::allowed(*mask, int32_t(id));
          allowed += bit;
          disagree += bit != a->allows(s, int32_t(id));
        }
        CHECK(disagree == 0);
        CHECK(allowed > 0);
      }
    }
  }
}
