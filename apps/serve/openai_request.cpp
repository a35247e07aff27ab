// Request checking for the OpenAI-compatible routes: every field of a completion request, checked
// into CompletionParams, with a 400 naming the field for anything wrong.
#include "serve/openai.h"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>

#include "engine/media_prompt.h"

namespace vkllm::serve {

namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxStops = 16;

// A field that is absent or null is "not given".
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

// An image_url part's URL (a data: URL, or http(s) for the server to fetch when it may).
std::string image_url(const json& part, size_t i) {
  const json* u = field(part, "image_url");
  if (u && u->is_object()) u = field(*u, "url");
  if (!u || !u->is_string() || u->get_ref<const std::string&>().empty())
    throw bad_request(
        fmt::format("messages[{}].content: an image_url part needs image_url.url, a data: or http(s) URL", i));
  return u->get<std::string>();
}

// Chat content: a string, or a list of text and image_url parts (joined by newlines, each image
// as the media marker, its URL into `images`); null stays null (an assistant turn that only calls
// tools).
json message_content(const json& content, size_t i, std::vector<std::string>& images) {
  if (content.is_null()) return nullptr;
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw bad_request(fmt::format("messages[{}].content must be a string or an array", i));
  std::string text;
  for (const json& part : content) {
    std::string piece;
    if (part.is_object() && part.value("type", json()) == "image_url") {
      images.push_back(image_url(part, i));
      piece = kMediaMarker;
    } else if (part.is_object() && part.value("type", json()) == "text" && part.contains("text") &&
               part["text"].is_string()) {
      piece = part["text"].get<std::string>();
    } else {
      throw bad_request(
          fmt::format("messages[{}].content: only text parts ({{\"type\": \"text\", \"text\": ...}}) and "
                      "image_url parts are supported",
                      i));
    }
    if (!text.empty()) text += '\n';
    text += piece;
  }
  return text;
}

// An assistant turn's tool_calls as templates want them: OpenAI sends function.arguments as JSON
// text, templates (Llama 3's `arguments | tojson`, Qwen's) expect the object it holds.
json template_tool_calls(json calls, size_t i) {
  if (!calls.is_array()) throw bad_request(fmt::format("messages[{}].tool_calls must be an array", i));
  for (json& c : calls) {
    if (!c.is_object() || !c.contains("function") || !c["function"].is_object())
      throw bad_request(fmt::format("messages[{}].tool_calls: each call needs a 'function' object", i));
    json& args = c["function"]["arguments"];
    if (args.is_string()) {
      json parsed = json::parse(args.get<std::string>(), nullptr, false);
      if (parsed.is_object()) args = std::move(parsed);
    }
  }
  return calls;
}

json parse_messages(const json& body, std::vector<std::string>& images) {
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
    json copy = {{"role", r}, {"content", message_content(msg.value("content", json()), i, images)}};
    for (const char* key : {"name", "tool_call_id", "tool_calls", "reasoning_content"})
      if (const json* v = field(msg, key)) copy[key] = *v;
    if (copy.contains("tool_calls")) copy["tool_calls"] = template_tool_calls(copy["tool_calls"], i);
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

// The text of a message's content (strings and text parts; null is "").
std::string content_text(const json& m) {
  const json& c = m.contains("content") ? m["content"] : json();
  return c.is_string() ? c.get<std::string>() : "";
}

// continue_final_message (true, "content" or "reasoning_content", as llama-server takes it; vLLM's
// true) and add_generation_prompt; a trailing assistant message is continued unless the request
// says otherwise, as llama-server does. The continued message leaves `messages`.
void parse_prefill(const json& body, CompletionParams& p) {
  const json* c = field(body, "continue_final_message");
  if (c && !c->is_boolean() && !(c->is_string() && (*c == "content" || *c == "reasoning_content")))
    throw bad_request("'continue_final_message' must be true, false, \"content\" or \"reasoning_content\"");
  const json* g = field(body, "add_generation_prompt");
  if (g && !g->is_boolean()) throw bad_request("'add_generation_prompt' must be true or false");
  bool asked = c && *c != false;
  bool trailing = p.messages.back()["role"] == "assistant";
  if (asked && g && *g == true)
    throw bad_request("'continue_final_message' and 'add_generation_prompt' cannot both be true");
  p.add_generation_prompt = g ? g->get<bool>() : true;
  if (!asked && (!trailing || (c && *c == false) || !p.add_generation_prompt)) return;
  if (!trailing) throw bad_request("'continue_final_message' needs the last message to be the assistant's");
  const json& last = p.messages.back();
  if (last.contains("tool_calls") && !last["tool_calls"].empty())
    throw bad_request("an assistant message with tool_calls cannot be continued");
  if (p.messages.size() >= 2 && p.messages[p.messages.size() - 2]["role"] == "assistant")
    throw bad_request("two assistant messages end the conversation: only the last one can be continued");
  Prefill f{
      .reasoning = last.value("reasoning_content", json("")).is_string() ? last.value("reasoning_content", "") : "",
      .content = content_text(last)};
  f.reasoning_only = c && *c == "reasoning_content" ? true
                     : (c && *c == "content")       ? false
                                                    : f.content.empty() && !f.reasoning.empty();
  p.prefill = f;
  p.add_generation_prompt = true;  // the continued message follows a generation prompt
  p.messages.erase(p.messages.size() - 1);
  if (p.messages.empty()) throw bad_request("'messages' holds only the message to continue");
}

// llama-server's `multimodal_data` on completions: base64 images, one for each media marker of a
// text prompt (or before it, without markers).
void parse_multimodal_data(const json& body, CompletionParams& p) {
  const json* md = field(body, "multimodal_data");
  if (!md) return;
  if (!md->is_array()) throw bad_request("'multimodal_data' must be an array of base64 images");
  for (const json& d : *md) {
    if (!d.is_string() || d.get_ref<const std::string&>().empty())
      throw bad_request("'multimodal_data' must be an array of base64 images");
    p.images.push_back("data:;base64," + d.get<std::string>());
  }
  if (!p.images.empty() && !std::holds_alternative<std::string>(p.prompt))
    throw bad_request("'multimodal_data' needs a text prompt (with a <__media__> marker for each image)");
}

// Chat requests: the messages, tools and chat_template_kwargs the template sees.
void parse_chat(const json& body, CompletionParams& p) {
  p.messages = parse_messages(body, p.images);
  parse_prefill(body, p);
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
  if (!chat && boolean(body, "echo", false)) throw bad_request("echo is not supported yet");
  if (const json* s = field(body, "suffix"); s && (!s->is_string() || !s->get<std::string>().empty()))
    throw bad_request("suffix is not supported yet");
}

// response_format ({"type": "text" | "json_object" | "json_schema", ...}), or llama-server's
// `grammar` (GBNF text) and `json_schema` (a schema): at most one of them.
OutputFormat parse_output_format(const json& body) {
  const json *rf = field(body, "response_format"), *grammar = field(body, "grammar"),
             *schema = field(body, "json_schema");
  if (!!rf + !!grammar + !!schema > 1)
    throw bad_request("give at most one of 'response_format', 'grammar' and 'json_schema'");
  OutputFormat out;
  if (grammar) {
    if (!grammar->is_string()) throw bad_request("'grammar' must be a string (GBNF)");
    out.kind = OutputFormat::Grammar;
    out.grammar = grammar->get<std::string>();
  } else if (schema) {
    if (!schema->is_object() && !schema->is_boolean())
      throw bad_request("'json_schema' must be a JSON schema (an object)");
    out.kind = OutputFormat::JsonSchema;
    out.schema = *schema;
  } else if (rf) {
    if (!rf->is_object() || !rf->contains("type") || !(*rf)["type"].is_string())
      throw bad_request("'response_format' must be an object with a 'type'");
    std::string type = (*rf)["type"].get<std::string>();
    if (type == "json_object") {
      out.kind = OutputFormat::JsonObject;
      if (const json* s = field(*rf, "schema"))
        out.kind = OutputFormat::JsonSchema, out.schema = *s;  // llama-server's form
    } else if (type == "json_schema") {
      const json* js = field(*rf, "json_schema");
      if (!js || !js->is_object())
        throw bad_request("response_format json_schema needs 'json_schema': {\"name\", \"schema\"}");
      const json* s = field(*js, "schema");
      if (!s || (!s->is_object() && !s->is_boolean()))
        throw bad_request("'response_format.json_schema.schema' must be a JSON schema");
      out.kind = OutputFormat::JsonSchema;
      out.schema = *s;
    } else if (type != "text") {
      throw bad_request(
          fmt::format("'response_format.type' must be text, json_object or json_schema, not {}", (*rf)["type"].dump()));
    }
  }
  return out;
}

// tool_choice and parallel_tool_calls (default: auto with tools, one call per reply as in llama-server).
void parse_tool_choice(const json& body, CompletionParams& p) {
  const json* c = field(body, "tool_choice");
  p.parallel_tool_calls = boolean(body, "parallel_tool_calls", false);
  bool has_tools = p.tools.is_array() && !p.tools.empty();
  p.tool_choice.kind = has_tools ? ToolChoice::Auto : ToolChoice::None;
  if (!c) return;
  if (c->is_string()) {
    std::string k = c->get<std::string>();
    if (k == "none")
      p.tool_choice.kind = ToolChoice::None;
    else if (k == "required")
      p.tool_choice.kind = ToolChoice::Required;
    else if (k != "auto")
      throw bad_request(
          "'tool_choice' must be none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
  } else if (c->is_object() && c->contains("function") && (*c)["function"].is_object() &&
             (*c)["function"].contains("name") && (*c)["function"]["name"].is_string()) {
    p.tool_choice = {ToolChoice::Named, (*c)["function"]["name"].get<std::string>()};
  } else {
    throw bad_request(
        "'tool_choice' must be none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
  }
  if (!has_tools && (p.tool_choice.kind == ToolChoice::Required || p.tool_choice.kind == ToolChoice::Named))
    throw bad_request("'tool_choice' asks for a tool call, but the request has no 'tools'");
}

// Chat: logprobs (true/false) and top_logprobs (0-20); completions: logprobs as the count (0-20).
void parse_logprobs(const json& body, bool chat, CompletionParams& p) {
  if (chat) {
    p.logprobs = boolean(body, "logprobs", false);
    if (auto n = integer(body, "top_logprobs", 0, kMaxTopLogprobs)) {
      if (!p.logprobs) throw bad_request("'top_logprobs' needs 'logprobs': true");
      p.top_logprobs = uint32_t(*n);
    }
  } else if (auto n = integer(body, "logprobs", 0, kMaxTopLogprobs)) {
    p.logprobs = true;
    p.top_logprobs = uint32_t(*n);
  }
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

const json* field(const json& body, const char* key) {
  auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

ApiError bad_request(const std::string& message) { return ApiError(400, "invalid_request_error", message); }

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
    parse_multimodal_data(body, p);
  }
  auto max = integer(body, "max_completion_tokens", INT64_MIN, INT64_MAX);
  if (!max) max = integer(body, "max_tokens", INT64_MIN, INT64_MAX);
  if (max && *max < 0) throw bad_request("max_tokens must not be negative");
  if (max) p.max_tokens = uint32_t(std::min<int64_t>(*max, UINT32_MAX));
  p.sampling = parse_sampling(body, vocab);
  p.stop = parse_stop(body);
  p.output = parse_output_format(body);
  parse_logprobs(body, chat, p);
  if (chat) {
    parse_tool_choice(body, p);
    if (const json* rf = field(body, "reasoning_format")) {
      if (!rf->is_string() || (*rf != "none" && *rf != "auto" && *rf != "deepseek"))
        throw bad_request("'reasoning_format' must be none, auto or deepseek");
      p.split_reasoning = *rf != "none";
    }
    if (p.tool_choice.kind != ToolChoice::None && p.output.kind != OutputFormat::Text)
      throw bad_request(
          "tools cannot be combined with 'response_format', 'grammar' or 'json_schema' (set tool_choice to none)");
    if (p.prefill && p.output.kind != OutputFormat::Text)
      throw bad_request(
          "a continued assistant message cannot be combined with 'response_format', 'grammar' or 'json_schema' (the "
          "constraint would start over inside it)");
  }
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

}  // namespace vkllm::serve
