// Api: every route of vkllm serve as a function of (method, path, headers, body), independent of
// the HTTP library: the server (http_server.cpp) and the request fuzzer (tests/fuzz) run the same
// code. Any request gives a response; errors are OpenAI-shaped JSON.
//   POST /v1/chat/completions, POST /v1/completions   generation (streamed as server-sent events)
//   GET /v1/models, GET /health, GET /metrics (Prometheus), POST /tokenize, POST /detokenize
//   POST /v1/attention (one layer's attention probabilities), GET /v1/info (the model and its
//   KV-cache cost beside the other attention kinds) for the demo page (api_attention.cpp)
//   POST /v1/messages, POST /v1/messages/count_tokens   Anthropic's Messages API over the chat
//   route (api_messages.cpp, anthropic.h), its errors in Anthropic's shape
//   POST /v1/embeddings (OpenAI's), POST /api/embed (Ollama's): embeddings (api_embeddings.cpp)
//   GET / and GET /<file>: the demo page (web_assets.h), open like /health: it holds no data
//   GET /v1/models/{id}, GET /slots (each KV-cache slot's state, as llama-server shows them)
//   Ollama's API (api_ollama.cpp): GET /api/tags, /api/version, /api/ps; POST /api/show,
//   /api/chat, /api/generate; pull, push, create, copy and delete answer 501. Errors on /api/*
//   are Ollama-shaped ({"error": message}).
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arch/projector.h"
#include "dtype.h"
#include "engine/sequence.h"
#include "serve/openai.h"
#include "text/chat/chat_format.h"

namespace vkllm {
class ChatTemplate;
}

namespace vkllm::serve {

struct CompletionParams;
class GrammarCache;

struct HttpRequest {
  std::string method, path, body;
  std::string authorization;  // the Authorization header ("" when absent)
  std::string x_api_key;      // the x-api-key header, Anthropic's clients' form of the key
  bool overloaded = false;    // too many connections wait: generation routes answer 503
};

// What the request log says about a generation request beyond HTTP: its tokens and timings, and
// its prompt's text only with --log-prompts. Filled by the route (a stream: when it ends), read
// by the server once the reply is sent.
struct RequestRecord {
  Usage usage;
  std::string prompt;
  std::vector<int32_t> prompt_tokens;  // what Ollama's /api/generate returns as its `context`
};

// Writes part of a streamed body; false once the client is gone.
using BodyWriter = std::function<bool(std::string_view)>;
// Whether the client is still connected (asked while nothing is being written).
using ClientAlive = std::function<bool()>;

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
  // Set for streamed replies: produces the body through the writer, then returns.
  std::function<void(const BodyWriter&, const ClientAlive&)> stream;
  std::shared_ptr<RequestRecord> record;  // generation routes only
};

// What Ollama's /api/tags, /api/show and /api/ps tell about the served model.
struct ModelFacts {
  std::string architecture;  // "llama"
  std::string quantization;  // the file type, "Q8_0"
  uint64_t parameters = 0;
  uint64_t file_bytes = 0;    // the GGUF file(s)
  uint64_t memory_bytes = 0;  // weights and caches on the device
  int64_t modified = 0;       // the file's modification time, Unix seconds
  // /api/show's model_info: the file's metadata (long arrays empty unless verbose); none: a few keys.
  std::function<nlohmann::ordered_json(bool verbose)> model_info;
};

struct ApiOptions {
  std::string model_id;  // what /v1/models lists and responses name
  std::string api_key;   // non-empty: every route but /health needs "Authorization: Bearer <key>" (or x-api-key)
  std::shared_ptr<const ChatTemplate> chat_template;  // null: /v1/chat/completions is unavailable
  std::string device;                                 // the GPU's name, for /v1/info
  DType kv_type = DType::F16;                         // the KV cache's storage, for /v1/info
  bool log_prompts = false;                           // RequestRecord::prompt is filled
  ModelFacts facts;
  Pooling pooling = Pooling::Last;  // embeddings' (--pooling, else the file's pooling_type, else last)
  // --mmproj: how images become the encoder's input and the prompt's text (null: requests with
  // images get 400; the scheduler holds the encoder).
  std::shared_ptr<const ProjectorConfig> projector;
  // --allow-image-urls: an http(s) image URL's bytes (throws Error); null: such URLs get 400.
  std::function<std::string(const std::string& url)> fetch_image;
  json projector_info;  // GET /v1/info's "projector" (vkllm info --mmproj's); null without one
};

