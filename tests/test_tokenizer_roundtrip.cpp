// decode(encode(s)) == s for every tokenizer kind and pre-tokenizer style (and the real Gemma 4
// vocabulary, where scripts/fetch_llamacpp fetched it), over tricky text
// (emoji, CJK, combining marks, whitespace runs, invalid UTF-8, literal special tokens) and
// random bytes.
#include <fmt/format.h>

#include <random>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "harness.h"
#include "text/tokenizer.h"
#include "tokenizer_vocabs.h"

using namespace vkllm;

namespace {

std::vector<std::string> tricky_corpus() {
  std::vector<std::string> c = {
      "",
      " ",
      "   ",
      "\n",
      "\t\t\n \r\n\r",
      "hello world",
      " hello world ",
      "multiple    spaces   and\ttabs\t\tand\n\n\nnewlines",
      "emoji 😀👍🏽 family 👨‍👩‍👧 flag 🇺🇳",
      "CJK 世界你好，日本語のテキスト、한국어",
      "combining e\xcc\x81 n\xcc\x83 and precomposed é ñ",
      "Zalgo Z\xcc\xb4\xcc\xa1\xcc\xa2"
      "a\xcc\xb7l\xcc\xb8g\xcc\xb6o",
      "RTL עברית العربية",
      "invalid \xff\xfe bytes",
      "truncated \xe2\x82",
      "\xe2\x82",
      "lone continuation \x80\x80 here",
      "overlong \xc0\xaf and surrogate \xed\xa0\x80",
      std::string("NUL \0 inside", 12),
      "<s> literal specials </s><unk>",
      "<|endoftext|>hello<|im_end|>",
      "<|user|> user defined <|user|>",
      "3333333 numbers 1234567890 3.14159",
      "I'm can't we'LL they've",
      "nbsp\u00a0line sep\u2028ideographic\u3000space",
      "code: for (int i = 0; i < n; ++i) { x[i] += 1; }\n",
      "  leading and trailing  ",
  };
  std::string lng;
  for (int i = 0; i < 200; ++i) lng += fmt::format("word{} 😀 ", i);
  c.push_back(lng);
  return c;
}

std::string random_bytes(std::mt19937& rng) {
  std::string s(rng() % 48, '\0');
  // Mostly ASCII and UTF-8 lead/continuation bytes, so that both valid and broken characters occur.
  for (char& ch : s) {
    uint32_t r = rng() % 10;
    ch = char(r < 5 ? 0x20 + rng() % 95 : r < 8 ? 0x80 + rng() % 64 : 0xC0 + rng() % 64);
  }
  return s;
}

void check_round_trip(const Tokenizer& t, const std::string& what) {
  std::mt19937 rng(3);
  std::vector<std::string> texts = tricky_corpus();
  for (int i = 0; i < 200; ++i) texts.push_back(random_bytes(rng));
  int checked = 0;
  for (const std::string& s : texts) {
    INFO(what << ": \"" << s << "\"");
    CHECK(t.decode(t.encode(s, true, true)) == s);
    CHECK(t.decode(t.encode(s, false, false)) == s);
    CHECK(t.decode(t.encode(s, false, true), false) == s);  // special texts typed in s, BOS included
    // Streaming decode gives the same bytes (without the prefix space rule).
    Detokenizer d(t);
    std::string streamed;
    std::vector<int32_t> ids = t.encode(s, false, false);
    for (int32_t id : ids) streamed += d.push(id);
    streamed += d.flush();
    std::string pieces;
    for (int32_t id : ids) pieces += t.piece(id);
    CHECK(streamed == pieces);
    ++checked;
  }
  CHECK(checked == int(texts.size()));
}

}  // namespace

TEST_CASE("tokenizer round trip SPM", "[tokenizer]") {
  check_round_trip(Tokenizer(test::spm_test_vocab()), "spm test vocab");
  check_round_trip(Tokenizer(fixture_vocab("llama", 1000)), "spm fixture vocab");
  // SentencePiece reads U+2581 as a space, so that one character does not survive.
  Tokenizer t(test::spm_test_vocab());
  CHECK(t.decode(t.encode("a\xe2\x96\x81"
                          "b",
                          true)) == "a b");
}

TEST_CASE("tokenizer round trip BPE for every pre-tokenizer", "[tokenizer]") {
  for (const char* pre : {"llama-bpe", "qwen2", "smollm", "gpt-2", "deepseek-llm", "default"}) {
    check_round_trip(Tokenizer(test::bpe_test_vocab(pre)), pre);
    check_round_trip(Tokenizer(fixture_vocab("gpt2", 1000, pre)), std::string(pre) + " fixture vocab");
  }
}

TEST_CASE("tokenizer round trip SentencePiece-style BPE", "[tokenizer]") {
  check_round_trip(Tokenizer(test::gemma4_test_vocab()), "gemma4 test vocab");
  Tokenizer t(test::gemma4_test_vocab());
  CHECK(t.decode(t.encode("a\xe2\x96\x81"
                          "b",
                          true)) == "a b");
}

TEST_CASE("tokenizer round trip on the Gemma 4 vocabulary", "[tokenizer][vocab]") {
  if (std::string why = test::llamacpp_vocab_missing("gemma-4"); !why.empty()) return test::skip(why);
  check_round_trip(Tokenizer::from_gguf(GgufFile::open(test::llamacpp_vocab("gemma-4"))), "gemma-4");
}
