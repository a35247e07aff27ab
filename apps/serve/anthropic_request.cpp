// A Messages API request checked and rewritten as an OpenAI chat body, which parse_completion then
// checks as any chat request. Field-level mistakes are named here in the Messages API's terms.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "serve/anthropic.h"

namespace vkllm::serve {

namespace {

std::string block_type(const json& block, const std::string& where) {
  if (!block.is_object() || !block.contains("type") || !block["type"].is_string())
    throw bad_request(fmt::format("{} must be an object with a 'type'", where));
  return block["type"].get<std::string>();
}

std::string text_of(const json& block, const std::string& where) {
  const json* t = field(block, "text");
  if (!t || !t->is_string()) throw bad_request(fmt::format("{}.text must be a string", where));
  return t->get<std::string>();
}

// Text blocks joined by newlines (the system prompt, a tool's result).
std::string joined_text(const json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw bad_request(fmt::format("{} must be a string or an array of text blocks", where));
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    std::string at = fmt::format("{}[{}]", where, i);
    if (std::string type = block_type(content[i], at); type != "text")
      throw bad_request(fmt::format("{}: only text blocks are supported here, not {}", at, type));
    if (!text.empty()) text += '\n';
    text += text_of(content[i], at);
  }
  return text;
}

[[noreturn]] void unsupported_block(const std::string& type, const std::string& where) {
  if (type == "document") throw bad_request(fmt::format("{}: document blocks are not supported", where));
  throw bad_request(fmt::format("{}: content blocks of type '{}' are not supported", where, type));
}

// An image block's source as a URL: base64 data as a data: URL, a url source as it is (the chat
// route fetches it only when the server allows image URLs).
std::string image_source(const json& block, const std::string& where) {
  const json* src = field(block, "source");
  std::string type = src && src->is_object() && field(*src, "type") && (*src)["type"].is_string()
                         ? (*src)["type"].get<std::string>()
                         : "";
  const json* value = type == "base64" ? field(*src, "data") : type == "url" ? field(*src, "url") : nullptr;
  if (!value || !value->is_string() || value->get_ref<const std::string&>().empty())
    throw bad_request(fmt::format(
        "{}.source must be {{\"type\": \"base64\", \"media_type\", \"data\"}} or {{\"type\": \"url\", \"url\"}}",
        where));
  if (type == "url") return value->get<std::string>();
  const json* media = field(*src, "media_type");
  return "data:" + (media && media->is_string() ? media->get<std::string>() : std::string()) + ";base64," +
         value->get<std::string>();
}

// One turn's content blocks as chat messages: an assistant's text, reasoning and tool calls in
// one message; a user's tool results as tool messages first (they answer the previous turn's
// calls, which is where the chat templates expect them), then its text.
void add_turn(const std::string& role, const json& content, const std::string& where, json& out) {
  if (content.is_string()) {
    out.push_back({{"role", role}, {"content", content}});
    return;
  }
  if (!content.is_array()) throw bad_request(fmt::format("{} must be a string or an array of content blocks", where));
  bool assistant = role == "assistant";
  std::string text, reasoning;
  json calls = json::array(), results = json::array();
  json parts = json::array();  // a user's text and images in order, when it has an image
  for (size_t i = 0; i < content.size(); ++i) {
    std::string at = fmt::format("{}[{}]", where, i);
    std::string type = block_type(content[i], at);
    const json& b = content[i];
    if (type == "text") {
      if (!text.empty()) text += '\n';
      text += text_of(b, at);
      parts.push_back({{"type", "text"}, {"text", text_of(b, at)}});
    } else if (!assistant && type == "image") {
      parts.push_back({{"type", "image_url"}, {"image_url", {{"url", image_source(b, at)}}}});
    } else if (assistant && type == "thinking") {
      if (const json* t = field(b, "thinking"); t && t->is_string()) reasoning += t->get<std::string>();
    } else if (assistant && type == "redacted_thinking") {
      // Encrypted by Anthropic's servers: nothing a local model can read.
    } else if (assistant && type == "tool_use") {
      const json *id = field(b, "id"), *name = field(b, "name"), *input = field(b, "input");
      if (!id || !id->is_string() || !name || !name->is_string())
        throw bad_request(fmt::format("{}: a tool_use block needs 'id' and 'name' strings", at));
      if (input && !input->is_object()) throw bad_request(fmt::format("{}.input must be an object", at));
      calls.push_back({{"id", *id},
                       {"type", "function"},
                       {"function", {{"name", *name}, {"arguments", input ? *input : json::object()}}}});
    } else if (!assistant && type == "tool_result") {
      const json* id = field(b, "tool_use_id");
      if (!id || !id->is_string()) throw bad_request(fmt::format("{}.tool_use_id must be a string", at));
      const json* c = field(b, "content");
      results.push_back(
          {{"role", "tool"}, {"tool_call_id", *id}, {"content", c ? joined_text(*c, at + ".content") : ""}});
    } else {
      unsupported_block(type, at);
    }
  }
  for (json& r : results) out.push_back(std::move(r));
  bool images = std::any_of(parts.begin(), parts.end(), [](const json& p) { return p["type"] == "image_url"; });
  if (!assistant && text.empty() && !images && !results.empty()) return;
  json m = {{"role", role}, {"content", images ? parts : json(text)}};
  if (!calls.empty()) m["tool_calls"] = std::move(calls);
  if (!reasoning.empty()) m["reasoning_content"] = std::move(reasoning);
  out.push_back(std::move(m));
}

// Claude Code opens its system prompt with "x-anthropic-billing-header: ...; cch=<5 hex>;", a stamp
// that changes with every request: left as is, no request could reuse a slot's cached prompt past
// it. It means nothing to a local model, so it is made constant (as llama-server does).
std::string without_billing_stamp(std::string system) {
  if (!system.starts_with("x-anthropic-billing-header:")) return system;
  size_t at = system.find("cch=");
  size_t end = at == std::string::npos ? at : system.find(';', at);
  if (end != std::string::npos) std::fill(system.begin() + at + 4, system.begin() + end, '0');
  return system;
}

json chat_messages(const json& body) {
  json out = json::array();
  if (const json* s = field(body, "system"))
    out.push_back({{"role", "system"}, {"content", without_billing_stamp(joined_text(*s, "system"))}});
  const json* m = field(body, "messages");
  if (!m) throw bad_request("'messages' is required");
  if (!m->is_array() || m->empty()) throw bad_request("'messages' must be a non-empty array");
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    std::string at = fmt::format("messages[{}]", i);
    const json* role = msg.is_object() ? field(msg, "role") : nullptr;
    if (!role || (*role != "user" && *role != "assistant"))
      throw bad_request(fmt::format("{}.role must be user or assistant (the system prompt is 'system')", at));
    const json* content = field(msg, "content");
    if (!content) throw bad_request(fmt::format("{}.content is required", at));
    add_turn(role->get<std::string>(), *content, at + ".content", out);
  }
  // A trailing assistant turn is the beginning of the reply (prefill), which the model continues;
  // Anthropic refuses one that ends in whitespace, and so does vkllm.
  const json& last = out.back();
  if (last["role"] == "assistant" && last["content"].is_string()) {
    const std::string& text = last["content"].get_ref<const std::string&>();
    if (!text.empty() && std::isspace(uint8_t(text.back())))
      throw bad_request("messages: final assistant content cannot end with trailing whitespace");
  }
  return out;
}

