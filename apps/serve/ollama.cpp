// Ollama's request and response objects, translated to and from the OpenAI ones.
#include "serve/ollama.h"

#include "serve/api.h"

#include <fmt/format.h>
#include <chrono>
#include <ctime>

namespace vkllm::serve {

namespace {

// Ollama's options as the OpenAI body's sampling fields. Options Ollama knows but that do not
// apply here (num_ctx, num_gpu, num_thread, ...) are ignored, as Ollama ignores unknown ones.
void copy_options(const json& body, json& out) {
  const json* o = field(body, "options");
  if (!o) return;
  if (!o->is_object()) throw bad_request("'options' must be an object");
  for (const char* key : {"temperature", "top_p", "top_k", "min_p", "seed", "stop", "repeat_penalty", "repeat_last_n",
                          "presence_penalty", "frequency_penalty"})
    if (const json* v = field(*o, key)) out[key] = *v;
  if (const json* n = field(*o, "num_predict")) {
    if (!n->is_number_integer()) throw bad_request("'options.num_predict' must be an integer");
    // -1: until the model stops, -2: until the context is full; both end at the context here.
    if (n->get<int64_t>() < -2) throw bad_request("'options.num_predict' must be -2, -1 or a number of tokens");
    if (n->get<int64_t>() >= 0) out["max_tokens"] = *n;
  }
}

// `format`: "json" (any JSON object) or a JSON schema.
void copy_format(const json& body, json& out) {
  const json* f = field(body, "format");
  if (!f || (f->is_string() && f->get<std::string>().empty())) return;
  if (f->is_string() && f->get<std::string>() == "json")
    out["response_format"] = {{"type", "json_object"}};
  else if (f->is_object())
    out["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", "format"}, {"schema", *f}}}};
  else
    throw bad_request("'format' must be \"json\" or a JSON schema object");
}

// `think`: false turns a thinking model's reasoning off (its template's enable_thinking);
// "low"/"medium"/"high" set gpt-oss's reasoning effort.
void copy_think(const json& body, json& out) {
  const json* t = field(body, "think");
  if (!t) return;
  if (t->is_boolean()) {
    if (!t->get<bool>()) out["chat_template_kwargs"] = {{"enable_thinking", false}};
  } else if (t->is_string() && (*t == "low" || *t == "medium" || *t == "high" || *t == "max")) {
    out["chat_template_kwargs"] = {{"reasoning_effort", *t == "max" ? "high" : *t}};  // harmony's highest is high
  } else {
    throw bad_request("'think' must be true, false, \"low\", \"medium\", \"high\" or \"max\"");
  }
}

void copy_common(const json& body, json& out) {
  copy_options(body, out);
  copy_format(body, out);
  const json* s = field(body, "stream");
  if (s && !s->is_boolean()) throw bad_request("'stream' must be true or false");
  out["stream"] = s ? s->get<bool>() : true;
}

// Ollama's `images` (base64 strings) as OpenAI image_url parts with data: URLs; `where` names the
// field in errors.
json image_parts(const json& images, const std::string& where) {
  if (!images.is_array()) throw bad_request(fmt::format("'{}' must be an array of base64 images", where));
  json parts = json::array();
  for (const json& im : images) {
    if (!im.is_string() || im.get_ref<const std::string&>().empty())
      throw bad_request(fmt::format("'{}' must be an array of base64 images", where));
    parts.push_back({{"type", "image_url"}, {"image_url", {{"url", "data:;base64," + im.get<std::string>()}}}});
  }
  return parts;
}

// A message's content with its images before the text (where Ollama's prompt puts them).
json with_images(const json& content, const json* images, const std::string& where) {
  if (!images) return content;
  json parts = image_parts(*images, where);
  if (parts.empty()) return content;
  if (!content.is_string()) throw bad_request(fmt::format("{}: the content beside images must be a string", where));
  parts.push_back({{"type", "text"}, {"text", content}});
  return parts;
}

