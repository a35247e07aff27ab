// `vkllm-bench tokenize`: encoding speed (MB/s) of every vocabulary given (real GGUF vocabularies,
// by default those under tests/data/vocab) and of a fixture vocabulary per known pre-tokenizer, on
// texts generated here deterministically: ASCII prose and mixed scripts (each one single line) and
// source code (many lines). CPU only, wall clock: MB/s of the median run and of the best one (the
// best is the steadier number on a shared machine).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bench.h"
#include "error.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "text/tokenizer.h"

namespace vkllm::bench {

namespace {

// A linear congruential generator: the same text on every machine and compiler.
struct Lcg {
  uint64_t state;
  uint32_t next(uint32_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t((state >> 33) % n);
  }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[next(uint32_t(v.size()))];
  }
};

std::string prose(size_t bytes) {
  static const std::vector<std::string> words = {
      "the",      "of",    "and",        "to",      "in",      "is",        "was",     "that",    "for",
      "it",       "with",  "as",         "his",     "on",      "be",        "at",      "by",      "I",
      "this",     "had",   "not",        "are",     "but",     "from",      "or",      "have",    "an",
      "they",     "which", "one",        "you",     "were",    "her",       "all",     "she",     "there",
      "would",    "their", "we",         "him",     "been",    "has",       "when",    "who",     "will",
      "more",     "no",    "if",         "out",     "so",      "people",    "into",    "time",    "could",
      "year",     "after", "government", "world",   "between", "through",   "during",  "without", "something",
      "language", "model", "tokenizer",  "however", "it's",    "don't",     "they'll", "we've",   "Wikipedia",
      "London",   "1984",  "3.14159",    "42",      "2024",    "inference", "quickly", "brown",   "foxes",
      "jumped",   "over",  "lazy",       "dogs",    "GPU"};
  static const std::vector<std::string> ends = {".", ".", ".", ",", ",", ";", "?", "!", ":", " -"};
  Lcg rng{1};
  std::string s;
  bool capital = true;
  while (s.size() < bytes) {
    std::string w = rng.pick(words);
    if (capital && w[0] >= 'a' && w[0] <= 'z') w[0] = char(w[0] - 'a' + 'A');
    s += w;
    capital = false;
    if (rng.next(8) == 0) {
      const std::string& e = rng.pick(ends);
      s += e;
      capital = e == "." || e == "?" || e == "!";
    }
    s += ' ';
  }
  return s;
}

std::string code(size_t bytes) {
  static const std::vector<std::string> names = {"i",      "n",    "count",  "buffer", "offset", "x",
                                                 "result", "node", "values", "size",   "tmp",    "ctx"};
  static const std::vector<std::string> types = {"int", "size_t", "float", "auto", "uint32_t", "const char*"};
  Lcg rng{2};
  std::string s;
  int depth = 0;
  while (s.size() < bytes) {
    std::string indent(size_t(4 * depth), ' ');
    const std::string &a = rng.pick(names), &b = rng.pick(names);
    switch (rng.next(8)) {
      case 0:
        s += fmt::format("{}for ({} {} = 0; {} < {}; ++{}) {{\n", indent, rng.pick(types), a, a, b, a);
        ++depth;
        break;
      case 1:
        s += fmt::format("{}if ({} != nullptr && {}->{} >= {}) {{\n", indent, a, a, b, rng.next(1000));
        ++depth;
        break;
      case 2:
        s += fmt::format("{}// {} holds the {} of the {} (see {}.h)\n", indent, a, b, rng.pick(names), b);
        break;
      case 3:
        s += fmt::format("{}printf(\"{}=%d\\n\", {}[{}]);\n", indent, a, b, rng.next(64));
        break;
      default:
        s += fmt::format("{}{} {} = {} * {} + 0x{:x};\n", indent, rng.pick(types), a, b, a, rng.next(65536));
    }
    if (depth > 0 && (depth > 4 || rng.next(3) == 0)) {
      --depth;
      s += std::string(size_t(4 * depth), ' ') + "}\n";
    }
  }
  return s;
}

std::string mixed(size_t bytes) {
  static const std::vector<std::string> words = {
      "hello",    "world",   "Привет", "мир",      "Γειά",     "σου",    "κόσμε",
      "你好",     "世界",    "日本語", "テキスト", "ひらがな", "한국어", "안녕하세요",
      "مرحبا",    "بالعالم", "नमस्ते",   "दुनिया",    "שלום",     "עולם",   "Cửa",
      "Việt",     "Äpfel",   "naïve",  "ﬁnance",   "😀",        "🦙",   "👨‍👩‍👧",
      "🇺🇳",       "✅",       "ไทย",    "ភាសាខ្មែរ", "12345",    "３４５", "…",
      "「引用」", "—",       "ß",      "Ωmega",    "e\xcc\x81"};
  static const std::vector<std::string> seps = {" ", " ", " ", " ", "、", "，", ", ", "。", ". ", "  "};
  Lcg rng{3};
  std::string s;
  while (s.size() < bytes) s += rng.pick(words) + rng.pick(seps);
  return s;
}

struct Text {
  std::string name, bytes;
};

struct TokenizeOptions {
  std::vector<std::string> vocabs;
  size_t bytes = 1 << 20;
  int runs = 3;
  bool fixtures = true, json = false;
  std::string only;  // run the vocabularies whose name contains this
  std::string text;  // only this text (prose, code, mixed)
};

struct Subject {
  std::string name;
  Tokenizer tokenizer;
};

std::vector<Subject> subjects(const TokenizeOptions& o) {
  std::vector<std::filesystem::path> files;
  for (const std::string& v : o.vocabs) {
    if (!std::filesystem::is_directory(v)) {
      files.emplace_back(v);
      continue;
    }
    for (const auto& e : std::filesystem::directory_iterator(v))
      if (e.path().extension() == ".gguf") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  auto wanted = [&](const std::string& name) { return name.find(o.only) != std::string::npos; };
  std::vector<Subject> out;
  for (const auto& f : files) {
    std::string name = f.stem().string();
    if (name.starts_with("ggml-vocab-")) name.erase(0, 11);  // llama.cpp's file names
    if (wanted(name)) out.push_back({name, Tokenizer::from_gguf(GgufFile::open(f.string()))});
  }
  if (!o.fixtures) return out;
  if (wanted("fixture-spm")) out.push_back({"fixture-spm", Tokenizer(fixture_vocab("llama", 4000))});
  for (std::string_view pre : PreTokenizer::style_names())
    if (std::string name = fmt::format("fixture-bpe-{}", pre); wanted(name))
      out.push_back({name, Tokenizer(fixture_vocab("gpt2", 4000, std::string(pre)))});
  return out;
}

struct Timed {
  double median_s, best_s;
  size_t tokens;
};

// Seconds of `runs` encodings (one when a run takes over two seconds), and the token count.
Timed time_encode(const Tokenizer& t, const std::string& text, int runs) {
  std::vector<double> seconds;
  size_t n = 0;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    n = t.encode(text, false, true).size();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (seconds.back() > 2.0) break;
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds[seconds.size() / 2], seconds.front(), n};
}

void run_tokenize(const TokenizeOptions& o) {
  std::vector<Text> texts;
  using Make = std::string (*)(size_t);
  for (auto [name, make] : {std::pair<std::string, Make>{"prose", prose}, {"code", code}, {"mixed", mixed}})
    if (o.text.empty() || o.text == name) texts.push_back({name, make(o.bytes)});
  nlohmann::json results = nlohmann::json::array();
  if (!o.json)
    fmt::print("{:<24} {:<14} {:<6} {:>8} {:>8} {:>8} {:>7} {:>7}\n", "vocabulary", "pre", "text", "bytes", "tokens",
               "ms", "MB/s", "best");
  for (const Subject& s : subjects(o)) {
    std::string pre = s.tokenizer.kind() == Tokenizer::Kind::Spm ? "(spm)" : s.tokenizer.pre();
    for (const Text& t : texts) {
      Timed r = time_encode(s.tokenizer, t.bytes, o.runs);
      double mb = double(t.bytes.size()) / 1e6;
      results.push_back({{"vocab", s.name},
                         {"pre", pre},
                         {"text", t.name},
                         {"bytes", t.bytes.size()},
                         {"tokens", r.tokens},
                         {"ms", r.median_s * 1e3},
                         {"mb_per_s", mb / r.median_s},
                         {"best_mb_per_s", mb / r.best_s}});
      if (!o.json)
        fmt::print("{:<24} {:<14} {:<6} {:>8} {:>8} {:>8.1f} {:>7.1f} {:>7.1f}\n", s.name, pre, t.name, t.bytes.size(),
                   r.tokens, r.median_s * 1e3, mb / r.median_s, mb / r.best_s);
      std::fflush(stdout);
    }
  }
  if (o.json) fmt::print("{}\n", results.dump(2));
}

}  // namespace

void add_tokenize_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand("tokenize", "Encoding speed of real and fixture vocabularies on generated text");
  auto o = std::make_shared<TokenizeOptions>();
  o->vocabs = {VKLLM_SOURCE_DIR "/tests/data/vocab"};
  cmd->add_option("--vocab", o->vocabs, "GGUF files or folders of them (default: the repository's tests/data/vocab)");
  cmd->add_option("--bytes", o->bytes, "Size of each text (default 1 MiB)")->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--runs", o->runs, "Encodings per case (default 3): MB/s of the median and of the best")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--only", o->only, "Only the vocabularies whose name contains this");
  cmd->add_option("--text", o->text, "Only this text")->check(CLI::IsMember({"prose", "code", "mixed"}));
  cmd->add_flag("!--no-fixtures", o->fixtures, "Skip the fixture vocabulary of each pre-tokenizer");
  cmd->add_flag("--json", o->json, "Results as JSON");
  cmd->callback([o] { run_tokenize(*o); });
}

}  // namespace vkllm::bench
