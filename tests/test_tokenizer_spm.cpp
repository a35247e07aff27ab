// SentencePiece ("llama") tokenizer against hand-checked ids: highest score merges first, leftmost
// on ties, byte fallback, the prefix space, special tokens, streaming decode.
#include "catch.h"
#include "error.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "text/tokenizer.h"
#include "tokenizer_vocabs.h"

using namespace vkllm;
using Ids = std::vector<int32_t>;

TEST_CASE("SPM tokenizer merges by score with hand-checked ids", "[tokenizer]") {
  Tokenizer t(test::spm_test_vocab());
  CHECK(t.kind() == Tokenizer::Kind::Spm);
  CHECK(t.add_bos());
  CHECK(t.add_space_prefix());
  // "▁hello▁world": he(-1), ll(-2), llo(-3), hello(-4), ▁hello(-5), or, wor, ld, world, ▁world.
  CHECK(t.encode("hello world", false) == Ids{271, 276});
  CHECK(t.encode("hello world", true) == Ids{1, 271, 276});
  // bc (score -1) beats ab (-2) although ab is further left.
  CHECK(t.encode("abc", false) == Ids{259, 278, 282});
  // Equal scores: the leftmost pair merges first.
  CHECK(t.encode("lll", false) == Ids{259, 268, 262});
  // Characters that are no token fall back to their UTF-8 bytes <0xNN> (id 3 + byte).
  CHECK(t.encode("hé", false) == Ids{259, 260, 3 + 0xC3, 3 + 0xA9});
  CHECK(t.encode("\n", false) == Ids{259, 3 + 0x0A});
  CHECK(t.encode("😀", false) == Ids{259, 3 + 0xF0, 3 + 0x9F, 3 + 0x98, 3 + 0x80});
  CHECK(t.encode("", true) == Ids{1});
  CHECK(t.encode("", false).empty());
}

TEST_CASE("SPM tokenizer leading space and special tokens", "[tokenizer]") {
  Tokenizer t(test::spm_test_vocab());
  // A space after each special token too (llama.cpp's is_prev_special).
  CHECK(t.encode("<s>hello", false) == Ids{1, 271});
  CHECK(t.encode("hello</s>world", false) == Ids{271, 2, 276});
  // parse_special off: control tokens are text, user-defined tokens still match.
  CHECK(t.encode("</s>", false, false) == Ids{259, 3 + '<', 3 + '/', 3 + 's', 3 + '>'});
  CHECK(t.encode("<|user|>hello", false, false) == Ids{277, 271});
  CHECK(t.decode(Ids{1, 271, 276}) == "hello world");  // BOS and the prefix space dropped
  CHECK(t.decode(Ids{1, 1, 271}) == "<s>hello");       // a literal <s> stays
  CHECK(t.decode(Ids{271, 2, 276}) == "hello</s>world");
  CHECK(t.decode(Ids{259, 259, 271}) == "  hello");
  CHECK(t.piece(271) == " hello");
  CHECK(t.piece(3 + 0x41) == "A");
  CHECK(t.is_end_of_generation(2));
  CHECK(!t.is_end_of_generation(1));
  CHECK_THROWS_WITH(t.decode(Ids{5000}), "token id 5000 is outside the vocabulary of 283 tokens");
  VocabConfig v = test::spm_test_vocab();
  v.add_space_prefix = false;
  v.add_bos = false;
  Tokenizer no_prefix(v);
  CHECK(no_prefix.encode("hello world", true) == Ids{270, 276});
  CHECK(no_prefix.decode(Ids{270, 276}) == "hello world");
}

TEST_CASE("SPM tokenizer streams UTF-8 split across byte tokens", "[tokenizer]") {
  Tokenizer t(test::spm_test_vocab());
  Ids ids = t.encode("hé😀!", false);
  Detokenizer d(t);
  std::string streamed;
  for (int32_t id : ids) {
    std::string part = d.push(id);
    CHECK(complete_utf8_prefix(part) == part.size());  // never half a character
    streamed += part;
  }
  streamed += d.flush();
  CHECK(streamed == " hé😀!");
  // An incomplete character at the end comes out of flush() as raw bytes.
  Detokenizer cut(t);
  CHECK(cut.push(3 + 0xE2).empty());
  CHECK(cut.push(3 + 0x82).empty());
  CHECK(cut.flush() == "\xe2\x82");
  CHECK(complete_utf8_prefix("a\xf0\x9f") == 1);
  CHECK(complete_utf8_prefix("a\xff") == 2);
  CHECK(complete_utf8_prefix("\x80\x80\x80\x80") == 4);
}

TEST_CASE("SPM tokenizer from a fixture GGUF and vocabulary errors", "[tokenizer]") {
  GgufWriter w;
  write_vocab(w, test::spm_test_vocab());
  Tokenizer t = Tokenizer::from_gguf(GgufFile::parse(w.bytes(), "vocab.gguf"));
  CHECK(t.vocab_size() == 283);
  CHECK(t.encode("hello world", true) == Ids{1, 271, 276});
  FixtureSpec spec;
  Tokenizer f = Tokenizer::from_gguf(GgufFile::parse(make_fixture_model(spec), "fixture.gguf"));
  CHECK(f.vocab_size() == spec.vocab_size);
  CHECK(f.decode(f.encode("The quick brown fox, 1234!\n", true)) == "The quick brown fox, 1234!\n");
  auto error_of = [](VocabConfig v) {
    try {
      Tokenizer{std::move(v)};
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  VocabConfig bad = test::spm_test_vocab();
  bad.model = "t5";
  CHECK(error_of(bad) == "tokenizer model \"t5\" is not supported (llama, gpt2, gemma4)");
  bad = test::spm_test_vocab();
  bad.scores.pop_back();
  CHECK(error_of(bad) == "tokenizer has 282 scores for 283 tokens");
  bad = test::spm_test_vocab();
  bad.bos = 999;
  CHECK(error_of(bad) == "BOS/EOS token id 999/2 is outside the vocabulary of 283 tokens");
  GgufWriter none;
  none.add("general.architecture", "llama");
  CHECK_THROWS_WITH(Tokenizer::from_gguf(GgufFile::parse(none.bytes(), "x.gguf")),
                    "x.gguf: has no tokenizer (tokenizer.ggml.model is missing)");
}
