// Real vocabularies: llama.cpp's vocabulary-only GGUF files (tests/data/vocab; Gemma 4's, 15.8 MB,
// in build/llamacpp/vocab where scripts/fetch_llamacpp fetched it), each with llama.cpp's test
// strings (.inp, separated by "\n__ggml_vocab_test__\n") and the ids its tokenizer gives them
// without BOS (.out, one line per string). Every string must give exactly those ids and decode back
// to itself.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "catch.h"
#include "cli.h"
#include "gguf/reader.h"
#include "harness.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

using namespace vkllm;
using Ids = std::vector<int32_t>;

namespace {

std::string vocab_file(const std::string& name) {
  return fmt::format("{}/tests/data/vocab/ggml-vocab-{}.gguf", VKLLM_SOURCE_DIR, name);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct VocabCase {
  std::string text;
  Ids ids;
};

// The cases of the vocabulary file at `path`.
std::vector<VocabCase> read_cases(const std::string& path) {
  std::string inp = read_file(path + ".inp"), out = read_file(path + ".out");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<VocabCase> cases;
  for (size_t pos = 0; pos < inp.size();) {
    size_t next = inp.find(sep, pos);
    cases.push_back({inp.substr(pos, next == std::string::npos ? std::string::npos : next - pos), {}});
    pos = next == std::string::npos ? inp.size() : next + sep.size();
  }
  std::istringstream lines(out);
  size_t i = 0;
  for (std::string line; std::getline(lines, line); ++i) {
    REQUIRE(i < cases.size());
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) cases[i].ids.push_back(id);
  }
  REQUIRE(i == cases.size());
  return cases;
}

Tokenizer load_vocab(const std::string& name) { return Tokenizer::from_gguf(GgufFile::open(vocab_file(name))); }

// Checks every case of the vocabulary file at `path`; returns how many gave llama.cpp's ids.
size_t check_cases(const std::string& path, const Tokenizer& t) {
  std::vector<VocabCase> cases = read_cases(path);
  CHECK(cases.size() >= 40);
  size_t same = 0;
  for (const VocabCase& c : cases) {
    INFO(path << ": \"" << c.text << "\"");
    Ids ids = t.encode(c.text, false, false);  // as llama.cpp's test-tokenizer-0
    CHECK(fmt::format("{}", fmt::join(ids, " ")) == fmt::format("{}", fmt::join(c.ids, " ")));
    same += ids == c.ids;
    CHECK(t.decode(ids, false) == c.text);
    CHECK(t.decode(t.encode(c.text, true), true) == c.text);
  }
  return same;
}

void check_vocab(const std::string& name) { check_cases(vocab_file(name), load_vocab(name)); }

}  // namespace

TEST_CASE("tokenizer matches llama.cpp on real SentencePiece vocabularies", "[tokenizer][vocab]") {
  check_vocab("llama-spm");
  check_vocab("phi-3");
}

TEST_CASE("tokenizer matches llama.cpp on real BPE vocabularies", "[tokenizer][vocab]") {
  // mpt: user-defined tokens of 2 to 24 spaces, split out before the pre-tokenizer.
  for (const char* name : {"llama-bpe", "qwen2", "gpt-2", "deepseek-llm", "starcoder", "mpt"}) check_vocab(name);
}

TEST_CASE("tokenizer matches llama.cpp on the qwen35 pre-tokenizer (Qwen3.5/3.6)", "[tokenizer][vocab]") {
  // llama.cpp's ggml-vocab-qwen35.gguf is its qwen2 file byte for byte but for tokenizer.ggml.pre
  // ("qwen35"), so only its test strings are kept here.
  VocabConfig v = read_vocab(GgufFile::open(vocab_file("qwen2")));
  v.pre = "qwen35";
  check_cases(vocab_file("qwen35"), Tokenizer(std::move(v)));
}

TEST_CASE("tokenizer matches llama.cpp on the Gemma 4 vocabulary", "[tokenizer][vocab]") {
  if (std::string why = test::llamacpp_vocab_missing("gemma-4"); !why.empty()) return test::skip(why);
  std::string path = test::llamacpp_vocab("gemma-4");
  Tokenizer t = Tokenizer::from_gguf(GgufFile::open(path));
  CHECK(t.kind() == Tokenizer::Kind::SpmBpe);
  CHECK(t.add_bos());
  CHECK(t.bos() == t.find("<bos>"));
  // llama.cpp's end-of-generation set for Gemma 4: <eos>, <turn|> and <|tool_response>, not </s>.
  Ids eog = t.end_of_generation();
  std::sort(eog.begin(), eog.end());
  CHECK(eog == Ids{t.find("<eos>"), t.find("<|tool_response>"), t.find("<turn|>")});
  CHECK(t.type(t.find("</s>")) == TokenType::Normal);
  size_t same = check_cases(path, t), all = read_cases(path).size();
  std::printf("gemma-4: %zu of %zu test strings give llama.cpp's ids\n", same, all);
}
