// The BPE pre-tokenizer regexes, as llama.cpp's llama-vocab.cpp lists them per pre type, compiled
// with PCRE2 (UTF + UCP for \p{L}/\p{N}/\s, MATCH_INVALID_UTF so that no input can crash it).
#include "text/pretokenizer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bitset>
#include <functional>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "error.h"
#include "gguf/reader.h"

namespace vkllm {

namespace {

// llama.cpp adapts "(?i:'s|...)" to explicit case classes (PR 6920) so that no Unicode case
// folding applies; so do we.
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// qwen35 (Qwen3.5/3.6): qwen2's, with combining marks (\p{M}) belonging to the letters before them.
constexpr std::string_view kQwen35 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// gpt-4o (gpt-oss's o200k_harmony; llama4) and tekken (Mistral Nemo, Ministral 3) split words by
// letter case, written as llama.cpp rewrites Hugging Face's class intersections: an uppercase letter
// is a letter that is not a-z, a lowercase one a letter that is not A-Z (a non-ASCII letter is both).
constexpr std::string_view kGpt4o =
    R"([^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])*(?:(?=\p{L})[^A-Z])+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE])"
    R"(|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])+(?:(?=\p{L})[^A-Z])*(?:'[sS])"
    R"(|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*)"
    R"(|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kTekken =
    R"([^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])*(?:(?=\p{L})[^A-Z])+)"
    R"(|[^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])+(?:(?=\p{L})[^A-Z])*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*)"
    R"(|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// deepseek-llm (DeepSeek-V2): letter ranges of the Latin, Greek, Cyrillic, ... scripts, written
// as code points because some of them (U+1F7D, U+1FBE, U+2126, U+212A, ...) are not NFC-stable.
constexpr std::string_view kDeepseekLetters =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF})"
    R"(\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1})"
    R"(\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5})"
    R"(\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A})"
    R"(\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B})"
    R"(\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC})"
    R"(\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107})"
    R"(\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134})"
    R"(\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4})"
    R"(\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787})"
    R"(\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A})"
    R"(\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2})"
    R"(\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)";
// llama.cpp matches these two with every non-ASCII space turned into U+000B first, so a space
// inside their ranges (U+3000, U+2000..U+200A, ...) is only ever \s: hence the (?!\s).
constexpr std::string_view kDeepseekPunct =
    R"(\s?(?:(?!\s)[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}])+)";
constexpr std::string_view kDeepseekCjk = R"((?:(?!\s)[\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}])+)";

struct PreSpec {
  std::vector<std::string_view> names;
  std::vector<std::string_view> regexes;
  bool ignore_merges = false;
  bool add_bos = false;
};