// Client tools ({name, description, input_schema}) as OpenAI functions; Anthropic's server tools
// (web search, code execution, ...) run on Anthropic's side and are refused by name.
json chat_tools(const json& tools) {
  if (!tools.is_array()) throw bad_request("'tools' must be an array");
  json out = json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& t = tools[i];
    std::string at = fmt::format("tools[{}]", i);
    if (!t.is_object()) throw bad_request(fmt::format("{} must be an object", at));
    if (const json* type = field(t, "type"); type && *type != "custom")
      throw bad_request(
          fmt::format("{}: server tools ({}) are not supported; give client tools with "
                      "'name' and 'input_schema'",
                      at, type->dump()));
    const json *name = field(t, "name"), *schema = field(t, "input_schema"), *desc = field(t, "description");
    if (!name || !name->is_string()) throw bad_request(fmt::format("{}.name must be a string", at));
    if (!schema || !schema->is_object()) throw bad_request(fmt::format("{}.input_schema must be an object", at));
    json function = {{"name", *name}};
    if (desc) function["description"] = *desc;
    function["parameters"] = *schema;
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// {"type": "auto" | "any" | "tool" (with "name") | "none", "disable_parallel_tool_use"}.
void chat_tool_choice(const json& choice, json& oai) {
  const char* expected =
      "'tool_choice' must be {\"type\": \"auto\" | \"any\" | \"none\"} or {\"type\": \"tool\", \"name\": ...}";
  if (!choice.is_object() || !choice.contains("type") || !choice["type"].is_string()) throw bad_request(expected);
  std::string type = choice["type"].get<std::string>();
  if (type == "auto" || type == "none") {
    oai["tool_choice"] = type;
  } else if (type == "any") {
    oai["tool_choice"] = "required";
  } else if (type == "tool" && field(choice, "name") && choice["name"].is_string()) {
    oai["tool_choice"] = {{"type", "function"}, {"function", {{"name", choice["name"]}}}};
  } else {
    throw bad_request(expected);
  }
  // One call per reply stays the default (as on the chat route); an explicit false allows several.
  if (const json* d = field(choice, "disable_parallel_tool_use")) {
    if (!d->is_boolean()) throw bad_request("'tool_choice.disable_parallel_tool_use' must be true or false");
    oai["parallel_tool_calls"] = !d->get<bool>();
  }
}

// thinking {"type": "enabled" (budget_tokens), "adaptive", "disabled"}: the templates that can
// turn reasoning on and off read enable_thinking; absent, the template's default holds.
void chat_thinking(const json& thinking, json& oai) {
  if (!thinking.is_object() || !thinking.contains("type") || !thinking["type"].is_string())
    throw bad_request("'thinking' must be {\"type\": \"enabled\" | \"adaptive\" | \"disabled\"}");
  std::string type = thinking["type"].get<std::string>();
  if (type != "enabled" && type != "adaptive" && type != "disabled")
    throw bad_request("'thinking.type' must be enabled, adaptive or disabled");
  if (!oai["chat_template_kwargs"].is_object()) oai["chat_template_kwargs"] = json::object();
  oai["chat_template_kwargs"]["enable_thinking"] = type != "disabled";
}

}  // namespace

