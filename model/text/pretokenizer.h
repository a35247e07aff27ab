// PreTokenizer: splits text into words before byte-level BPE, with the regexes llama.cpp uses for
// each `tokenizer.ggml.pre` (docs/formats.md §4.3), run by PCRE2 with Unicode properties.
#pragma once
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

  // llama-bpe: a word that is already a whole token skips the merges.
  bool ignore_merges() const { return ignore_merges_; }
  // BOS default for this pre-tokenizer when the file does not say (llama-bpe: true).
  bool default_add_bos() const { return add_bos_; }

  static std::vector<std::string_view> known_names();
  static std::vector<std::string_view> style_names();  // one name per distinct set of rules

 private:
  struct Regex;
  std::vector<std::shared_ptr<const Regex>> regexes_;
  bool ignore_merges_ = false;
  bool add_bos_ = false;
};

}  // namespace vkllm