// One message: images as image_url parts before its text, tool calls' arguments as JSON text,
// thinking kept as the reasoning a template may show.
json chat_message(const json& m, size_t i) {
  if (!m.is_object()) throw bad_request(fmt::format("messages[{}] must be an object", i));
  json out = json::object();
  for (const char* key : {"role", "content", "tool_call_id", "name"})
    if (const json* v = field(m, key)) out[key] = *v;
  if (!out.contains("content")) out["content"] = "";
  out["content"] = with_images(out["content"], field(m, "images"), fmt::format("messages[{}].images", i));
  if (const json* t = field(m, "thinking")) out["reasoning_content"] = *t;
  if (const json* name = field(m, "tool_name")) out["name"] = *name;
  if (const json* calls = field(m, "tool_calls")) {
    if (!calls->is_array()) throw bad_request(fmt::format("messages[{}].tool_calls must be an array", i));
    json converted = json::array();
    for (size_t k = 0; k < calls->size(); ++k) {
      const json& c = (*calls)[k];
      const json* f = c.is_object() ? field(c, "function") : nullptr;
      if (!f || !f->is_object() || !field(*f, "name"))
        throw bad_request(fmt::format("messages[{}].tool_calls[{}] must have a function with a name", i, k));
      const json* args = field(*f, "arguments");
      converted.push_back({{"id", c.value("id", fmt::format("call_{}", k))},
                           {"type", "function"},
                           {"function",
                            {{"name", (*f)["name"]},
                             {"arguments", args ? (args->is_string() ? *args : json(dump(*args))) : json("{}")}}}});
    }
    out["tool_calls"] = converted;
  }
  return out;
}

// Ollama's tool call from the accumulated name and arguments text (an object when it parses).
json ollama_call(const std::string& name, const std::string& arguments) {
  json args = json::parse(arguments, nullptr, false);
  if (args.is_discarded()) args = arguments;
  return {{"function", {{"name", name}, {"arguments", args}}}};
}

}  // namespace

std::string ollama_name(const std::string& model_id) {
  return model_id.find(':') == std::string::npos ? model_id + ":latest" : model_id;
}

void check_ollama_model(const json& body, const std::string& model_id) {
  const json* m = field(body, "model");
  if (!m) m = field(body, "name");  // older clients
  if (!m) throw bad_request("'model' is required");
  if (!m->is_string()) throw bad_request("'model' must be a string");
  const std::string& name = m->get_ref<const std::string&>();
  if (name == model_id || name == ollama_name(model_id)) return;
  throw ApiError(
      404, "not_found_error",
      fmt::format("model '{}' not found: this vkllm server runs one model, '{}'", name, ollama_name(model_id)));
}

json ollama_error(const std::string& message) { return {{"error", message}}; }

bool is_ollama_path(std::string_view path) { return path.starts_with("/api/"); }

HttpReply ollama_error_reply(HttpReply reply) {
  json body = json::parse(reply.body, nullptr, false);
  const json* e = body.is_object() && body.contains("error") ? &body["error"] : nullptr;
  if (e && e->is_string()) return reply;  // already Ollama's shape
  reply.body = dump(ollama_error(e && e->is_object() ? e->value("message", "") : ""));
  return reply;
}

json ollama_chat_to_openai(const json& body) {
  const json* m = field(body, "messages");
  if (!m || !m->is_array()) throw bad_request("'messages' must be an array");
  json out = {{"messages", json::array()}};
  for (size_t i = 0; i < m->size(); ++i) out["messages"].push_back(chat_message((*m)[i], i));
  if (const json* tools = field(body, "tools")) out["tools"] = *tools;
  copy_common(body, out);
  copy_think(body, out);
  return out;
}

json ollama_generate_to_openai(const json& body, bool& chat) {
  const json* p = field(body, "prompt");
  if (p && !p->is_string()) throw bad_request("'prompt' must be a string");
  for (const char* unsupported : {"suffix", "template", "context"})
    if (const json* v = field(body, unsupported);
        v && !(v->is_string() && v->get<std::string>().empty()) && !(v->is_array() && v->empty()))
      throw bad_request(fmt::format("'{}' is not supported by vkllm's /api/generate", unsupported));
  const json* raw = field(body, "raw");
  if (raw && !raw->is_boolean()) throw bad_request("'raw' must be true or false");
  chat = !(raw && raw->get<bool>());
  json out = json::object();
  std::string prompt = p ? p->get<std::string>() : "";
  if (chat) {
    out["messages"] = json::array();
    if (const json* s = field(body, "system")) {
      if (!s->is_string()) throw bad_request("'system' must be a string");
      out["messages"].push_back({{"role", "system"}, {"content", *s}});
    }
    out["messages"].push_back({{"role", "user"}, {"content", with_images(prompt, field(body, "images"), "images")}});
    copy_think(body, out);
  } else {
    out["prompt"] = prompt;
    if (const json* images = field(body, "images")) {  // llama-server's field for a completion's images
      json urls = image_parts(*images, "images");
      if (!urls.empty()) out["multimodal_data"] = *images;
    }
  }
  copy_common(body, out);
  return out;
}

