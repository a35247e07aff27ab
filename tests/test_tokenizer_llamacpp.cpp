// vkllm's tokenizer against llama.cpp's own (llama_tokenize through the oracle, tests/llamacpp) on
// random text made of the pieces where tokenizers tend to differ: words of several scripts and
// letter cases, runs of spaces, tabs and newlines, digits, punctuation, and special-token texts;
// with and without BOS and special-token parsing. Gemma 4's vocabulary (build/llamacpp/vocab), those
// of tests/data/vocab, and for every pre-tokenizer name a byte-level vocabulary in which every pair
// of bytes merges, so that any difference in where text is split shows in the ids. Valid UTF-8
// only: llama.cpp reads invalid bytes as U+FFFD where vkllm keeps them (docs/decisions.md "Model
// files and tokenizers").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <random>
#include <sstream>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "harness.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"

using namespace vkllm;
using Ids = std::vector<int32_t>;

namespace {

// Pieces of random text, joined at random.
// clang-format off
const std::vector<std::string> kParts = {
    "hello", "Hello", " world", "the", " The", "I'm", "we'LL", "can't", "Äpfel", "naïve", "e\xcc\x81",
    "Привет", "мир", "Γειά", "你好", "世界", "日本語", "한국어", "مرحبا", "नमस्ते", "😀", "🦙", "👨‍👩‍👧", "🇺🇳",
    "12345", "3333333", "3.14", "３４５", "…", "—", "(", ")", "{", "}", "\"", "'", "!?", ",", ".", "::", "->",
    "<", ">", "</", "/>", "<div>", "</div>", " ", " ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", " \n",
    "\n ", "\r\n", "\u00a0", "\u3000", "\xe2\x96\x81", "<0x41>", "<s>", "</s>", "<unk>", "<bos>", "<eos>",
    "<turn|>", "<|turn>", "<|tool_response>", "<|\"|>", "<|im_end|>", "<|endoftext|>", "<|user|>",
    "<end_of_turn>", "<|begin_of_text|>", "HelloWorld", "iPhone", "ABCdef", "McDonald's", "ÉCOLE", "écoLE",
    "x/y", "a/\n", "12345678", "1,000", "$9.99", "@user", "#tag", "_x_"};
// clang-format on

std::string random_text(std::mt19937& rng) {
  std::string s;
  for (size_t n = 1 + rng() % 12; n > 0; --n) s += kParts[rng() % kParts.size()];
  return s;
}

// llama.cpp's ids for each text.
std::vector<Ids> llamacpp_ids(const std::string& vocab, const std::vector<std::string>& texts, bool special) {
  test::TempFile input("tokenize_texts");
  std::string all;
  for (const std::string& t : texts) all += t + '\0';
  input.write(all);
  std::string flags = special ? " --add-special --parse-special" : "";
  test::CliResult r =
      test::run_program(VKLLM_LLAMACPP_ORACLE, fmt::format("tokenize -m '{}'{}", vocab, flags), "", input.path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<Ids> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    Ids& ids = out.emplace_back();
    for (int32_t id; in >> id;) ids.push_back(id);
  }
  return out;
}

void compare(const std::string& name, const std::string& vocab) {
  Tokenizer t = Tokenizer::from_gguf(GgufFile::open(vocab));
  std::mt19937 rng(11);
  std::vector<std::string> texts;
  for (int i = 0; i < 300; ++i) texts.push_back(random_text(rng));
  size_t same = 0;
  for (bool special : {false, true}) {
    std::vector<Ids> theirs = llamacpp_ids(vocab, texts, special);
    REQUIRE(theirs.size() == texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      INFO(name << (special ? " (BOS, special tokens parsed)" : "") << ": \"" << texts[i] << "\"");
      Ids ours = t.encode(texts[i], special, special);
      CHECK(fmt::format("{}", fmt::join(ours, " ")) == fmt::format("{}", fmt::join(theirs[i], " ")));
      same += ours == theirs[i];
    }
  }
  std::printf("%s: %zu of %zu random texts give llama.cpp's ids\n", name.c_str(), same, 2 * texts.size());
}

// A llama model's metadata and a byte-level vocabulary with pre-tokenizer `pre` in which every pair
// of bytes is a merge (ranked by pair), without tensors: llama.cpp loads it vocabulary-only.
std::vector<std::byte> all_pairs_vocab_file(const std::string& pre) {
  VocabConfig v = gpt2_byte_vocab(pre);
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      std::string l(gpt2_byte_char(uint8_t(a))), r(gpt2_byte_char(uint8_t(b)));
      v.merges.push_back(l + " " + r);
      v.tokens.push_back(l + r);
      v.types.push_back(TokenType::Normal);
    }
  v.bos = v.eos = 256;
  GgufWriter w;
  write_config(w, fixture_config({.dim = 32, .n_heads = 2, .n_kv_heads = 2, .vocab_size = uint32_t(v.tokens.size())}));
  write_vocab(w, v);
  return w.bytes();
}

}  // namespace

TEST_CASE("every pre-tokenizer splits as llama.cpp's does", "[tokenizer]") {
  if (std::string why = test::llamacpp_oracle_missing(); !why.empty()) return test::skip(why);
  for (std::string_view pre : PreTokenizer::known_names()) {
    test::TempFile f("all_pairs");
    f.write(all_pairs_vocab_file(std::string(pre)));
    compare(fmt::format("all pairs, pre {}", pre), f.path);
  }
}

TEST_CASE("tokenizer matches llama.cpp's tokenizer on random text", "[tokenizer][vocab]") {
  if (std::string why = test::llamacpp_oracle_missing(); !why.empty()) return test::skip(why);
  if (std::string why = test::llamacpp_vocab_missing("gemma-4"); !why.empty()) return test::skip(why);
  compare("gemma-4", test::llamacpp_vocab("gemma-4"));
  for (const char* name : {"llama-spm", "phi-3", "llama-bpe", "qwen2", "gpt-2", "deepseek-llm", "starcoder", "mpt"})
    compare(name, fmt::format("{}/tests/data/vocab/ggml-vocab-{}.gguf", VKLLM_SOURCE_DIR, name));
}
