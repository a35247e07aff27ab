// The OpenAI API's schema as vkllm serve speaks it: request bodies of /v1/completions and
// /v1/chat/completions checked field by field into CompletionParams, and the response objects,
// stream chunks and errors built from generation results. No HTTP and no GPU here.
#pragma once
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "engine/sampler.h"
#include "engine/sequence.h"
#include "text/chat/prefill.h"
#include "text/chat/reply_grammar.h"

namespace vkllm::serve {

// Request and response objects keep their keys in order (a chat template's tojson shows it).
using json = nlohmann::ordered_json;

// An error the client gets as {"error": {"message", "type", "code"}} with an HTTP status.
struct ApiError : std::runtime_error {
  int status;
  std::string type;
  ApiError(int status, std::string type, const std::string& message)
      : std::runtime_error(message), status(status), type(std::move(type)) {}
};
ApiError bad_request(const std::string& message);  // 400 invalid_request_error

json error_body(int status, const std::string& type, const std::string& message);

// Parses a request body: a JSON object, nested at most 64 deep; 400 otherwise.
json parse_body(const std::string& body);
// A body's field when it is there and not null (JSON null means absent in these APIs); else null.
const json* field(const json& body, const char* key);

// The most top_logprobs a request may ask for.
inline constexpr int64_t kMaxTopLogprobs = 20;

// What the reply must look like: free text, a GBNF grammar (`grammar`), a JSON schema
// (response_format json_schema, or llama-server's `json_schema`), or any JSON object.
struct OutputFormat {
  enum Kind { Text, Grammar, JsonSchema, JsonObject } kind = Text;
  std::string grammar;  // Grammar
  json schema;          // JsonSchema
};

// What a completion request asks for, checked. Defaults as llama-server: temperature 0.8,
// top_k 40, top_p 0.95, min_p 0.05, no repetition penalty; a random seed when none is given.
struct CompletionParams {
  bool chat = false;
  json messages;           // chat: [{role, content: string, ...}] (text parts joined; tool_calls' arguments as objects)
  json tools;              // chat: passed to the template, or null
  json extra;              // chat: chat_template_kwargs (extra template variables), or null
  ToolChoice tool_choice;  // chat: auto when tools are given, else none
  bool parallel_tool_calls = false;  // several calls in one reply (llama-server's default: one)
  bool split_reasoning = true;       // reasoning_format none: reasoning stays in the content
  // chat: the last message is the beginning of the reply, which the model continues
  // (continue_final_message, or a trailing assistant message as llama-server takes it); it is
  // then not in `messages`.
  std::optional<Prefill> prefill;
  bool add_generation_prompt = true;  // chat: false renders the conversation as it is
  OutputFormat output;
  bool logprobs = false;
  uint32_t top_logprobs = 0;
  std::variant<std::string, std::vector<int32_t>> prompt;  // completions: text or token ids
  // The request's images, in prompt order: data: or http(s) URLs (chat: image_url parts, each a
  // media marker in its message's text; completions: multimodal_data, at the prompt's markers).
  std::vector<std::string> images;
  std::optional<uint32_t> max_tokens;  // none: until the context is full
  SamplerOptions sampling;
  std::vector<std::string> stop;
  bool stream = false, include_usage = false, ignore_eos = false;
};
CompletionParams parse_completion(const json& body, bool chat, uint32_t vocab_size);

// POST /v1/attention: exactly one of messages (as a chat request: rendered with the chat
// template), prompt (as a completion request: a string or token ids) or tokens (ids), and the
// layer (0 .. n_layers - 1); 400 otherwise.
struct AttentionParams {
  CompletionParams input;
  uint32_t layer = 0;
};
AttentionParams parse_attention(const json& body, uint32_t vocab_size, uint32_t n_layers);

// The fields every response object and stream chunk of one request share.
struct ResponseHeader {
  std::string id;     // "chatcmpl-..." or "cmpl-..."
  std::string model;  // the served model's id
  int64_t created = 0;
  bool chat = false;
};
ResponseHeader new_response_header(bool chat, const std::string& model);

json usage_json(const Usage& u);
// llama-server's `timings`: prompt tokens evaluated (cache_n reused) and generated, with their
// milliseconds and rates. Sent beside usage.
json timings_json(const Usage& u);
// id, object, created, model, system_fingerprint: what every response object (chunk: every stream
// chunk) starts with.
json header_json(const ResponseHeader& h, bool chunk);
// The usage chunk sent last when stream_options.include_usage is set (choices is empty).
json usage_chunk_json(const ResponseHeader& h, const Usage& u);

// RFC 3339 / ISO 8601 in UTC with `fraction_digits` (0, 3 or 9) digits of the second:
// "2026-11-26T05:30:01.123Z". Ollama's created_at takes 9, the request log 3.
std::string utc_time(std::chrono::system_clock::time_point t, int fraction_digits);

// JSON text for the wire: invalid UTF-8 (bytes a model generated) becomes U+FFFD, never an error.
std::string dump(const json& j);
// "data: <json>\n\n", one server-sent event.
std::string sse(const json& j);

}  // namespace vkllm::serve
