// TokenTrie: a vocabulary's tokens by their bytes, built once per tokenizer and shared by every
// grammar. Nodes are stored in preorder (node i's subtree is i .. end(i) - 1), so computing a
// grammar's token mask is one forward scan that jumps over a subtree as soon as its prefix is
// rejected; tokens sharing a prefix share the work of matching it.
// Text tokens are in the trie (user-defined ones such as Qwen's <tool_call> too); control and
// unknown tokens are not (a grammar names them as whole tokens: <[id]>), nor end-of-generation
// tokens, which a grammar allows only where it may end.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vkllm {
class Tokenizer;
}

namespace vkllm::grammar {

class TokenTrie {
 public:
  explicit TokenTrie(const Tokenizer& tokenizer);

  uint32_t vocab_size() const { return uint32_t(text_.size()); }
  size_t nodes() const { return byte_.size(); }
  size_t max_depth() const { return max_depth_; }
  uint8_t byte(size_t node) const { return byte_[node]; }
  uint32_t depth(size_t node) const { return depth_[node]; }  // 1 for a first byte
  uint32_t end(size_t node) const { return end_[node]; }      // past the subtree
  std::span<const int32_t> tokens_at(size_t node) const {     // tokens whose bytes end here
    return std::span(ids_).subspan(first_[node], first_[node + 1] - first_[node]);
  }
  // Every token in the subtree below a node (the node's own excluded).
  std::span<const int32_t> tokens_below(size_t node) const {
    return std::span(ids_).subspan(first_[node + 1], first_[end_[node]] - first_[node + 1]);
  }
  // The bytes that occur below a node (256 bits), for nodes whose subtree has at least
  // kSummaryMinNodes nodes; empty (all bits set) for smaller ones.
  static constexpr uint32_t kSummaryMinNodes = 24;
  const std::array<uint64_t, 4>& bytes_below(size_t node) const;
  // Below a node, read from a character boundary at the node: whether every path is valid UTF-8
  // (tokens may end inside a character), and the most characters a path holds (a character cut
  // short counts; at most 255).
  bool utf8_below(size_t node) const { return utf8_ok_[node] != 0; }
  uint32_t chars_below(size_t node) const { return chars_below_[node]; }
  // (ceil(vocab / 64)) bit i: token i is in the trie.
  const std::vector<uint64_t>& text_bits() const { return text_bits_; }
  // A text token's bytes; empty for tokens not in the trie.
  const std::string& bytes(int32_t id) const { return text_[size_t(id)]; }
  bool is_text(int32_t id) const { return !text_[size_t(id)].empty(); }
  bool is_end_of_generation(int32_t id) const { return eog_flag_[size_t(id)]; }
  std::span<const int32_t> end_of_generation() const { return eog_; }

 private:
  void summarize();

  std::vector<uint8_t> byte_;
  std::vector<uint16_t> depth_;
  std::vector<uint32_t> end_, first_;  // first_: (nodes + 1) into ids_
  std::vector<int32_t> ids_;
  std::vector<std::string> text_;  // (vocab)
  std::vector<bool> eog_flag_;     // (vocab)
  std::vector<int32_t> eog_;
  size_t max_depth_ = 0;
  std::vector<uint32_t> summary_of_;                // (nodes) index into summaries_, 0: none
  std::vector<std::array<uint64_t, 4>> summaries_;  // [0]: all bytes
  std::vector<uint8_t> utf8_ok_, chars_below_;      // (nodes)
  std::vector<uint64_t> text_bits_;
};

}  // namespace vkllm::grammar