std::string ollama_time() { return utc_time(std::chrono::system_clock::now(), 9); }

json OllamaReply::message(const std::string& content, const std::string& thinking, const json& calls) const {
  json m = {{"role", "assistant"}, {"content", content}};
  if (!thinking.empty()) m["thinking"] = thinking;
  if (!calls.empty()) m["tool_calls"] = calls;
  return m;
}

std::string OllamaReply::chunk(const json& c) {
  const json* choices = field(c, "choices");
  if (!choices || !choices->is_array() || choices->empty()) return "";  // the usage chunk
  const json& choice = (*choices)[0];
  if (const json* f = field(choice, "finish_reason")) finish_ = f->get<std::string>();
  std::string text, thinking;
  if (!from_chat_) {
    text = choice.value("text", "");
  } else if (const json* d = field(choice, "delta")) {
    text = d->value("content", json("")).is_string() ? d->value("content", "") : "";
    if (const json* r = field(*d, "reasoning_content")) thinking = r->get<std::string>();
    if (const json* calls = field(*d, "tool_calls"))
      for (const json& call : *calls) {
        size_t i = call.value("index", size_t(0));
        if (streamed_calls_.size() <= i) streamed_calls_.resize(i + 1);
        if (const json* f = field(call, "function")) {
          if (const json* n = field(*f, "name")) streamed_calls_[i].name = n->get<std::string>();
          if (const json* a = field(*f, "arguments")) streamed_calls_[i].arguments += a->get<std::string>();
        }
      }
  }
  if (text.empty() && thinking.empty()) return "";
  streamed_ += text;
  json line = {{"model", model_}, {"created_at", ollama_time()}};
  if (chat_) {
    line["message"] = message(text, thinking, json::array());
  } else {
    line["response"] = text;
    if (!thinking.empty()) line["thinking"] = thinking;
  }
  line["done"] = false;
  return dump(line) + "\n";
}

std::string OllamaReply::pending_tool_calls() const {
  if (!chat_ || streamed_calls_.empty()) return "";
  json calls = json::array();
  for (const StreamedCall& c : streamed_calls_) calls.push_back(ollama_call(c.name, c.arguments));
  json line = {{"model", model_}, {"created_at", ollama_time()}, {"message", message("", "", calls)}, {"done", false}};
  return dump(line) + "\n";
}

void OllamaReply::response(const json& r) {
  const json& choice = r.at("choices").at(0);
  finish_ = choice.value("finish_reason", "stop");
  if (!from_chat_) {
    content_ = choice.value("text", "");
    return;
  }
  const json& m = choice.at("message");
  content_ = m.value("content", json("")).is_string() ? m.value("content", "") : "";
  thinking_ = m.value("reasoning_content", "");
  if (const json* calls = field(m, "tool_calls"))
    for (const json& c : *calls) calls_.push_back(ollama_call(c["function"]["name"], c["function"]["arguments"]));
}

json OllamaReply::final(const Usage& u, int64_t total_ns, bool whole, const std::vector<int32_t>* context) const {
  json j = {{"model", model_}, {"created_at", ollama_time()}};
  if (chat_)
    j["message"] = whole ? message(content_, thinking_, calls_) : message("", "", json::array());
  else
    j["response"] = whole ? content_ : "";
  if (!chat_ && whole && !thinking_.empty()) j["thinking"] = thinking_;
  j["done"] = true;
  j["done_reason"] = finish_ == "length" ? "length" : "stop";
  if (context) j["context"] = *context;
  auto ns = [](double ms) { return int64_t(ms * 1e6); };
  j["total_duration"] = total_ns;
  j["load_duration"] = 0;  // the model is loaded when the server starts
  j["prompt_eval_count"] = u.prompt_tokens;
  j["prompt_eval_duration"] = ns(u.queue_ms + u.prompt_ms);
  j["eval_count"] = u.completion_tokens;
  j["eval_duration"] = ns(u.generation_ms);
  return j;
}

}  // namespace vkllm::serve
