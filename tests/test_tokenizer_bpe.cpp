// Byte-level BPE ("gpt2") tokenizer against hand-checked ids, and the pre-tokenizer splits of each
// supported style (llama-bpe, qwen2, qwen35, smollm, gpt-2, deepseek-llm) on text where they differ.
#include "catch.h"
#include "error.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"
#include "tokenizer_vocabs.h"

using namespace vkllm;
using Ids = std::vector<int32_t>;
using Pieces = std::vector<std::string_view>;

TEST_CASE("BPE tokenizer merges by rank with hand-checked ids", "[tokenizer]") {
  Tokenizer t(test::bpe_test_vocab("gpt-2"));
  CHECK(t.kind() == Tokenizer::Kind::Bpe);
  CHECK(!t.add_bos());  // gpt-2 style adds no BOS unless the file says so
  // "hello" | " world" -> he, ll, llo, hello; Ġw, or, Ġwor, ld, Ġworld.
  CHECK(t.encode("hello world", true) == Ids{260, 265});
  CHECK(t.encode(" hello", false) == Ids{266});
  // Lowest rank first, leftmost on ties: "3 3" (rank 10) merges at 0-1, 2-3, 4-5; then "33 3"
  // (rank 11) can only join the last 33 with the final 3; pairs queued before that are stale.
  CHECK(t.encode("3333333", false) == Ids{268, 268, 269});
  // Bytes without merges are their own ids here (id = byte value), invalid UTF-8 included.
  CHECK(t.encode("😀", false) == Ids{0xF0, 0x9F, 0x98, 0x80});
  CHECK(t.encode("\xff\xfe", false) == Ids{0xFF, 0xFE});
  CHECK(t.encode("a\n", false) == Ids{'a', '\n'});
  CHECK(t.decode(Ids{260, 265}) == "hello world");
  CHECK(t.piece(265) == " world");
  CHECK(t.piece('\n') == "\n");
}

TEST_CASE("BPE tokenizer special tokens and end of generation", "[tokenizer]") {
  Tokenizer t(test::bpe_test_vocab("gpt-2"));
  CHECK(t.encode("hello<|im_end|>", false) == Ids{260, 267});
  // As text: <| im _ end |> pieces, no merges among them.
  CHECK(t.encode("hello<|im_end|>", false, false) == Ids{260, '<', '|', 'i', 'm', '_', 'e', 'n', 'd', '|', '>'});
  CHECK(t.decode(Ids{260, 267}) == "hello<|im_end|>");
  CHECK(t.is_end_of_generation(256));  // eos
  CHECK(t.is_end_of_generation(267));  // <|im_end|> by its text
  CHECK(!t.is_end_of_generation(260));
  VocabConfig v = test::bpe_test_vocab("llama-bpe");
  Tokenizer llama3(v);
  CHECK(llama3.add_bos());  // llama-bpe defaults to BOS
  CHECK(llama3.encode("hello", true) == Ids{256, 260});
  CHECK(llama3.decode(Ids{256, 260}) == "hello");
  // llama-bpe: digits in threes, and a word that is a whole token skips the merges.
  CHECK(llama3.encode("3333333", false) == Ids{269, 269, '3'});
  v.add_bos = false;
  CHECK(Tokenizer(v).encode("hello", true) == Ids{260});
  CHECK(Tokenizer(test::bpe_test_vocab("qwen2")).encode("3333333", false) == Ids(7, '3'));
  CHECK_THROWS_WITH(Tokenizer(test::bpe_test_vocab("falcon")),
                    Catch::StartsWith("BPE pre-tokenizer \"falcon\" is not supported (known: llama-bpe"));
  VocabConfig bad = test::bpe_test_vocab("gpt-2");
  bad.merges.push_back("nospace");
  CHECK_THROWS_WITH(Tokenizer(bad), "BPE merge 12 \"nospace\" has no space");
}

TEST_CASE("BPE pre-tokenizer splits per style", "[tokenizer]") {
  PreTokenizer llama3("llama-bpe"), qwen2("qwen2"), smollm("smollm"), gpt2("gpt-2"), deepseek("deepseek-llm");
  CHECK(llama3.split("Hello world") == Pieces{"Hello", " world"});
  CHECK(llama3.split("3333333") == Pieces{"333", "333", "3"});
  CHECK(qwen2.split("3333333") == Pieces(7, "3"));
  CHECK(smollm.split("ab12") == Pieces{"ab", "1", "2"});
  CHECK(gpt2.split("3333333") == Pieces{"3333333"});
  // Contractions are case-insensitive in llama-bpe, case-sensitive in gpt-2.
  CHECK(llama3.split("I'M here") == Pieces{"I", "'M", " here"});
  CHECK(gpt2.split("I'M here") == Pieces{"I", "'", "M", " here"});
  // A space before a letter joins it; other whitespace runs keep their last space for the word.
  CHECK(gpt2.split("a   b") == Pieces{"a", "  ", " b"});
  CHECK(llama3.split("a\n\n  b") == Pieces{"a", "\n\n", " ", " b"});
  CHECK(llama3.split("x = 1;\n") == Pieces{"x", " =", " ", "1", ";\n"});
  CHECK(llama3.split("Ünïcödé 世界") == Pieces{"Ünïcödé", " 世界"});
  CHECK(deepseek.split("Hello, 世界 123") == Pieces{"Hello", ",", " ", "世界", " ", "123"});
  // qwen35 keeps a combining mark (U+0301) with its letter; qwen2 splits it off.
  PreTokenizer qwen35("qwen35");
  CHECK(qwen35.split("cafe\u0301 au") == Pieces{"cafe\u0301", " au"});
  CHECK(qwen2.split("cafe\u0301 au") == Pieces{"cafe", "\u0301", " au"});
  CHECK(qwen35.split("3333333") == Pieces(7, "3"));
  // Invalid UTF-8 never matches; it stays in between as its own piece.
  CHECK(gpt2.split("ab\xff"
                   "cd") == Pieces{"ab", "\xff", "cd"});
  CHECK(llama3.split("").empty());
}
