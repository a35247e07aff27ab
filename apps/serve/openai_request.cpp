// Request checking and response building for the OpenAI-compatible routes.
#include "serve/openai.h"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>

namespace vkllm::serve {

namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxStops = 16;

// A field that is absent or null is "not given".
const json* field(const json& body, const char* key) {
  auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> number(const json& body, const char* key, double lo, double hi) {
  const json* v = field(body, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw bad_request(fmt::format("'{}' must be a number", key));
  double x = v->get<double>();
  if (!(x >= lo && x <= hi)) throw bad_request(fmt::format("'{}' must be between {} and {}", key, lo, hi));
  return x;
}

std::optional<int64_t> integer(const json& body, const char* key, int64_t lo, int64_t hi) {
  const json* v = field(body, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) throw bad_request(fmt::format("'{}' must be an integer", key));
  if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX))
    throw bad_request(fmt::format("'{}' must be between {} and {}", key, lo, hi));
  int64_t x = v->get<int64_t>();
  if (x < lo || x > hi) throw bad_request(fmt::format("'{}' must be between {} and {}", key, lo, hi));
  return x;
}

bool boolean(const json& body, const char* key, bool fallback) {
  const json* v = field(body, key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw bad_request(fmt::format("'{}' must be true or false", key));
  return v->get<bool>();
}

// Chat content: a string, or a list of text parts (joined by newlines); null stays null (an
// assistant turn that only calls tools).
json message_content(const json& content, size_t i) {
  if (content.is_null()) return nullptr;
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw bad_request(fmt::format("messages[{}].content must be a string or an array", i));
  std::string text;
  for (const json& part : content) {
    if (!part.is_object() || part.value("type", json()) != "text" || !part.contains("text") ||
        !part["text"].is_string())
      throw bad_request(
          fmt::format("messages[{}].content: only text parts ({{\"type\": \"text\", \"text\": ...}}) "
                      "are supported",
                      i));
    if (!text.empty()) text += '\n';
    text += part["text"].get<std::string>();
  }
  return text;
}

json parse_messages(const json& body) {
  const json* m = field(body, "messages");
  if (!m) throw bad_request("'messages' is required");
  if (!m->is_array()) throw bad_request("'messages' must be an array");
  if (m->empty()) throw bad_request("'messages' must not be empty");
  static const char* const roles[] = {"system", "developer", "user", "assistant", "tool"};
  json out = json::array();
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    if (!msg.is_object()) throw bad_request(fmt::format("messages[{}] must be an object", i));
    const json* role = field(msg, "role");
    if (!role || !role->is_string()) throw bad_request(fmt::format("messages[{}].role must be a string", i));
    std::string r = role->get<std::string>();
    if (std::find(std::begin(roles), std::end(roles), r) == std::end(roles))
      throw bad_request(fmt::format("messages[{}].role must be system, developer, user, assistant or tool", i));
    json copy = {{"role", r}, {"content", message_content(msg.value("content", json()), i)}};
    for (const char* key : {"name", "tool_call_id", "tool_calls", "reasoning_content"})
      if (const json* v = field(msg, key)) copy[key] = *v;
    out.push_back(std::move(copy));
  }
  return out;
}

// Token ids of a non-empty array; `what` words the error.
std::vector<int32_t> token_ids(const json& a, uint32_t vocab, const std::string& what) {
  std::vector<int32_t> ids;
  for (const json& t : a) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= int64_t(vocab))
      throw bad_request(fmt::format("{} in 0..{}", what, vocab - 1));
    ids.push_back(int32_t(t.get<int64_t>()));
  }
  return ids;
}

std::variant<std::string, std::vector<int32_t>> parse_prompt(const json& body, uint32_t vocab) {
  const json* p = field(body, "prompt");
  if (!p) throw bad_request("'prompt' is required");
  if (p->is_string()) return p->get<std::string>();
  if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) return (*p)[0].get<std::string>();
  if (!p->is_array() || p->empty()) throw bad_request("'prompt' must be a string or an array of token ids");
  return token_ids(*p, vocab, "'prompt' must be one string or token ids");
}

// Chat requests: the messages, tools and chat_template_kwargs the template sees.
void parse_chat(const json& body, CompletionParams& p) {
  p.messages = parse_messages(body);
  if (const json* t = field(body, "tools")) {
    if (!t->is_array()) throw bad_request("'tools' must be an array");
    p.tools = *t;
  }
  if (const json* k = field(body, "chat_template_kwargs")) {
    if (!k->is_object()) throw bad_request("'chat_template_kwargs' must be an object");
    p.extra = *k;
  }
}

