// Reading a reply into what OpenAI's API returns: content, reasoning_content and tool_calls. The
// reply text is what the model generated (special tokens as their text). Works on a whole reply,
// or on a prefix of one while it streams: then only what can no longer change is returned (text
// that might be the start of a marker such as "<tool_c" is held back; a tool call is listed once
// its name is complete, its arguments as far as they have come), so that each result extends the
// previous one and a stream can send the difference.
#pragma once
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/chat/chat_format.h"

namespace vkllm {

struct ToolCall {
  std::string name;
  std::string arguments;  // JSON text of an object (for XML formats, built from the parameters)
  std::string id;         // when the model wrote one (Mistral), else empty
  bool operator==(const ToolCall&) const = default;
};

struct ChatReply {
  std::string content, reasoning;
  std::vector<ToolCall> tool_calls;
};

struct ChatReplyOptions {
  ChatFormat format;
  bool split_reasoning = true;  // reasoning_format other than none
  // The prompt's tail from the reasoning tag it opened ("<think>\n", prompt_opens_reasoning); empty
  // when it opened none. The reply then starts inside the reasoning; with reasoning_format none
  // the content gets this tail back in front, so that clients splitting tags see a matched pair.
  std::string reasoning_open;
  bool tool_calls = false;  // tools were offered and may be called
  // The request's tools (OpenAI's [{type, function: {name, parameters}}]): XML formats give each
  // parameter's value as text, typed by the function's schema.
  const nlohmann::ordered_json* tools = nullptr;
};

// partial: `text` is a prefix of the reply, more may come.
ChatReply parse_chat_reply(std::string_view text, const ChatReplyOptions& o, bool partial);

// `text` without its longest tail that is a proper prefix of one of `markers` (held back while
// streaming until it is known whether a marker follows).
std::string_view hold_back(std::string_view text, std::initializer_list<std::string_view> markers);
std::string_view hold_back(std::string_view text, std::span<const std::string_view> markers);

}  // namespace vkllm