// A request's prompt: its tokens (zeros in each image's place) and its images.
struct PromptInput {
  std::vector<int32_t> tokens;
  std::vector<PromptImage> images;
};

// What a 503 from a server that is loading or stopping asks a client to wait (Retry-After).
inline constexpr int kRetryAfterSeconds = 5;

// The longest sequence POST /v1/attention takes: a map the page can draw (and a few MB of JSON).
inline constexpr uint32_t kMaxAttentionTokens = 512;

class Api {
 public:
  Api(Generator& generator, ApiOptions options);
  ~Api();
  // Never throws: any failure becomes an error reply.
  HttpReply handle(const HttpRequest& request, const ClientAlive& alive) const;
  static HttpReply error(int status, const std::string& type, const std::string& message);
  // Stops taking work (SIGTERM): from now on every route but /health and /metrics answers 503
  // with Retry-After, and /health says the server is draining. Running requests go on.
  void drain() const { draining_ = true; }

 private:
  HttpReply route(const HttpRequest& request, const ClientAlive& alive) const;
  HttpReply completions(const HttpRequest& request, bool chat, const ClientAlive& alive) const;
  static HttpReply unauthorized();
  HttpReply health() const;
  json model_json() const;
  HttpReply messages(const HttpRequest& request, const ClientAlive& alive) const;
  HttpReply count_tokens(const HttpRequest& request) const;
  HttpReply models() const;
  HttpReply model(const std::string& id) const;
  HttpReply slots() const;
  HttpReply metrics() const;
  HttpReply tokenize(const HttpRequest& request) const;
  HttpReply detokenize(const HttpRequest& request) const;
  HttpReply attention(const HttpRequest& request) const;
  HttpReply info() const;
  HttpReply embeddings(const HttpRequest& request) const;
  HttpReply ollama_embed(const HttpRequest& request) const;
  static HttpReply page_file(const HttpRequest& request);
  // Ollama's routes (api_ollama.cpp).
  json ollama_model_json(bool running) const;
  HttpReply ollama_tags() const;
  HttpReply ollama_ps() const;
  HttpReply ollama_version() const;
  HttpReply ollama_show(const HttpRequest& request) const;
  HttpReply ollama_unsupported(const HttpRequest& request) const;
  HttpReply ollama_generate(const HttpRequest& request, bool chat_route, const ClientAlive& alive) const;
  HttpReply dispatch(const HttpRequest& request, const ClientAlive& alive) const;
  // The chat template's rendering of the request (a prefilled message left open), and what it
  // leaves open for the reader (prompt_opens_reasoning, or the prefill's).
  PrefilledPrompt chat_prompt(const CompletionParams& p) const;
  // The prompt's tokens and images (api_images.cpp): the chat prompt's (the template may write the
  // BOS text itself) or the completion prompt's, cut at each image's media marker.
  PromptInput prompt_input(const CompletionParams& p, const std::string& chat_text) const;
  VisionInput image_input(const std::string& url, size_t i) const;  // 400 for an image it cannot take
  bool authorized(const HttpRequest& request) const;

  Generator& gen_;
  ApiOptions options_;
  ChatFormat format_;                       // how the model writes tool calls and reasoning
  std::unique_ptr<GrammarCache> grammars_;  // compiled grammars of structured replies
  int64_t started_;                         // Unix seconds, the model's "created"
  mutable std::atomic<bool> draining_{false};
};

}  // namespace vkllm::serve
