// Real vocabularies: llama.cpp's vocabulary-only GGUF files (tests/data/vocab), each with llama.cpp's
// test strings (.inp, separated by "\n__ggml_vocab_test__\n") and the ids its tokenizer gives them
// without BOS (.out, one line per string). Every string must give exactly those ids and decode back
// to itself.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "catch.h"
#include "gguf/reader.h"
#include "harness.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

using namespace vkllm;
using Ids = std::vector<int32_t>;

namespace {

std::string vocab_path(const std::string& name) {
  return fmt::format("{}/tests/data/vocab/ggml-vocab-{}.gguf", VKLLM_SOURCE_DIR, name);
}

// Vocabularies too big to keep here, taken from llama.cpp's source by scripts/fetch_llamacpp.
std::string fetched_vocab_path(const std::string& name) {
  return fmt::format("{}/llamacpp/vocab/ggml-vocab-{}.gguf", VKLLM_BUILD_DIR, name);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Case {
  std::string text;
  Ids ids;
};

std::vector<Case> read_cases(const std::string& path) {
  std::string inp = read_file(path + ".inp"), out = read_file(path + ".out");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<Case> cases;
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

Tokenizer load(const std::string& name) { return Tokenizer::from_gguf(GgufFile::open(vocab_path(name))); }

void check_cases(const std::string& name, const Tokenizer& t, const std::string& path = "") {
  std::vector<Case> cases = read_cases(path.empty() ? vocab_path(name) : path);
  CHECK(cases.size() >= 40);
  for (const Case& c : cases) {
    INFO(name << ": \"" << c.text << "\"");
    Ids ids = t.encode(c.text, false, false);  // as llama.cpp's test-tokenizer-0
    CHECK(fmt::format("{}", fmt::join(ids, " ")) == fmt::format("{}", fmt::join(c.ids, " ")));
    CHECK(t.decode(ids, false) == c.text);
    CHECK(t.decode(t.encode(c.text, true), true) == c.text);
  }
}

void check_vocab(const std::string& name) { check_cases(name, load(name)); }

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
  VocabConfig v = read_vocab(GgufFile::open(vocab_path("qwen2")));
  v.pre = "qwen35";
  check_cases("qwen35", Tokenizer(std::move(v)));
}

TEST_CASE("tokenizer matches llama.cpp on Gemma 4's vocabulary (BPE over SentencePiece pieces)", "[tokenizer][vocab]") {
  std::string path = fetched_vocab_path("gemma-4");
  if (!std::filesystem::exists(path)) {
    test::skip("no " + path + " (scripts/fetch_llamacpp takes it from npm's node-llama-cpp where npm is present)");
    return;
  }
  Tokenizer t = Tokenizer::from_gguf(GgufFile::open(path));
  CHECK(t.kind() == Tokenizer::Kind::SpmBpe);
  CHECK(t.vocab_size() == 262144);
  check_cases("gemma-4", t, path);
}
