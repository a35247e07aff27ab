// Tokenizer: text <-> token ids for three GGUF tokenizer kinds, "llama" (SentencePiece BPE with
// scores and byte fallback, as llama.cpp's llm_tokenizer_spm), "gpt2" (byte-level BPE with merges
// and a regex pre-tokenizer) and "gemma4" (BPE with merges over UTF-8 characters, spaces written
// as U+2581 and byte fallback: SentencePiece's alphabet, GPT-2's merging; docs/formats.md §4.2),
// plus special tokens. Detokenizer: streaming decode.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/pretokenizer.h"
#include "text/special_tokens.h"
#include "text/token_index.h"
#include "text/vocab.h"

namespace vkllm {

// U+2581, SentencePiece's visible space.
inline constexpr std::string_view kSpmSpace = "\xe2\x96\x81";

class GgufFile;

class Tokenizer {
 public:
  // Spm: "llama"; Bpe: "gpt2"; SpmBpe: "gemma4" (SentencePiece-style BPE).
  enum class Kind { Spm, Bpe, SpmBpe };

  // Validates the vocabulary; throws vkllm::Error naming what is wrong (a pre-tokenizer vkllm does
  // not support is named). Token types are adjusted as llama.cpp adjusts them (docs/formats.md §4.7).
  explicit Tokenizer(VocabConfig v);
  static Tokenizer from_gguf(const GgufFile& f);  // errors: "<file>: <what>"

  // add_special: prepend BOS (and append EOS) as the model says (add_bos / add_eos).
  // parse_special: control tokens written literally ("<|im_end|>") become their ids; user-defined
  // tokens are always matched, as in llama.cpp.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special = true) const;

  // The inverse of encode: decode(encode(s, add_special), add_special) == s for any bytes s (except
  // that SentencePiece reads U+2581 as a space, and Phi-3 drops the whitespace after a special
  // token). remove_special: the ids came from encode(..., add_special = true), so a leading BOS
  // (and a trailing EOS) that the model adds is dropped; with false every id is kept, a BOS typed
  // in the text included. The prefix space SentencePiece adds at the start and after special
  // tokens is always dropped; special tokens appear as their text. Throws for ids outside the
  // vocabulary.
  std::string decode(std::span<const int32_t> ids, bool remove_special = true) const;

  // The bytes one token stands for, verbatim (a leading space is kept; may be part of a UTF-8
  // character). Stream these through a Detokenizer to print complete characters.
  std::string piece(int32_t id) const;
  const std::string& text(int32_t id) const { return text_.at(size_t(id)); }  // as stored
  TokenType type(int32_t id) const { return type_.at(size_t(id)); }           // after llama.cpp's fixes
  bool is_special(int32_t id) const;  // control, user-defined or unknown: matched as a whole
  int32_t find(std::string_view text) const { return index_.find(text); }  // -1: not a token

  Kind kind() const { return kind_; }
  uint32_t vocab_size() const { return uint32_t(text_.size()); }
  int32_t bos() const { return bos_; }  // -1: none
  int32_t eos() const { return eos_; }
  int32_t unk() const { return unk_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool add_space_prefix() const { return add_space_prefix_; }
  const std::string& pre() const { return pre_name_; }
  bool is_end_of_generation(int32_t id) const;
  const std::vector<int32_t>& end_of_generation() const { return eog_; }

 private:
  struct Work;  // scratch buffers of one encode call (tokenizer_encode.cpp)

  void build_indices(const VocabConfig& v);
  void build_merges(const std::vector<std::string>& merges);
  void check_ids(const VocabConfig& v);
  void fix_token_types(const VocabConfig& v);
  void build_specials(const VocabConfig& v);
  void check_id(int32_t id) const;  // throws for ids outside the vocabulary
  void encode_fragment(std::string_view text, bool after_special, Work& w, std::vector<int32_t>& out) const;
  void encode_spm(std::string_view text, Work& w, std::vector<int32_t>& out) const;
  void spm_word(std::string_view word, Work& w, std::vector<int32_t>& out) const;
  void encode_bpe(std::string_view text, Work& w, std::vector<int32_t>& out) const;
  void bpe_level(size_t k, std::string_view text, Work& w, std::vector<int32_t>& out) const;
  void bpe_word(std::string_view word, Work& w, std::vector<int32_t>& out) const;
  void encode_spm_bpe(std::string_view text, Work& w, std::vector<int32_t>& out) const;
  void spm_bpe_words(std::string_view line, Work& w, std::vector<int32_t>& out) const;
  int32_t symbol_id(std::string_view text) const;  // BPE: a token, a merge's text past the vocabulary, or -1
  float score(int32_t id) const { return score_.empty() ? 0.0f : score_[size_t(id)]; }

  Kind kind_ = Kind::Spm;
  std::string pre_name_;
  std::vector<std::string> text_;            // (vocab) token text
  std::vector<float> score_;                 // (vocab) SPM scores, or empty
  std::vector<TokenType> type_;              // (vocab)
  TokenIndex index_;                         // text -> id
  PairIndex merges_;                         // BPE: (left, right) symbol -> rank and result
  TokenIndex merge_texts_;                   // BPE: texts merges name that are no token (ids past the vocabulary)
  std::vector<int32_t> byte_symbol_;         // BPE: (256) the symbol of each byte (Bpe) or 1-byte character
  std::array<int32_t, 256> byte_id_{};       // token of each byte value: its GPT-2 char (Bpe) or <0xNN>
  SpecialTokens specials_;                   // matched before encoding, in llama.cpp's order
  std::vector<int32_t> eog_;                 // end-of-generation ids
  std::shared_ptr<const PreTokenizer> pre_;  // Bpe only
  int32_t bos_ = -1, eos_ = -1, unk_ = -1;
  bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false;
  // Words (from U+2581 to the next that follows another character) merge alone: SPM, where no token
  // has U+2581 after another character; SpmBpe, outside occurrences of the few merge texts that do.
  bool spm_words_ = false;
  std::vector<std::string> spanning_;  // SpmBpe: merge texts with U+2581 after another character
};

// Streaming decode: push ids as they are generated; each call returns the text that is complete
// so far (a UTF-8 character split over byte-fallback tokens is held back until it is whole).
class Detokenizer {
 public:
  explicit Detokenizer(const Tokenizer& t) : t_(&t) {}
  std::string push(int32_t id);
  std::string flush();  // what is held back (an incomplete character as raw bytes)

 private:
  const Tokenizer* t_;
  std::string pending_;
};

// Bytes of the UTF-8 sequence a byte starts, by its high nibble as llama.cpp's unicode_len_utf8
// (a stray continuation byte counts as 1). Text is split into symbols this way.
inline size_t utf8_char_length(unsigned char c) {
  constexpr uint8_t lengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lengths[c >> 4];
}
// The code point of one UTF-8 sequence of 1..4 bytes (not validated).
uint32_t decode_utf8(std::string_view s);

// Byte length of the complete UTF-8 prefix of s: an incomplete trailing sequence is cut; invalid
// bytes count as complete (they will never become valid).
size_t complete_utf8_prefix(std::string_view s);

// GPT-2's byte <-> character table (docs/formats.md §4.2): the UTF-8 of the character standing for b,
// and the byte a code point stands for (-1 if none).
std::string_view gpt2_byte_char(uint8_t b);
int gpt2_char_byte(uint32_t cp);

}  // namespace vkllm