std::vector<std::string> parse_stop(const json& body) {
  const json* s = field(body, "stop");
  if (!s) return {};
  if (s->is_string()) return {s->get<std::string>()};
  if (!s->is_array() || s->size() > kMaxStops)
    throw bad_request(fmt::format("'stop' must be a string or an array of at most {} strings", kMaxStops));
  std::vector<std::string> out;
  for (const json& x : *s) {
    if (!x.is_string()) throw bad_request("'stop' must be a string or an array of strings");
    out.push_back(x.get<std::string>());
  }
  return out;
}

// {"token id": bias}; a bias of -100 bans the token (OpenAI's convention).
std::vector<std::pair<int32_t, float>> parse_logit_bias(const json& body, uint32_t vocab) {
  const json* b = field(body, "logit_bias");
  if (!b) return {};
  if (!b->is_object()) throw bad_request("'logit_bias' must be an object of token id: bias");
  std::vector<std::pair<int32_t, float>> out;
  for (const auto& [key, value] : b->items()) {
    size_t used = 0;
    long id = -1;
    try {
      id = std::stol(key, &used);
    } catch (...) {
      used = 0;
    }
    if (used != key.size() || key.empty() || id < 0 || id >= long(vocab))
      throw bad_request(fmt::format("'logit_bias' keys must be token ids in 0..{}", vocab - 1));
    if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100))
      throw bad_request("'logit_bias' values must be numbers between -100 and 100");
    double bias = value.get<double>();
    out.emplace_back(int32_t(id), bias <= -100 ? -INFINITY : float(bias));
  }
  return out;
}

// Fields vkllm does not implement yet are refused rather than silently ignored.
void refuse_unsupported(const json& body, bool chat) {
  if (auto n = integer(body, "n", 1, 1'000'000); n && *n != 1) throw bad_request("only n = 1 is supported");
  if (auto b = integer(body, "best_of", 1, 1'000'000); b && *b != 1) throw bad_request("only best_of = 1 is supported");
  if (const json* rf = field(body, "response_format")) {
    if (!rf->is_object() || !rf->contains("type") || !(*rf)["type"].is_string())
      throw bad_request("'response_format' must be an object with a 'type'");
    if ((*rf)["type"] != "text")
      throw bad_request(fmt::format("response_format {} is not supported yet (only text)", (*rf)["type"].dump()));
  }
  if (chat ? boolean(body, "logprobs", false) : field(body, "logprobs") != nullptr)
    throw bad_request("logprobs are not supported yet");
  if (!chat && boolean(body, "echo", false)) throw bad_request("echo is not supported yet");
  if (const json* s = field(body, "suffix"); s && (!s->is_string() || !s->get<std::string>().empty()))
    throw bad_request("suffix is not supported yet");
}

SamplerOptions parse_sampling(const json& body, uint32_t vocab) {
  SamplerOptions o{.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f, .repeat_penalty = 1.0f};
  if (auto t = number(body, "temperature", 0, 100)) o.temperature = float(*t);
  if (auto p = number(body, "top_p", 0, 1)) o.top_p = std::max(float(*p), 1e-6f);
  if (auto k = integer(body, "top_k", 0, INT32_MAX)) o.top_k = int(*k);
  if (auto m = number(body, "min_p", 0, 1)) o.min_p = std::min(float(*m), 0.999f);
  if (auto r = number(body, "repeat_penalty", 0, 100)) {
    if (*r <= 0) throw bad_request("'repeat_penalty' must be greater than 0");
    o.repeat_penalty = float(*r);
  }
  if (auto n = integer(body, "repeat_last_n", 0, 1 << 20)) o.repeat_last_n = int(*n);
  if (auto p = number(body, "presence_penalty", -2, 2)) o.presence_penalty = float(*p);
  if (auto f = number(body, "frequency_penalty", -2, 2)) o.frequency_penalty = float(*f);
  o.logit_bias = parse_logit_bias(body, vocab);
  if (auto s = integer(body, "seed", INT64_MIN, INT64_MAX))
    o.seed = uint64_t(*s);
  else
    o.seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  return o;
}

}  // namespace

ApiError bad_request(const std::string& message) { return ApiError(400, "invalid_request_error", message); }

json error_body(int status, const std::string& type, const std::string& message) {
  return {{"error", {{"message", message}, {"type", type}, {"code", status}}}};
}

