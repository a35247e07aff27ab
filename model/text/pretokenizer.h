// PreTokenizer: splits text into words before byte-level BPE, with the regexes llama.cpp uses for
// each `tokenizer.ggml.pre` (docs/formats.md §4.3), run by PCRE2 with Unicode properties.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm {

class PreTokenizer {
 public:
  // Throws vkllm::Error for a pre-tokenizer name vkllm does not know.
  explicit PreTokenizer(std::string_view pre);

  // Each regex re-splits the pieces of the previous one; text between matches stays a piece of
  // its own, so the pieces always concatenate back to `text`. Invalid UTF-8 never matches and
  // ends up in such in-between pieces.
  std::vector<std::string_view> split(std::string_view text) const;
  // The same, one regex at a time: level k's matches in `text` and the runs between them, handed
  // to `piece` in order. A piece depends only on its own bytes, so a caller may reuse what a
  // piece seen before became.
  size_t levels() const { return regexes_.size(); }
  void split_level(size_t k, std::string_view text, const std::function<void(std::string_view)>& piece) const;

  // llama-bpe: a word that is already a whole token skips the merges.
  bool ignore_merges() const { return ignore_merges_; }
  // BOS default for this pre-tokenizer when the file does not say (llama-bpe: true).
  bool default_add_bos() const { return add_bos_; }

  static std::vector<std::string_view> known_names();
  static std::vector<std::string_view> style_names();  // one name per distinct set of rules

  struct Regex;  // a compiled pattern (PCRE2), defined in pretokenizer.cpp

 private:
  std::vector<std::shared_ptr<const Regex>> regexes_;
  bool ignore_merges_ = false;
  bool add_bos_ = false;
};

}  // namespace vkllm
