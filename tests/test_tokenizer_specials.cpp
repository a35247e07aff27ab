// Special tokens as llama.cpp treats them (docs/formats.md §4.2, §4.7): token types corrected by
// text, end of generation, Phi-3's whitespace after special tokens, the order overlapping special
// texts are taken in, a BOS typed in the text surviving the round trip, and the error for a
// pre-tokenizer vkllm does not support. Ids of real vocabularies come from tests/data/vocab.
#include <fmt/format.h>

#include "catch.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "text/tokenizer.h"
#include "tokenizer_vocabs.h"

using namespace vkllm;
using Ids = std::vector<int32_t>;

namespace {

std::string vocab_path(const std::string& name) {
  return fmt::format("{}/tests/data/vocab/ggml-vocab-{}.gguf", VKLLM_SOURCE_DIR, name);
}

Tokenizer load_specials(const std::string& name) { return Tokenizer::from_gguf(GgufFile::open(vocab_path(name))); }

// The test BPE vocabulary with extra tokens of the given texts and types appended.
VocabConfig with_tokens(std::vector<std::pair<std::string, TokenType>> extra) {
  VocabConfig v = test::bpe_test_vocab("gpt-2");
  for (auto& [text, type] : extra) {
    v.tokens.push_back(text);
    v.types.push_back(type);
  }
  return v;
}

}  // namespace

TEST_CASE("end-of-generation texts are control tokens whatever the file says", "[tokenizer][vocab]") {
  Tokenizer qwen = load_specials("qwen2");
  // Qwen2 ships </s> as a normal BPE token (id 128247): now one control token.
  CHECK(qwen.text(128247) == "</s>");
  CHECK(qwen.type(128247) == TokenType::Control);
  CHECK(qwen.is_end_of_generation(128247));
  CHECK(qwen.is_end_of_generation(151643));  // <|endoftext|>, the eos
  CHECK(qwen.is_end_of_generation(151645));  // <|im_end|>
  CHECK(qwen.encode("a</s>b", false) == Ids{64, 128247, 65});
  CHECK(qwen.encode("a</s>b", false, false) == Ids{64, 522, 82, 51407});  // as text: "</", "s", ">b"
  CHECK(qwen.decode(Ids{64, 128247, 65}) == "a</s>b");
  // Phi-3 ships </s> as user-defined, so it was matched even without special parsing.
  Tokenizer phi3 = load_specials("phi-3");
  CHECK(phi3.type(2) == TokenType::Control);
  CHECK(phi3.encode("</s>", false, false) != Ids{2});
  for (int32_t id : {2, 32000, 32007}) CHECK(phi3.is_end_of_generation(id));  // </s> <|endoftext|> <|end|>
  CHECK(!phi3.is_end_of_generation(32010));                                   // <|user|>
  // StarCoder: <fim_pad> is found by its text and ends generation; <fim_prefix> does not.
  Tokenizer starcoder = load_specials("starcoder");
  CHECK(starcoder.is_end_of_generation(4));
  CHECK(!starcoder.is_end_of_generation(1));
}

TEST_CASE("Phi-3 drops the whitespace after special tokens", "[tokenizer][vocab]") {
  Tokenizer phi3 = load_specials("phi-3");
  // <|user|> has RSTRIP: the newline goes, and "Hello" gets the prefix space after a special token.
  CHECK(phi3.encode("<|user|>\nHello", false) == Ids{32010, 15043});
  CHECK(phi3.encode("<|user|>\nHello", false) == phi3.encode("<|user|>Hello", false));
  CHECK(phi3.encode("<|user|> \t\n", false) == Ids{32010});
  // <|endoftext|>, <s> and <unk> keep what follows them.
  CHECK(phi3.encode("<|endoftext|> y", false) == Ids{32000, 29871, 343});
  CHECK(phi3.decode(phi3.encode("<|endoftext|> y", false), false) == "<|endoftext|> y");
  // The same vocabulary under another name has no RSTRIP.
  VocabConfig v = read_vocab(GgufFile::open(vocab_path("phi-3")));
  v.model_name = "llama-spm";
  CHECK(Tokenizer(v).encode("<|user|>\nHello", false) == Ids{32010, 29871, 13, 10994});
}

