// Choosing the constraint and the reading of a reply from the request's fields.
#include "serve/reply_plan.h"

#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema_grammar.h"

namespace vkllm::serve {

std::shared_ptr<grammar::GrammarAutomaton> GrammarCache::get(const std::string& gbnf) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(gbnf); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
    if (!trie_) trie_ = std::make_shared<grammar::TokenTrie>(tok_);
  }
  // Parsing (and its checks) outside the lock: a big grammar must not stall other requests.
  auto g = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf, &tok_));
  auto automaton = std::make_shared<grammar::GrammarAutomaton>(std::move(g), trie_);
  std::lock_guard lock(mutex_);
  if (index_.count(gbnf)) return index_.at(gbnf)->second;
  lru_.emplace_front(gbnf, automaton);
  index_.emplace(lru_.front().first, lru_.begin());
  if (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return automaton;
}

ReplyPlan plan_reply(const CompletionParams& p, const ChatFormat& format, const PrefilledPrompt& prompt,
                     GrammarCache& grammars, const Tokenizer& tok) {
  ReplyPlan plan;
  const std::string& opened = prompt.opened;
  // A prefilled answer has its reasoning behind it, and a prompt that closed an empty reasoning
  // block asks for none; prefilled reasoning (or a prompt that opened it) goes on; otherwise the
  // reply may begin with reasoning.
  ReasoningPrefix prefix = !p.chat || prompt.reasoning_off           ? ReasoningPrefix::None
                           : p.prefill && !p.prefill->reasoning_only ? ReasoningPrefix::None
                           : !opened.empty() && !format.harmony()    ? ReasoningPrefix::Open
                           : p.prefill                               ? ReasoningPrefix::None
                                                                     : ReasoningPrefix::Optional;
  ReplyConstraint c;
  switch (p.output.kind) {
    case OutputFormat::Grammar:
      c.gbnf = p.output.grammar;
      break;
    case OutputFormat::JsonSchema:
      c = p.chat ? json_reply_constraint(format, tok, p.output.schema, prefix)
                 : ReplyConstraint{.gbnf = grammar::json_schema_gbnf(p.output.schema)};
      break;
    case OutputFormat::JsonObject:
      c = p.chat ? json_reply_constraint(format, tok, nullptr, prefix)
                 : ReplyConstraint{.gbnf = grammar::json_object_gbnf()};
      break;
    case OutputFormat::Text:
      if (p.chat && p.tool_choice.kind != ToolChoice::None)
        c = tool_call_constraint(format, tok, p.tools, p.tool_choice, p.parallel_tool_calls, prefix);
  }
  if (!c.gbnf.empty() || p.output.kind == OutputFormat::Grammar) {  // an empty `grammar` is refused by name
    plan.constraint.automaton = grammars.get(c.gbnf);
    plan.constraint.triggers = c.triggers;
    plan.constraint.trigger_at_start = c.trigger_at_start;
  }
  if (p.chat)
    plan.parse = ChatReplyOptions{.format = format,
                                  .split_reasoning = p.split_reasoning,
                                  .reasoning_open = opened,
                                  .tool_calls = p.tool_choice.kind != ToolChoice::None};
  return plan;
}

}  // namespace vkllm::serve
