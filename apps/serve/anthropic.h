// Anthropic's Messages API (POST /v1/messages, /v1/messages/count_tokens) as an adapter over the
// OpenAI chat route: a Messages request becomes an OpenAI chat body (so parsing, templates,
// constrained tool calls and reasoning are the chat route's own), and its results come back as a
// message, as Anthropic's stream of events, or as Anthropic's error shape. No HTTP and no GPU here.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "serve/api.h"
#include "serve/openai.h"

namespace vkllm::serve {

// Whether a path belongs to the Messages API (its errors take Anthropic's shape).
bool is_messages_path(std::string_view path);

// The Messages request as an OpenAI chat completion body: system and content blocks as chat
// messages (tool_use as an assistant's tool_calls, tool_result as tool messages, thinking as
// reasoning_content), a user's image blocks as image_url parts (base64 as data: URLs), tools and
// tool_choice, stop_sequences as stop, thinking as the templates' enable_thinking. 400 naming the
// field for anything wrong or unsupported (documents, server tools). count_only: count_tokens's body, which has no
// max_tokens.
json anthropic_to_openai(const json& body, bool count_only);

// An OpenAI chat.completion object as an Anthropic message.
json anthropic_message(const json& completion);
// "msg_<hex>" for a completion's "chatcmpl-<hex>".
std::string anthropic_message_id(const std::string& completion_id);

// {"type": "error", "error": {"type", "message"}}, the type following the HTTP status.
json anthropic_error_body(int status, const std::string& message);
// An error reply of the OpenAI routes (error_body) in Anthropic's shape; other replies unchanged.
HttpReply anthropic_error_reply(HttpReply reply);

// A stream of OpenAI chat.completion.chunk server-sent events (include_usage set) as Anthropic's
// events: message_start and a ping, then one content block at a time (thinking, text or tool_use:
// content_block_start, its deltas, content_block_stop), then message_delta with the stop reason
// and the usage, and message_stop. An error event of the chunk stream becomes `event: error`.
class AnthropicStream {
 public:
  AnthropicStream(std::string id, std::string model) : id_(std::move(id)), model_(std::move(model)) {}
  std::string start() const;  // message_start and ping
  // Takes the chunk stream's text as written (whole events or parts); returns events to send.
  std::string feed(std::string_view sse_text);
  // message_delta and message_stop once the chunk stream ended normally ("" otherwise).
  std::string finish();

 private:
  enum class Block { None, Thinking, Text, Tool };
  std::string on_chunk(const json& chunk);
  std::string on_tool_calls(const json& calls);
  std::string open(Block kind, json content_block);  // closes the open block first
  std::string close();
  std::string delta(json d) const;

  std::string id_, model_, buffer_;
  Block open_ = Block::None;
  int index_ = -1;  // the open (or last) content block's index
  json finish_reason_, stop_sequence_, usage_;
  bool done_ = false, failed_ = false;
};

}  // namespace vkllm::serve
