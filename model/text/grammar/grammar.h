// Grammar: a context-free grammar over bytes, the form every constraint is compiled to (GBNF text,
// JSON Schema, tool-call syntax). Each rule is a list of alternatives; an alternative is a
// sequence of elements: a byte range, a reference to a rule, or one whole token (a special token
// such as <|channel|>, matched by id). Characters were turned into UTF-8 byte sequences by the
// parser (utf8_ranges.h), so matching works on the bytes a token holds, whole characters or not.
// finish() checks what makes a grammar unusable and says which rule is to blame.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vkllm::grammar {

enum class Op : uint8_t {
  End,       // closes an alternative
  Bytes,     // one byte in [lo, hi]
  Rule,      // the rule `arg`
  Token,     // the token `arg`, as a whole
  NotToken,  // any one token but `arg`
};

struct Element {
  Op op = Op::End;
  uint8_t lo = 0, hi = 0;  // Bytes
  uint32_t arg = 0;        // Rule: index; Token, NotToken: token id
};

// Limits that keep a grammar's compile time and memory small (a request may carry one).
inline constexpr size_t kMaxGrammarElements = size_t(1) << 20;
inline constexpr size_t kMaxGrammarRules = size_t(1) << 16;

class Grammar {
 public:
  // A new rule without alternatives yet; its index. Throws Error past kMaxGrammarRules.
  uint32_t add_rule(std::string name);
  // Appends an alternative (may be empty: the rule then matches the empty string). Throws Error
  // past kMaxGrammarElements.
  void add_alternative(uint32_t rule, std::span<const Element> sequence);
  // Drops alternatives that can never complete, then checks: the root can complete (else
  // "unsatisfiable"), and no rule reaches itself without consuming a byte (left recursion,
  // which a top-down matcher cannot run). Throws Error naming the rule.
  void finish(uint32_t root);

  // Elements are addressed by position; an alternative starts at a position and runs to an End.
  const Element& at(uint32_t pos) const { return elements_[pos]; }
  std::span<const uint32_t> alternatives(uint32_t rule) const { return alternatives_[rule]; }
  uint32_t root() const { return root_; }
  const std::string& name(uint32_t rule) const { return names_[rule]; }
  size_t rules() const { return names_.size(); }
  size_t elements() const { return elements_.size(); }

 private:
  std::vector<bool> nullable_rules() const;
  void prune_unproductive();
  void check_left_recursion(const std::vector<bool>& nullable) const;

  std::vector<Element> elements_;
  std::vector<std::vector<uint32_t>> alternatives_;  // (rules) start positions
  std::vector<std::string> names_;                   // (rules)
  uint32_t root_ = 0;
};

}  // namespace vkllm::grammar
