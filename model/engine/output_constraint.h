// OutputConstraint: a grammar on one generation. Before each token it tells the sampler which
// tokens the grammar allows (token by token for the best candidates, or as a whole mask); after
// it, it advances the grammar. A lazy constraint (tool_choice
// auto) watches the text instead until one of its triggers appears (the model starts a tool
// call), then feeds the grammar the text from the trigger on and constrains from there.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "text/grammar/grammar_automaton.h"

namespace vkllm {

class Tokenizer;

struct ConstraintSpec {
  std::shared_ptr<grammar::GrammarAutomaton> automaton;  // null: no constraint
  std::vector<std::string> triggers;                     // non-empty: applies from the first trigger on
  bool trigger_at_start = false;  // a trigger counts only after nothing but space (or a <think> block)
};

class OutputConstraint {
 public:
  OutputConstraint(ConstraintSpec spec, const Tokenizer& tokenizer);

  // The tokens allowed next, or null while nothing is constrained.
  std::shared_ptr<const grammar::TokenMask> mask();
  // The sampler's next token among those (Sampler::sample with this grammar as its filter).
  int32_t sample(Sampler& sampler, std::span<const float> logits);
  // The token that was chosen. Throws Error if the grammar did not allow it.
  void accept(int32_t token);
  bool active() const { return matcher_.has_value(); }
  bool failed_to_start() const { return failed_; }  // a trigger appeared but the text after it broke the grammar

 private:
  void look_for_trigger();
  void start(size_t at);

  ConstraintSpec spec_;
  const Tokenizer& tok_;
  std::optional<grammar::GrammarMatcher> matcher_;
  bool failed_ = false;
  // Lazy: the text so far, where each token starts in it, and how far triggers were looked for.
  std::string text_;
  std::vector<size_t> starts_;
  std::vector<int32_t> tokens_;
};

}  // namespace vkllm
