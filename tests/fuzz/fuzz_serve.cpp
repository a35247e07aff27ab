// libFuzzer target for vkllm serve's request handling: any body on any route through Api::handle,
// the code the server runs. Input: byte 0 picks the route and method, byte 1 the Authorization
// and x-api-key headers, whether the server has an API key and whether it is overloaded, the rest
// is the body. Generation goes to a
// stand-in Generator that runs the real Sequence (sampler, detokenizer, stop strings) on made-up
// logits, without a GPU. Every reply must be a status with an OpenAI-shaped error for >= 400
// (Ollama-shaped on /api/*, Anthropic-shaped on /v1/messages*), JSON bodies that parse, and streams
// of "data: <json>" events (NDJSON ending in a done or error object on /api/*, Anthropic's named
// events on /v1/messages); a crash, sanitizer report or hang is a bug.
// Usage: docs/decisions.md "Fuzzing the server's request handling".
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "error.h"
#include "gguf/reader.h"
#include "serve/api.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace {

using namespace vkllm;

// Generates synchronously: every event is queued before submit() returns.
class FakeGenerator : public Generator {
 public:
  FakeGenerator(Tokenizer t, ModelConfig c) : tok_(std::move(t)), config_(std::move(c)) {}
  std::shared_ptr<GenerationHandle> submit(GenerationRequest r) override {
    ENSURE(!r.prompt.empty() && r.prompt.size() < n_ctx(), "prompt does not fit");
    if (r.prompt[0] % 13 == 5) throw QueueFull();
    auto handle = std::make_shared<GenerationHandle>();
    Sequence seq(std::move(r), handle, tok_, n_ctx());
    std::vector<float> logits(tok_.vocab_size());
    for (int step = 0; step < 48; ++step) {
      seq.evaluated(uint32_t(seq.pending().size()));
      uint32_t last = uint32_t(seq.tokens().back());
      for (size_t i = 0; i < logits.size(); ++i) logits[i] = float((i * 2654435761u + last * 40503u) % 1000) / 100;
      if (!seq.sample(logits)) return handle;
    }
    seq.finish(RequestFinish::Length);
    return handle;
  }
  const Tokenizer& tokenizer() const override { return tok_; }
  uint32_t n_ctx() const override { return 256; }
  SchedulerStats stats() const override {
    SchedulerStats s;  // not designated: its histograms' constructor is explicit
    s.slots = 4;
    return s;
  }
  std::vector<SlotState> slot_states() const override { return std::vector<SlotState>(4); }
  const ModelConfig& config() const override { return config_; }
  // Every query attends to its keys evenly.
  std::vector<float> attention(std::vector<int32_t> tokens, uint32_t layer, std::vector<PromptImage>) override {
    ENSURE(!tokens.empty() && tokens.size() <= n_ctx() && layer < config_.n_layers, "bad attention request");
    size_t n = tokens.size();
    std::vector<float> p(config_.n_heads * n * n);
    for (size_t h = 0; h < config_.n_heads; ++h)
      for (size_t q = 0; q < n; ++q)
        for (size_t k = 0; k <= q; ++k) p[(h * n + q) * n + k] = 1.0f / float(q + 1);
    return p;
  }
  // A vector from the tokens' ids: equal inputs give equal vectors.
  std::vector<std::vector<float>> embed(std::vector<std::vector<int32_t>> inputs, Pooling) override {
    std::vector<std::vector<float>> out;
    for (const auto& t : inputs) {
      ENSURE(!t.empty() && t.size() <= n_ctx(), "bad embedding input");
      std::vector<float> v(config_.dim);
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = float((i * 2654435761u + uint32_t(t.back()) * 40503u) % 1000) / 500 - 1;
      out.push_back(std::move(v));
    }
    return out;
  }

 private:
  Tokenizer tok_;
  ModelConfig config_;
};

const GgufFile& model() {
  static GgufFile f = GgufFile::open(VKLLM_DEFAULT_MODEL);
  return f;
}

FakeGenerator& generator() {
  static FakeGenerator g(Tokenizer::from_gguf(model()), ModelConfig::from_gguf(model()));
  return g;
}

void require(bool ok, const char* what, const std::string& body) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_serve: %s: %s\n", what, body.substr(0, 2000).c_str());
  std::abort();
}

void check_error_body(int status, const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  require(!j.is_discarded() && j.is_object() && j.contains("error"), "error reply is not {\"error\": ...}", body);
  const auto& e = j["error"];
  require(e.is_object() && e["message"].is_string() && e["type"].is_string() && e["code"] == status,
          "error reply lacks message, type or code", body);
}

void check_stream(const serve::HttpReply& reply) {
  std::string out;
  reply.stream([&](std::string_view s) { return out += s, true; }, [] { return true; });
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    require(line.rfind("data: ", 0) == 0, "stream line is not an event", line);
    std::string data = line.substr(6);
    require(data == "[DONE]" || !nlohmann::json::parse(data, nullptr, false).is_discarded(), "event is not JSON", line);
  }
}

