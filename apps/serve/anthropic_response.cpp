// The chat route's results in the Messages API's shapes: a message, the event stream, errors.
#include <fmt/format.h>

#include "serve/anthropic.h"

namespace vkllm::serve {

namespace {

// Anthropic's error types by HTTP status; a busy or stopping server (503) is "overloaded", the
// type Anthropic's clients back off and retry on.
const char* anthropic_error_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return status < 500 ? "invalid_request_error" : "api_error";
  }
}

std::string stop_reason(const json& finish_reason, const json& stop_sequence) {
  if (finish_reason == "length") return "max_tokens";
  if (finish_reason == "tool_calls") return "tool_use";
  return stop_sequence.is_string() ? "stop_sequence" : "end_turn";
}

// Anthropic counts prompt tokens read from the cache apart from input_tokens.
json usage_of(const json& u) {
  uint64_t prompt = 0, cached = 0, output = 0;
  if (u.is_object()) {
    prompt = u.value("prompt_tokens", uint64_t(0));
    output = u.value("completion_tokens", uint64_t(0));
    if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object())
      cached = u["prompt_tokens_details"].value("cached_tokens", uint64_t(0));
  }
  return {{"input_tokens", prompt - std::min(cached, prompt)},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", cached},
          {"output_tokens", output}};
}

// A call's arguments (JSON text) as the tool_use block's input object.
json tool_input(const json& arguments) {
  json input = arguments.is_string() ? json::parse(arguments.get<std::string>(), nullptr, false) : arguments;
  return input.is_object() ? input : json::object();
}

std::string event(const json& data) {
  return fmt::format("event: {}\ndata: {}\n\n", data["type"].get<std::string>(), dump(data));
}

}  // namespace

json anthropic_message(const json& completion) {
  const json& choice = completion["choices"][0];
  const json& m = choice["message"];
  json content = json::array();
  if (m.contains("reasoning_content"))  // no signature: a local model's thinking is not signed
    content.push_back({{"type", "thinking"}, {"thinking", m["reasoning_content"]}, {"signature", ""}});
  if (m["content"].is_string() && !m["content"].get<std::string>().empty())
    content.push_back({{"type", "text"}, {"text", m["content"]}});
  for (const json& c : m.value("tool_calls", json::array()))
    content.push_back({{"type", "tool_use"},
                       {"id", c["id"]},
                       {"name", c["function"]["name"]},
                       {"input", tool_input(c["function"]["arguments"])}});
  json stop_sequence = choice.value("stop_sequence", json());
  return {{"id", anthropic_message_id(completion["id"])},
          {"type", "message"},
          {"role", "assistant"},
          {"model", completion["model"]},
          {"content", std::move(content)},
          {"stop_reason", stop_reason(choice["finish_reason"], stop_sequence)},
          {"stop_sequence", stop_sequence},
          {"usage", usage_of(completion["usage"])}};
}

std::string anthropic_message_id(const std::string& completion_id) {
  return "msg_" + completion_id.substr(completion_id.find('-') + 1);
}

json anthropic_error_body(int status, const std::string& message) {
  return {{"type", "error"}, {"error", {{"type", anthropic_error_type(status)}, {"message", message}}}};
}

HttpReply anthropic_error_reply(HttpReply reply) {
  if (reply.status < 400 || reply.stream) return reply;
  json j = json::parse(reply.body, nullptr, false);
  std::string message = reply.body;
  if (j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].contains("message"))
    message = j["error"]["message"].get<std::string>();
  reply.content_type = "application/json";
  reply.body = dump(anthropic_error_body(reply.status, message));
  return reply;
}

// --- the event stream

std::string AnthropicStream::start() const {
  // The prompt's counts are known only once it has run: they come in message_delta's usage,
  // which holds the whole message's totals (as the API defines it).
  json message = {{"id", id_},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", model_},
                  {"content", json::array()},
                  {"stop_reason", nullptr},
                  {"stop_sequence", nullptr},
                  {"usage", {{"input_tokens", 0}, {"output_tokens", 0}}}};
  return event({{"type", "message_start"}, {"message", std::move(message)}}) + event({{"type", "ping"}});
}

