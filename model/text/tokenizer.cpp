// Tokenizer: the vocabulary, its indices and decode; encode and the SPM and BPE encoders are in
// tokenizer_encode.cpp, llama.cpp's special-token rules in tokenizer_specials.cpp. Also the Detokenizer.
#include "text/tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "error.h"
#include "gguf/reader.h"

namespace vkllm {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  for (size_t at; (at = s.find(from, pos)) != std::string::npos; pos = at + from.size()) {
    out.append(s, pos, at - pos);
    out += to;
  }
  out.append(s, pos);
  s = std::move(out);
}

// Whether U+2581 follows another character somewhere in t.
bool space_after_character(const std::string& t) {
  for (size_t at = t.find(kSpmSpace, 1); at != std::string::npos; at = t.find(kSpmSpace, at + 1))
    if (at < kSpmSpace.size() || t.compare(at - kSpmSpace.size(), kSpmSpace.size(), kSpmSpace) != 0) return true;
  return false;
}

// "<0x0A>" -> 10; -1 when the text is not a byte token.
int parse_byte_token(std::string_view s) {
  if (s.size() != 6 || !s.starts_with("<0x") || s[5] != '>') return -1;
  int v = 0;
  for (char c : s.substr(3, 2)) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

// --- construction

Tokenizer::Tokenizer(VocabConfig v) {
  if (v.model == "llama") {
    kind_ = Kind::Spm;
  } else if (v.model == "gpt2") {
    kind_ = Kind::Bpe;
  } else if (v.model == "gemma4") {
    kind_ = Kind::SpmBpe;
    v.pre = "gemma4";  // llama.cpp's name for its one split (lines from runs of newlines)
  } else {
    throw Error(fmt::format("tokenizer model \"{}\" is not supported (llama, gpt2, gemma4)", printable(v.model)));
  }
  size_t n = v.tokens.size();
  ENSURE(n > 0 && n < (1u << 24), fmt::format("the vocabulary has {} tokens", n));
  ENSURE(v.scores.empty() || v.scores.size() == n,
         fmt::format("tokenizer has {} scores for {} tokens", v.scores.size(), n));
  ENSURE(v.types.empty() || v.types.size() == n,
         fmt::format("tokenizer has {} token types for {} tokens", v.types.size(), n));
  pre_name_ = v.pre;
  text_ = std::move(v.tokens);
  score_ = std::move(v.scores);
  if (kind_ == Kind::Bpe) pre_ = std::make_shared<const PreTokenizer>(pre_name_);  // names one it lacks
  build_indices(v);
  check_ids(v);
  fix_token_types(v);
  build_specials(v);
  if (kind_ == Kind::Bpe) {
    add_bos_ = v.add_bos.value_or(pre_->default_add_bos());
  } else if (kind_ == Kind::SpmBpe) {
    add_bos_ = true;  // llama.cpp overrides a false add_bos_token for Gemma 4
  } else {
    add_bos_ = v.add_bos.value_or(true);
    add_space_prefix_ = v.add_space_prefix.value_or(true);
  }
  add_eos_ = v.add_eos.value_or(false);
  if (bos_ < 0) add_bos_ = false;
  if (eos_ < 0) add_eos_ = false;
}

void Tokenizer::build_indices(const VocabConfig& v) {
  size_t n = text_.size();
  type_.resize(n, TokenType::Normal);
  for (size_t i = 0; i < n; ++i) {
    TokenType t = v.types.empty() ? TokenType::Normal : v.types[i];
    if (int(t) < 1 || int(t) > 6) t = TokenType::Normal;  // 0 "undefined" and unknown values
    // Files without token types still mark SentencePiece's byte tokens by their text.
    if (v.types.empty() && kind_ != Kind::Bpe && parse_byte_token(text_[i]) >= 0) t = TokenType::Byte;
    type_[i] = t;
  }
  index_ = TokenIndex(text_);  // the first id wins for duplicated texts
  for (int b = 0; b < 256; ++b)
    byte_id_[b] = kind_ == Kind::Bpe ? find(gpt2_byte_char(uint8_t(b))) : find(fmt::format("<0x{:02X}>", b));
  // SentencePiece merges never cross the start of a word (U+2581 after another character) when no
  // token has U+2581 after another character; then each word merges on its own.
  spm_words_ = kind_ == Kind::Spm && std::none_of(text_.begin(), text_.end(), space_after_character);
  if (kind_ != Kind::Spm) build_merges(v.merges);
}

// Merges as pairs of symbols. A symbol is a token id, or an id past the vocabulary for a text that
// a merge names but the vocabulary lacks (so that a malformed vocabulary still merges by text).
void Tokenizer::build_merges(const std::vector<std::string>& merges) {
  std::vector<std::string> extra;  // id vocab + i: extra[i]
  std::unordered_map<std::string, int32_t> extra_ids;
  auto symbol = [&](std::string_view text) {
    if (int32_t id = find(text); id >= 0) return id;
    auto [it, added] = extra_ids.emplace(std::string(text), int32_t(text_.size() + extra.size()));
    if (added) extra.emplace_back(text);
    return it->second;
  };
  // Byte-level BPE starts from the 256 byte characters; SentencePiece-style BPE from the text's
  // own characters (any that no merge names or token is stays -1).
  byte_symbol_.resize(256);
  if (kind_ == Kind::Bpe)
    for (int b = 0; b < 256; ++b) byte_symbol_[b] = symbol(gpt2_byte_char(uint8_t(b)));
  merges_ = PairIndex(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    std::string_view m = merges[r];
    size_t sp = m.find(' ', 1);  // from 1: llama.cpp's rule (a left part may itself be " ")
    ENSURE(sp != std::string::npos, fmt::format("BPE merge {} \"{}\" has no space", r, printable(m)));
    std::string joined = std::string(m.substr(0, sp)) + std::string(m.substr(sp + 1));
    merges_.insert(symbol(m.substr(0, sp)), symbol(m.substr(sp + 1)), {int32_t(r), symbol(joined)});
    if (kind_ == Kind::SpmBpe && space_after_character(joined) &&
        std::find(spanning_.begin(), spanning_.end(), joined) == spanning_.end())
      spanning_.push_back(joined);
  }
  // Gemma 4 has one such text (">▁</"); with many, finding them in the text would cost more than it saves.
  spm_words_ = kind_ == Kind::SpmBpe && spanning_.size() <= 16;
  merge_texts_ = TokenIndex(extra);
  if (kind_ == Kind::SpmBpe)
    for (int b = 0; b < 256; ++b) byte_symbol_[b] = symbol_id(std::string(1, char(b)));
}

int32_t Tokenizer::symbol_id(std::string_view text) const {
  if (int32_t id = find(text); id >= 0) return id;
  int32_t extra = merge_texts_.find(text);
  return extra < 0 ? -1 : int32_t(text_.size()) + extra;
}

void Tokenizer::check_ids(const VocabConfig& v) {
  int32_t n = int32_t(text_.size());
  // SentencePiece defaults (llama.cpp): unk 0, bos 1, eos 2 when the file does not say.
  bool spm = kind_ == Kind::Spm;
  int32_t bos = v.bos >= 0 ? v.bos : spm ? 1 : -1, eos = v.eos >= 0 ? v.eos : spm ? 2 : -1;
  ENSURE(bos < n && eos < n, fmt::format("BOS/EOS token id {}/{} is outside the vocabulary of {} tokens", bos, eos, n));
  bos_ = bos;
  eos_ = eos;
  int32_t unk = v.unk >= 0 ? v.unk : spm ? 0 : -1;
  unk_ = unk < n ? unk : -1;
}

Tokenizer Tokenizer::from_gguf(const GgufFile& f) {
  VocabConfig v = read_vocab(f);
  try {
    return Tokenizer(std::move(v));
  } catch (const Error& e) {
    f.fail(e.what());
  }
}

// --- decode

void Tokenizer::check_id(int32_t id) const {
  ENSURE(id >= 0 && size_t(id) < text_.size(),
         fmt::format("token id {} is outside the vocabulary of {} tokens", id, text_.size()));
}

std::string Tokenizer::piece(int32_t id) const {
  check_id(id);
  const std::string& t = text_[size_t(id)];
  TokenType type = type_[size_t(id)];
  if (is_special(id)) return t;  // verbatim, so that decode inverts special-token matching
  if (type == TokenType::Byte) {
    if (int b = parse_byte_token(t); b >= 0) return std::string(1, char(b));
  }
  if (kind_ != Kind::Bpe) {  // SentencePiece's alphabet: U+2581 stands for a space
    std::string s = t;
    replace_all(s, kSpmSpace, " ");
    return s;
  }
  // Byte-level BPE: every character stands for one byte; others (rare) are kept as they are.
  std::string out;
  for (size_t i = 0; i < t.size();) {
    size_t len = std::min(utf8_char_length(static_cast<unsigned char>(t[i])), t.size() - i);
    int b = len > 1 || static_cast<unsigned char>(t[i]) < 0x80 ? gpt2_char_byte(decode_utf8(t.substr(i, len))) : -1;
    if (b >= 0)
      out += char(b);
    else
      out.append(t, i, len);
    i += len;
  }
  return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool remove_special) const {
  size_t begin = 0, end = ids.size();
  if (remove_special && add_bos_ && end > 0 && ids[0] == bos_) begin = 1;
  if (remove_special && add_eos_ && end > begin && ids[end - 1] == eos_) --end;
  if (kind_ == Kind::Bpe) {
    std::string out;
    out.reserve((end - begin) * 4);
    for (size_t i = begin; i < end; ++i) out += piece(ids[i]);
    return out;
  }
  // SentencePiece's alphabet: between special tokens, concatenate what the pieces stood for
  // before spaces became U+2581 (byte tokens may carry parts of one), turn U+2581 back into spaces,
  // and drop the space encode added to every such run (each follows the start or a special token;
  // never for SentencePiece-style BPE, which adds none).
  std::string out, run;
  auto flush_run = [&] {
    replace_all(run, kSpmSpace, " ");
    if (add_space_prefix_ && !run.empty() && run[0] == ' ') run.erase(0, 1);
    out += run;
    run.clear();
  };
  for (size_t i = begin; i < end; ++i) {
    int32_t id = ids[i];
    check_id(id);
    if (is_special(id)) {
      flush_run();
      out += piece(id);
    } else {
      run += type_[size_t(id)] == TokenType::Byte ? piece(id) : text_[size_t(id)];
    }
  }
  flush_run();
  return out;
}

// --- UTF-8 and streaming

uint32_t decode_utf8(std::string_view s) {
  auto c0 = static_cast<unsigned char>(s[0]);
  uint32_t cp = s.size() == 1 ? c0 : s.size() == 2 ? c0 & 0x1F : s.size() == 3 ? c0 & 0x0F : c0 & 0x07;
  for (size_t k = 1; k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[k]) & 0x3F);
  return cp;
}

size_t complete_utf8_prefix(std::string_view s) {
  // Look back at most 3 bytes for the start of a sequence that the end cuts short.
  size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    auto c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = c >= 0xF8 ? 1 : utf8_char_length(c);
    return need > back ? n - back : n;
  }
  return n;
}

std::string Detokenizer::push(int32_t id) {
  pending_ += t_->piece(id);
  size_t n = complete_utf8_prefix(pending_);
  std::string out = pending_.substr(0, n);
  pending_.erase(0, n);
  return out;
}

std::string Detokenizer::flush() { return std::exchange(pending_, {}); }

}  // namespace vkllm