TEST_CASE("llama.cpp's type corrections by text", "[tokenizer]") {
  const auto N = TokenType::Normal, U = TokenType::UserDefined, C = TokenType::Control;
  // gpt-oss: message tokens always shown; with <|return|> and <|call|>, <|end|> ends a message only.
  Tokenizer harmony(with_tokens({{"<|channel|>", N}, {"<|end|>", C}, {"<|return|>", N}, {"<|call|>", N}}));
  int32_t channel = harmony.find("<|channel|>"), end = harmony.find("<|end|>");
  CHECK(harmony.type(channel) == U);
  CHECK(harmony.type(end) == U);
  CHECK(!harmony.is_end_of_generation(end));
  CHECK(harmony.is_end_of_generation(harmony.find("<|return|>")));
  CHECK(harmony.type(harmony.find("<|call|>")) == C);
  CHECK(harmony.encode("<|channel|>", false, false) == Ids{channel});
  // Without <|call|>, <|end|> ends generation.
  Tokenizer phi(with_tokens({{"<|end|>", N}, {"<|return|>", N}}));
  CHECK(phi.is_end_of_generation(phi.find("<|end|>")));
  // Gemma 4: with <|tool_response>, </s> is a plain token.
  Tokenizer gemma(with_tokens({{"</s>", C}, {"<|tool_response>", U}}));
  CHECK(gemma.type(gemma.find("</s>")) == N);
  CHECK(!gemma.is_end_of_generation(gemma.find("</s>")));
  CHECK(gemma.type(gemma.find("<|tool_response>")) == C);
  // FIM tokens by text, unless the file names the role's token.
  VocabConfig fim = with_tokens({{"<|fim_prefix|>", N}, {"<|fim_pad|>", N}, {"<|file_sep|>", U}});
  Tokenizer by_text(fim);
  CHECK(by_text.type(by_text.find("<|fim_prefix|>")) == C);
  CHECK(!by_text.is_end_of_generation(by_text.find("<|fim_prefix|>")));
  CHECK(by_text.is_end_of_generation(by_text.find("<|fim_pad|>")));
  CHECK(by_text.is_end_of_generation(by_text.find("<|file_sep|>")));
  fim.fim_pre = fim.fim_pad = 260;  // "hello": the file says so
  Tokenizer by_id(fim);
  CHECK(by_id.type(by_id.find("<|fim_prefix|>")) == N);
  CHECK(by_id.type(by_id.find("<|fim_pad|>")) == N);
  CHECK(by_id.is_end_of_generation(260));
  CHECK(by_id.type(by_id.find("<|file_sep|>")) == C);
}

TEST_CASE("overlapping special texts are taken longest first", "[tokenizer]") {
  const auto U = TokenType::UserDefined;
  Tokenizer t(with_tokens({{"ab", U}, {"bcd", U}, {"aa", U}}));
  int32_t ab = t.find("ab"), bcd = t.find("bcd"), aa = t.find("aa");
  // bcd is longer, so it is split out first and ab no longer fits ("a" stays text).
  CHECK(t.encode("abcd", false) == Ids{'a', bcd});
  CHECK(t.encode("abab", false) == Ids{ab, ab});
  CHECK(t.encode("aaa", false) == Ids{aa, 'a'});
  CHECK(t.encode("xaabcdab", false) == Ids{'x', aa, bcd, ab});
}

TEST_CASE("a BOS typed in the text survives the round trip", "[tokenizer][vocab]") {
  Tokenizer llama3 = load_specials("llama-bpe");
  const std::string typed = "<|begin_of_text|>Hello";
  Ids plain = llama3.encode(typed, false);
  CHECK(plain == Ids{128000, 9906});
  CHECK(llama3.decode(plain, false) == typed);
  CHECK(llama3.decode(plain) == "Hello");  // as if encode had added that BOS
  Ids added = llama3.encode(typed, true);
  CHECK(added == Ids{128000, 128000, 9906});
  CHECK(llama3.decode(added) == typed);
  Tokenizer spm = load_specials("llama-spm");
  CHECK(spm.decode(spm.encode("<s>Hi", false), false) == "<s>Hi");
  CHECK(spm.decode(spm.encode("<s>Hi", true)) == "<s>Hi");
}

TEST_CASE("a pre-tokenizer vkllm does not support is an error at load", "[tokenizer][vocab]") {
  VocabConfig v = read_vocab(GgufFile::open(vocab_path("gpt-2")));
  v.pre = "deepseek-coder";
  GgufWriter w;
  write_vocab(w, v);
  CHECK_THROWS_WITH(Tokenizer::from_gguf(GgufFile::parse(w.bytes(), "coder.gguf")),
                    Catch::StartsWith("coder.gguf: BPE pre-tokenizer \"deepseek-coder\" is not supported (known: "));
}