// Ollama's errors: {"error": "message"}.
void check_ollama_error(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  require(!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string(),
          "Ollama error reply is not {\"error\": \"...\"}", body);
}

// Ollama's streams: one JSON object per line, the last one done (or an error).
void check_ndjson(const serve::HttpReply& reply) {
  std::string out;
  reply.stream([&](std::string_view s) { return out += s, true; }, [] { return true; });
  std::istringstream in(out);
  nlohmann::json last;
  for (std::string line; std::getline(in, line);) {
    last = nlohmann::json::parse(line, nullptr, false);
    require(!last.is_discarded() && last.is_object(), "NDJSON line is not a JSON object", line);
  }
  require(last.is_object() && (last.value("done", false) || last.contains("error")), "NDJSON stream did not end", out);
}

// Anthropic's errors: {"type": "error", "error": {"type", "message"}}.
void check_anthropic_error(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  require(!j.is_discarded() && j.is_object() && j.value("type", "") == "error" && j.contains("error") &&
              j["error"].is_object() && j["error"]["type"].is_string() && j["error"]["message"].is_string(),
          "Anthropic error reply is not {\"type\": \"error\", \"error\": {type, message}}", body);
}

// Anthropic's streams: "event: NAME" then "data: <json>" with that type, from message_start to
// message_stop (or an error event).
void check_anthropic_stream(const serve::HttpReply& reply) {
  std::string out;
  reply.stream([&](std::string_view s) { return out += s, true; }, [] { return true; });
  std::istringstream in(out);
  std::string event, first, last;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line.rfind("event: ", 0) == 0) {
      event = line.substr(7);
      continue;
    }
    require(line.rfind("data: ", 0) == 0 && !event.empty(), "stream line is not an event's data", line);
    auto j = nlohmann::json::parse(line.substr(6), nullptr, false);
    require(!j.is_discarded() && j.value("type", "") == event, "event data is not JSON of the event's type", line);
    if (first.empty()) first = event;
    last = event;
    event.clear();
  }
  require(first == "message_start" && (last == "message_stop" || last == "error"), "stream does not start and end",
          out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const routes[][2] = {
      {"POST", "/v1/chat/completions"},
      {"POST", "/v1/completions"},
      {"GET", "/v1/models"},
      {"GET", "/health"},
      {"GET", "/metrics"},
      {"POST", "/tokenize"},
      {"POST", "/detokenize"},
      {"GET", "/v1/completions"},
      {"POST", "/nowhere"},
      {"POST", "/v1/attention"},
      {"GET", "/v1/info"},
      {"POST", "/api/chat"},
      {"POST", "/api/generate"},
      {"POST", "/api/show"},
      {"GET", "/api/tags"},
      {"GET", "/api/ps"},
      {"GET", "/api/version"},
      {"GET", "/slots"},
      {"POST", "/api/pull"},
      {"GET", "/v1/models/fuzz"},
      {"POST", "/v1/completions"},  // 20: with the overload flag (byte 1 & 8)
      {"POST", "/v1/messages"},
      {"POST", "/v1/messages/count_tokens"},
      {"POST", "/v1/embeddings"},
      {"POST", "/api/embed"},
  };
  if (size < 2) return 0;
  const auto& route = routes[data[0] % (sizeof routes / sizeof routes[0])];
  bool keyed = data[1] & 1;
  serve::HttpRequest req{route[0], route[1], std::string(reinterpret_cast<const char*>(data + 2), size - 2),
                         (data[1] & 2) ? "Bearer k3y" : ((data[1] & 4) ? "Bearer nope" : "")};
  req.overloaded = data[1] & 8;
  req.x_api_key = (data[1] & 16) ? "k3y" : "";
  bool ollama = req.path.starts_with("/api/"), anthropic = req.path.starts_with("/v1/messages");
  static auto chat = std::make_shared<const ChatTemplate>(ChatTemplate::from_gguf(model()));  // ChatML
  static serve::Api open_api(generator(), {.model_id = "fuzz", .chat_template = chat});
  static serve::Api keyed_api(generator(), {.model_id = "fuzz", .api_key = "k3y", .chat_template = chat});
  serve::HttpReply reply = (keyed ? keyed_api : open_api).handle(req, [] { return true; });
  require(reply.status >= 200 && reply.status < 600, "status out of range", reply.body);
  if (reply.stream) {
    require(reply.status == 200, "a stream with an error status", reply.body);
    ollama ? check_ndjson(reply) : anthropic ? check_anthropic_stream(reply) : check_stream(reply);
  } else if (reply.status >= 400) {
    ollama      ? check_ollama_error(reply.body)
    : anthropic ? check_anthropic_error(reply.body)
                : check_error_body(reply.status, reply.body);
  } else if (reply.content_type == "application/json") {
    require(!nlohmann::json::parse(reply.body, nullptr, false).is_discarded(), "reply is not JSON", reply.body);
  }
  return 0;
}