bool is_messages_path(std::string_view path) { return path == "/v1/messages" || path.starts_with("/v1/messages/"); }

json anthropic_to_openai(const json& body, bool count_only) {
  json oai = {{"messages", chat_messages(body)}};
  if (const json* m = field(body, "model")) oai["model"] = *m;
  if (const json* t = field(body, "tools")) oai["tools"] = chat_tools(*t);
  if (const json* c = field(body, "tool_choice")) chat_tool_choice(*c, oai);
  if (const json* k = field(body, "chat_template_kwargs")) oai["chat_template_kwargs"] = *k;  // as llama-server
  if (const json* t = field(body, "thinking")) chat_thinking(*t, oai);
  if (count_only) return oai;
  const json* max = field(body, "max_tokens");
  if (!max) throw bad_request("'max_tokens' is required");
  if (!max->is_number_integer() || max->get<int64_t>() < 1) throw bad_request("'max_tokens' must be an integer >= 1");
  oai["max_tokens"] = *max;
  for (const char* key : {"temperature", "top_p", "top_k", "stream"})
    if (const json* v = field(body, key)) oai[key] = *v;
  if (const json* s = field(body, "stop_sequences")) {
    if (!s->is_array()) throw bad_request("'stop_sequences' must be an array of strings");
    oai["stop"] = *s;
  }
  if (oai.contains("stream") && oai["stream"] == true) oai["stream_options"] = {{"include_usage", true}};
  return oai;
}

}  // namespace vkllm::serve
