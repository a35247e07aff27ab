// Ollama's API as vkllm serve speaks it, apart from HTTP: /api/chat and /api/generate bodies
// translated into the OpenAI bodies the completion routes take (so both doors share one set of
// checks and one engine), OpenAI results translated back into Ollama's objects and NDJSON lines,
// and Ollama's model names (`name:tag`) matched against the served model. No GPU here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sequence.h"
#include "serve/openai.h"

namespace vkllm::serve {

// The Ollama API level this server speaks: what clients compare against to enable features.
inline constexpr const char* kOllamaApiVersion = "0.12.0";

// The served model's Ollama name: its id, with ":latest" when the id has no tag.
std::string ollama_name(const std::string& model_id);
// Checks a request's `model` against the served model (404 naming what is served).
void check_ollama_model(const json& body, const std::string& model_id);

// {"error": message}: Ollama's error body.
json ollama_error(const std::string& message);
bool is_ollama_path(std::string_view path);  // /api/*
// An error reply (status >= 400) in Ollama's shape: an OpenAI-shaped body becomes its message.
struct HttpReply;
HttpReply ollama_error_reply(HttpReply reply);

// An /api/chat body as an OpenAI chat body: messages (tool calls' arguments as JSON text, tool
// results), tools, format (as response_format), options, think, stream (Ollama's default: true).
json ollama_chat_to_openai(const json& body);
// An /api/generate body: the prompt (and system) as one user turn of the chat template, or, with
// raw, as a completion prompt (chat false).
json ollama_generate_to_openai(const json& body, bool& chat);

// RFC 3339 with nanoseconds, UTC: Ollama's created_at.
std::string ollama_time();

// Reads an OpenAI result (a response object, or a stream's chunks one by one) into Ollama's:
// the content, thinking and tool calls so far, and how it ended.
class OllamaReply {
 public:
  // chat: /api/chat's shape (`message`), else /api/generate's (`response`); from_chat: the OpenAI
  // result is a chat completion (choices[].message / delta), else a completion (choices[].text).
  OllamaReply(std::string model, bool chat, bool from_chat)
      : model_(std::move(model)), chat_(chat), from_chat_(from_chat) {}
  // A stream chunk of the OpenAI route; returns the NDJSON line to send now ("" when none).
  std::string chunk(const json& openai_chunk);
  // A whole OpenAI response object.
  void response(const json& openai_response);
  // The last object: done, done_reason, counts and durations (ns); the whole message when whole;
  // /api/generate's `context` (the conversation's tokens) when given.
  json final(const Usage& usage, int64_t total_ns, bool whole, const std::vector<int32_t>* context = nullptr) const;
  // The reply's text: whole, or what the stream sent.
  const std::string& text() const { return content_.empty() ? streamed_ : content_; }
  // Tool calls gathered from a stream, sent in one line before the last ("" when none).
  std::string pending_tool_calls() const;

 private:
  json message(const std::string& content, const std::string& thinking, const json& calls) const;

  std::string model_;
  bool chat_, from_chat_;
  std::string streamed_;  // a stream's content so far
  struct StreamedCall {
    std::string name, arguments;  // the arguments' JSON text as its pieces arrive
  };
  std::string content_, thinking_;
  json calls_ = json::array();                // a whole reply's, in Ollama's shape
  std::vector<StreamedCall> streamed_calls_;  // a stream's, sent whole before the last line
  std::string finish_;
};

}  // namespace vkllm::serve
