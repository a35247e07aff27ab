// What a completion request's reply must look like and how to read it: the grammar that
// constrains it (a GBNF grammar, a JSON schema, any JSON object, or a tool call in the model
// family's syntax), and for chat how reasoning and tool calls are read out of the text. Compiled
// grammars are kept by their text (GrammarCache): an agent sends the same tools every turn, and a
// kept grammar also keeps its cached masks.
#pragma once
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/output_constraint.h"
#include "serve/openai.h"
#include "text/chat/chat_output.h"
#include "text/grammar/token_trie.h"

namespace vkllm {
class Tokenizer;
}

namespace vkllm::serve {

class GrammarCache {
 public:
  explicit GrammarCache(const Tokenizer& tokenizer, size_t capacity = 32) : tok_(tokenizer), capacity_(capacity) {}
  // The automaton of a GBNF text; throws Error naming what is wrong with the grammar.
  std::shared_ptr<grammar::GrammarAutomaton> get(const std::string& gbnf);

 private:
  const Tokenizer& tok_;
  size_t capacity_;
  std::mutex mutex_;
  std::shared_ptr<const grammar::TokenTrie> trie_;                                     // built on first use
  std::list<std::pair<std::string, std::shared_ptr<grammar::GrammarAutomaton>>> lru_;  // most recent first
  std::unordered_map<std::string_view, decltype(lru_)::iterator> index_;
};

struct ReplyPlan {
  ConstraintSpec constraint;
  std::optional<ChatReplyOptions> parse;  // chat: how to read the reply (its `tools` left null)
};

// prompt: the chat prompt (what it leaves open: a reasoning tag or a prefilled message; whether it
// turned reasoning off); empty for completions.
ReplyPlan plan_reply(const CompletionParams& p, const ChatFormat& format, const PrefilledPrompt& prompt,
                     GrammarCache& grammars, const Tokenizer& tokenizer);

}  // namespace vkllm::serve