json parse_body(const std::string& body) {
  json j;
  try {
    j = json::parse(body, [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxDepth) throw bad_request(fmt::format("the request body is nested deeper than {}", kMaxDepth));
      return true;
    });
  } catch (const json::exception& e) {
    throw bad_request(fmt::format("the request body is not valid JSON: {}", e.what()));
  }
  if (!j.is_object()) throw bad_request("the request body must be a JSON object");
  return j;
}

CompletionParams parse_completion(const json& body, bool chat, uint32_t vocab) {
  CompletionParams p{.chat = chat};
  if (const json* m = field(body, "model"); m && !m->is_string()) throw bad_request("'model' must be a string");
  refuse_unsupported(body, chat);
  if (chat) {
    parse_chat(body, p);
  } else {
    p.prompt = parse_prompt(body, vocab);
  }
  auto max = integer(body, "max_completion_tokens", INT64_MIN, INT64_MAX);
  if (!max) max = integer(body, "max_tokens", INT64_MIN, INT64_MAX);
  if (max && *max < 0) throw bad_request("max_tokens must not be negative");
  if (max) p.max_tokens = uint32_t(std::min<int64_t>(*max, UINT32_MAX));
  p.sampling = parse_sampling(body, vocab);
  p.stop = parse_stop(body);
  p.stream = boolean(body, "stream", false);
  p.ignore_eos = boolean(body, "ignore_eos", false);
  if (const json* so = field(body, "stream_options")) {
    if (!so->is_object()) throw bad_request("'stream_options' must be an object");
    p.include_usage = boolean(*so, "include_usage", false);
  }
  return p;
}

AttentionParams parse_attention(const json& body, uint32_t vocab, uint32_t n_layers) {
  AttentionParams a;
  const json *messages = field(body, "messages"), *prompt = field(body, "prompt"), *tokens = field(body, "tokens");
  if (!!messages + !!prompt + !!tokens != 1) throw bad_request("give exactly one of 'messages', 'prompt' or 'tokens'");
  if (messages) {
    a.input.chat = true;
    parse_chat(body, a.input);
  } else if (prompt) {
    a.input.prompt = parse_prompt(body, vocab);
  } else {
    if (!tokens->is_array() || tokens->empty()) throw bad_request("'tokens' must be a non-empty array of token ids");
    a.input.prompt = token_ids(*tokens, vocab, "'tokens' must be token ids");
  }
  if (!field(body, "layer")) throw bad_request("'layer' is required");
  int64_t layer = *integer(body, "layer", INT64_MIN, INT64_MAX);
  if (layer < 0 || layer >= int64_t(n_layers))
    throw bad_request(fmt::format("layer {} does not exist: the model has {} layers (0 to {})", layer, n_layers,
                                  int64_t(n_layers) - 1));
  a.layer = uint32_t(layer);
  return a;
}

ResponseHeader new_response_header(bool chat, const std::string& model) {
  static std::mt19937_64 rng(std::random_device{}());
  static std::mutex mutex;
  uint64_t r;
  {
    std::lock_guard lock(mutex);
    r = rng();
  }
  int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return {fmt::format("{}-{:016x}", chat ? "chatcmpl" : "cmpl", r), model, now, chat};
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

const char* finish_reason(RequestFinish r) { return r == RequestFinish::Stop ? "stop" : "length"; }

namespace {

json header_json(const ResponseHeader& h, bool chunk) {
  const char* object = h.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return {
      {"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}, {"system_fingerprint", "vkllm"}};
}

}  // namespace

json completion_json(const ResponseHeader& h, const std::string& text, RequestFinish finish, const Usage& u) {
  json j = header_json(h, false);
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish_reason(finish)}};
  if (h.chat)
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text;
  j["choices"] = json::array({choice});
  j["usage"] = usage_json(u);
  return j;
}

json chunk_json(const ResponseHeader& h, const std::string& text, std::optional<RequestFinish> finish, bool role) {
  json j = header_json(h, true);
  json choice = {{"index", 0}, {"logprobs", nullptr}};
  choice["finish_reason"] = finish ? json(finish_reason(*finish)) : json(nullptr);
  if (h.chat) {
    json delta = json::object();
    if (role) delta["role"] = "assistant";
    if (!finish) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  j["choices"] = json::array({choice});
  return j;
}

json usage_chunk_json(const ResponseHeader& h, const Usage& u) {
  json j = header_json(h, true);
  j["choices"] = json::array();
  j["usage"] = usage_json(u);
  return j;
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

}  // namespace vkllm::serve
