// The grammar a reply must follow when the request asks for structure: a tool call in the
// model family's own syntax (chat_format.h) whose arguments match the function's JSON schema, or
// a JSON reply of a schema (response_format). Reasoning may come first where the family reasons
// (<think>...</think>, gpt-oss's analysis channel), so a thinking model is not cut off from it.
// Markers that are special tokens of the vocabulary (<|channel|>, [TOOL_CALLS], ...) are named as
// whole tokens; others are text.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "text/chat/chat_format.h"

namespace vkllm {

class Tokenizer;

// tool_choice: none, auto, required, or {"type": "function", "function": {"name": ...}}.
struct ToolChoice {
  enum Kind { None, Auto, Required, Named } kind = Auto;
  std::string name;  // Named
};

// Where reasoning can stand before the constrained part.
enum class ReasoningPrefix {
  None,      // nowhere
  Optional,  // a whole <think>...</think> (or analysis message) may come first
  Open,      // the prompt opened <think>: reasoning text and </think> come first
};

struct ReplyConstraint {
  std::string gbnf;  // empty: no constraint
  // Non-empty: the grammar applies from the first of these strings on (tool_choice auto: the
  // model may answer in text, and once it starts a call the call must be well formed).
  std::vector<std::string> triggers;
  bool trigger_at_start = false;  // a trigger counts only with nothing but space (or reasoning) before it
};

// tool_choice Required or Named: the reply is one call (several with `parallel`); Auto: the same
// grammar, lazily from the family's call marker. Throws Error for a bad tool or schema (the
// message names the function).
ReplyConstraint tool_call_constraint(const ChatFormat& f, const Tokenizer& vocab, const nlohmann::ordered_json& tools,
                                     const ToolChoice& choice, bool parallel, ReasoningPrefix prefix);
// A JSON reply: `schema` null means any JSON object.
ReplyConstraint json_reply_constraint(const ChatFormat& f, const Tokenizer& vocab, const nlohmann::ordered_json& schema,
                                      ReasoningPrefix prefix);

}  // namespace vkllm