std::string AnthropicStream::feed(std::string_view sse_text) {
  buffer_ += sse_text;
  std::string out;
  for (size_t end; !done_ && !failed_ && (end = buffer_.find("\n\n")) != std::string::npos;) {
    std::string e = buffer_.substr(0, end);
    buffer_.erase(0, end + 2);
    if (!e.starts_with("data: ")) continue;
    std::string_view payload = std::string_view(e).substr(6);
    if (payload == "[DONE]") {
      done_ = true;
      break;
    }
    json j = json::parse(payload, nullptr, false);
    if (!j.is_object()) continue;
    if (j.contains("error") && j["error"].is_object()) {
      failed_ = true;
      out += event(anthropic_error_body(j["error"].value("code", 500), j["error"].value("message", "")));
      break;
    }
    out += on_chunk(j);
  }
  return out;
}

std::string AnthropicStream::on_chunk(const json& chunk) {
  if (chunk.contains("usage") && chunk["usage"].is_object()) usage_ = chunk["usage"];
  if (!chunk.contains("choices") || chunk["choices"].empty()) return {};
  const json& c = chunk["choices"][0];
  const json d = c.value("delta", json::object());
  std::string out;
  if (d.contains("reasoning_content")) {
    if (open_ != Block::Thinking)
      out += open(Block::Thinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
    out += delta({{"type", "thinking_delta"}, {"thinking", d["reasoning_content"]}});
  }
  if (d.contains("content") && d["content"].is_string() && !d["content"].get<std::string>().empty()) {
    if (open_ != Block::Text) out += open(Block::Text, {{"type", "text"}, {"text", ""}});
    out += delta({{"type", "text_delta"}, {"text", d["content"]}});
  }
  if (d.contains("tool_calls")) out += on_tool_calls(d["tool_calls"]);
  if (c.contains("finish_reason") && !c["finish_reason"].is_null()) {
    finish_reason_ = c["finish_reason"];
    stop_sequence_ = c.value("stop_sequence", json());
  }
  return out;
}

// A call's first delta has its id and name (a new tool_use block); later ones add to its
// arguments, streamed as the input's JSON text.
std::string AnthropicStream::on_tool_calls(const json& calls) {
  std::string out;
  for (const json& call : calls) {
    const json f = call.value("function", json::object());
    if (call.contains("id"))
      out += open(Block::Tool,
                  {{"type", "tool_use"}, {"id", call["id"]}, {"name", f.value("name", "")}, {"input", json::object()}});
    std::string arguments = f.value("arguments", "");
    if (open_ == Block::Tool && !arguments.empty())
      out += delta({{"type", "input_json_delta"}, {"partial_json", arguments}});
  }
  return out;
}

std::string AnthropicStream::open(Block kind, json content_block) {
  std::string out = close();
  open_ = kind;
  ++index_;
  return out + event({{"type", "content_block_start"}, {"index", index_}, {"content_block", std::move(content_block)}});
}

std::string AnthropicStream::close() {
  if (open_ == Block::None) return {};
  open_ = Block::None;
  return event({{"type", "content_block_stop"}, {"index", index_}});
}

std::string AnthropicStream::delta(json d) const {
  return event({{"type", "content_block_delta"}, {"index", index_}, {"delta", std::move(d)}});
}

std::string AnthropicStream::finish() {
  if (!done_ || failed_) return {};
  std::string out = close();
  json d = {{"stop_reason", stop_reason(finish_reason_, stop_sequence_)}, {"stop_sequence", stop_sequence_}};
  out += event({{"type", "message_delta"}, {"delta", std::move(d)}, {"usage", usage_of(usage_)}});
  return out + event({{"type", "message_stop"}});
}

}  // namespace vkllm::serve