const std::vector<PreSpec>& specs() {
  static const std::vector<PreSpec> s = {
      {{"llama-bpe", "llama3", "llama-v3", "falcon3"}, {kLlama3}, true, true},
      {{"dbrx", "smaug-bpe"}, {kLlama3}},
      {{"qwen2", "deepseek-r1-qwen"}, {kQwen2}},
      {{"qwen35"}, {kQwen35}},
      {{"gpt-4o", "llama4"}, {kGpt4o}},
      {{"tekken"}, {kTekken}, true, true},
      {{"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b"}, {R"(\p{N})", kGpt2}},
      {{"gpt-2", "phi-2", "roberta-bpe", "mpt", "olmo"}, {kGpt2}},
      {{"deepseek-llm"}, {"[\r\n]", kDeepseekLetters, kDeepseekPunct, R"(\s+$)", kDeepseekCjk, R"(\p{N}+)"}},
      // What llama.cpp falls back to when a file names no pre-tokenizer.
      {{"default", ""}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
  };
  return s;
}

size_t utf8_length(unsigned char c) {
  if (c < 0xC0) return 1;  // ASCII, or a stray continuation byte
  return c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

}  // namespace

struct PreTokenizer::Regex {
  pcre2_code* code = nullptr;
  bool jit = false;
  std::bitset<256> starts;  // bytes a match may start with

  explicit Regex(std::string_view pattern) {
    int err = 0;
    PCRE2_SIZE at = 0;
    uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &err, &at, nullptr);
    if (!code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof(msg));
      throw Error(
          fmt::format("pre-tokenizer regex does not compile at offset {}: {}", at, reinterpret_cast<const char*>(msg)));
    }
    // Compiled to machine code where PCRE2 can (else pcre2_match interprets): the interpreter checks
    // the UTF-8 of the rest of the subject on every call, which made splitting quadratic.
    jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    // The bytes a match can start with, where PCRE2 knows them: a piece without any of them is
    // passed on whole without a call (most pieces, for the later patterns of a list).
    const uint8_t* bitmap = nullptr;
    uint32_t first_type = 0;
    pcre2_pattern_info(code, PCRE2_INFO_FIRSTBITMAP, &bitmap);
    pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODETYPE, &first_type);
    if (bitmap) {
      for (int b = 0; b < 256; ++b) starts[size_t(b)] = (bitmap[b / 8] >> (b % 8)) & 1;
    } else if (first_type == 1) {
      uint32_t unit = 0;
      pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODEUNIT, &unit);
      starts.set(unit & 0xFF);
    } else {
      starts.set();
    }
  }
  ~Regex() { pcre2_code_free(code); }
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Calls out(p) with each match in `piece` and each run of text between matches, in order.
  template <class Out>
  void split(std::string_view piece, pcre2_match_data* md, const Out& out) const {
    if (std::none_of(piece.begin(), piece.end(), [&](char c) { return starts[uint8_t(c)]; })) {
      if (!piece.empty()) out(piece);
      return;
    }
    size_t start = 0, pos = 0;
    while (pos < piece.size()) {
      auto subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      // pcre2_jit_match skips pcre2_match's checks, which cost as much as a short match.
      int rc = jit ? pcre2_jit_match(code, subject, piece.size(), pos, 0, md, nullptr)
                   : pcre2_match(code, subject, piece.size(), pos, 0, md, nullptr);
      if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // a long backtrack: the interpreter keeps its stack on the heap
        rc = pcre2_match(code, subject, piece.size(), pos, PCRE2_NO_JIT, md, nullptr);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof(msg));
        throw Error(fmt::format("pre-tokenizer regex failed: {}", reinterpret_cast<const char*>(msg)));
      }
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
      size_t ms = ov[0], me = ov[1];
      if (me == ms) {  // an empty match (none of our patterns has one): step over a character
        pos = ms + utf8_length(static_cast<unsigned char>(piece[ms]));
        continue;
      }
      if (ms > start) out(piece.substr(start, ms - start));
      out(piece.substr(ms, me - ms));
      start = pos = me;
    }
    if (start < piece.size()) out(piece.substr(start));
  }
};

PreTokenizer::PreTokenizer(std::string_view pre) {
  for (const PreSpec& s : specs()) {
    if (std::find(s.names.begin(), s.names.end(), pre) == s.names.end()) continue;
    for (std::string_view r : s.regexes) regexes_.push_back(std::make_shared<const Regex>(r));
    ignore_merges_ = s.ignore_merges;
    add_bos_ = s.add_bos;
    return;
  }
  throw Error(fmt::format("BPE pre-tokenizer \"{}\" is not supported (known: {})", printable(pre),
                          fmt::join(known_names(), ", ")));
}

std::vector<std::string_view> PreTokenizer::known_names() {
  std::vector<std::string_view> out;
  for (const PreSpec& s : specs())
    for (std::string_view n : s.names)
      if (!n.empty()) out.push_back(n);
  return out;
}

std::vector<std::string_view> PreTokenizer::style_names() {
  std::vector<std::string_view> out;
  for (const PreSpec& s : specs()) out.push_back(s.names.front());
  return out;
}

namespace {

// One match data per thread, reused by every call (its ovector is read right after each match).
pcre2_match_data* match_data() {
  thread_local std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(pcre2_match_data_create(1, nullptr),
                                                                                 pcre2_match_data_free);
  ENSURE(md, "out of memory for the pre-tokenizer");
  return md.get();
}

}  // namespace

void PreTokenizer::split_level(size_t k, std::string_view text,
                               const std::function<void(std::string_view)>& piece) const {
  regexes_.at(k)->split(text, match_data(), piece);
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (!text.empty()) pieces.push_back(text);
  for (size_t k = 0; k < levels(); ++k) {
    std::vector<std::string_view> next;
    for (std::string_view p : pieces) split_level(k, p, [&](std::string_view q) { next.push_back(q); });
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace vkllm
