// SentencePiece-style BPE ("gemma4", Gemma 4's tokenizer) against hand-checked ids: merges by rank
// over UTF-8 characters with spaces as U+2581, lines split from runs of newlines, a run of newlines
// that is a token taken whole, <0xNN> byte fallback, BOS always added, and llama.cpp's Gemma 4
// end-of-generation set. The ids are worked out from tests/tokenizer_vocabs.h.
#include "catch.h"
#include "text/tokenizer.h"
#include "tokenizer_vocabs.h"

using namespace vkllm;
using Ids = std::vector<int32_t>;

namespace {

constexpr int32_t byte(unsigned char b) { return 7 + b; }  // <0xNN>

}  // namespace

TEST_CASE("SentencePiece-style BPE merges by rank with hand-checked ids", "[tokenizer]") {
  Tokenizer t(test::gemma4_test_vocab());
  CHECK(t.kind() == Tokenizer::Kind::SpmBpe);
  CHECK(t.pre() == "gemma4");
  CHECK(!t.add_space_prefix());
  CHECK(t.add_bos());  // though the vocabulary says false
  // h e l l o ▁ w o r l d: ll, llo, he, hello; or, ▁w, ▁wor, ld, ▁world (ranks 0, 2, 5, 6; 8 to 12).
  // The pair "w o" (rank 13) went stale when "o r" (rank 8) took its o.
  CHECK(t.encode("hello world", false) == Ids{280, 285});
  CHECK(t.encode("hello world", true) == Ids{2, 280, 285});
  // No prefix space is added; ▁h (rank 1) comes before he (rank 5), so " hello" is ▁hello.
  CHECK(t.encode(" hello", false) == Ids{278});
  CHECK(t.encode("  ", false) == Ids{266, 266});  // two ▁: nothing merges them
  // A merge whose text is no token ("wo"): its bytes. A character that is a token stays one; one
  // that is not becomes its bytes.
  CHECK(t.encode("wo", false) == Ids{byte('w'), byte('o')});
  CHECK(t.encode("\xc3\xa9 \xc3\xbc", false) == Ids{286, 266, byte(0xC3), byte(0xBC)});
  CHECK(t.encode("\xff", false) == Ids{byte(0xFF)});
}

TEST_CASE("SentencePiece-style BPE splits lines from runs of newlines", "[tokenizer]") {
  Tokenizer t(test::gemma4_test_vocab());
  CHECK(t.encode("\n\n\n", false) == Ids{265});  // a token no merge makes: taken whole
  // Not a token: merged, leftmost first ("\n \n", rank 7).
  CHECK(t.encode("\n\n\n\n", false) == Ids{264, 264});
  CHECK(t.encode("hello\n\nworld", false) == Ids{280, 264, 271, 281, 284});  // w or ld
  CHECK(t.encode("a\nb", false) == Ids{byte('a'), 263, byte('b')});
}

TEST_CASE("SentencePiece-style BPE special tokens, end of generation and decode", "[tokenizer]") {
  Tokenizer t(test::gemma4_test_vocab());
  CHECK(t.encode("hello<turn|>", false) == Ids{280, 4});
  CHECK(t.encode("hello<turn|>", false, false) ==
        Ids{280, byte('<'), byte('t'), byte('u'), 272, byte('n'), byte('|'), byte('>')});
  // <|tool_response> is user-defined in the file, but it ends generation and so becomes control:
  // matched only when special tokens are parsed.
  CHECK(t.type(5) == TokenType::Control);
  CHECK(t.encode("<|tool_response>", false) == Ids{5});
  CHECK(t.encode("<|tool_response>", false, false).size() > 1);
  // </s> is a plain token for Gemma 4 (llama.cpp), so it is text: here its bytes.
  CHECK(t.type(6) == TokenType::Normal);
  CHECK(t.encode("</s>", false) == Ids{byte('<'), byte('/'), byte('s'), byte('>')});
  CHECK(t.end_of_generation() == Ids{1, 4, 5});  // <eos>, <turn|>, <|tool_response>
  CHECK(!t.is_end_of_generation(6));
  CHECK(t.decode(Ids{2, 280, 285}) == "hello world");
  CHECK(t.decode(Ids{278}) == " hello");
  CHECK(t.decode(Ids{280, 4, 266, 286}) == "hello<turn|> \xc3\xa9");
  CHECK(t.piece(285) == " world");
  CHECK(t.piece(byte(0xC3)) == "\xc3");
}
