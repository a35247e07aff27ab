// ChatTemplate: JSON messages to Values, Hugging Face's globals, and the ChatML fallback.
#include "text/chat_template.h"

#include <fmt/format.h>
#include <ctime>

#include "error.h"
#include "gguf/reader.h"
#include "text/vocab.h"

namespace vkllm {

// Tools, when a request has them, go into the system turn with the Hermes call syntax the
// tool-call parser reads for ChatML (text/chat/chat_format.h); an assistant turn's calls are
// written back in that syntax.
const char* const kChatMlTemplate =
    "{%- if tools -%}\n"
    "{{- '<|im_start|>system\\n' -}}\n"
    "{%- if messages[0].role == 'system' and messages[0].content is string -%}"
    "{{- messages[0].content + '\\n\\n' -}}{%- endif -%}\n"
    "{{- 'To call a tool, reply <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>. Tools:\\n' -}}\n"
    "{%- for tool in tools -%}{{- tool | tojson -}}{{- '\\n' -}}{%- endfor -%}\n"
    "{{- '<|im_end|>\\n' -}}\n"
    "{%- endif -%}\n"
    "{%- for message in messages -%}\n"
    "{%- if not (tools and loop.first and message.role == 'system' and message.content is string) -%}\n"
    "{{- '<|im_start|>' + message.role + '\\n' -}}\n"
    "{%- if message.content is string -%}{{- message.content -}}\n"
    "{%- elif message.content -%}{%- for part in message.content if part.type == 'text' -%}{{- part.text -}}{%- endfor "
    "-%}\n"
    "{%- endif -%}\n"
    "{%- for call in message.tool_calls or [] -%}\n"
    "{{- '<tool_call>\\n{\"name\": \"' + call.function.name + '\", \"arguments\": ' -}}\n"
    "{{- (call.function.arguments if call.function.arguments is string else call.function.arguments | tojson) -}}\n"
    "{{- '}\\n</tool_call>' -}}\n"
    "{%- endfor -%}\n"
    "{{- '<|im_end|>\\n' -}}\n"
    "{%- endif -%}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}\n";

namespace {

using jinja::Value;

Value to_value(const nlohmann::ordered_json& j, int depth, const std::string& where) {
  if (depth > jinja::kMaxValueDepth)
    throw Error(where + ": nested deeper than " + std::to_string(jinja::kMaxValueDepth));
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return Value::none();
    case nlohmann::json::value_t::boolean:
      return Value(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Value(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      return u <= uint64_t(INT64_MAX) ? Value(int64_t(u)) : Value(double(u));
    }
    case nlohmann::json::value_t::number_float:
      return Value(j.get<double>());
    case nlohmann::json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      if (jinja::invalid_utf8(s) != std::string::npos) throw Error(where + ": a string is not valid UTF-8");
      return Value(s);
    }
    case nlohmann::json::value_t::array: {
      std::vector<Value> items;
      for (const auto& x : j) items.push_back(to_value(x, depth + 1, where));
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      std::vector<std::pair<std::string, Value>> items;
      for (const auto& [k, x] : j.items()) {
        if (jinja::invalid_utf8(k) != std::string::npos) throw Error(where + ": a key is not valid UTF-8");
        items.emplace_back(k, to_value(x, depth + 1, where));
      }
      return Value::dict(std::move(items));
    }
    default:
      throw Error(where + ": unsupported JSON value");
  }
}

void check_messages(const nlohmann::ordered_json& messages) {
  if (!messages.is_array()) throw Error("messages: not a JSON array of {role, content} objects");
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      throw Error(fmt::format("messages[{}]: not an object with a string \"role\"", i));
    if (m.contains("content")) {
      const auto& c = m["content"];
      if (!c.is_string() && !c.is_null() && !c.is_array())
        throw Error(fmt::format("messages[{}]: \"content\" is not a string, null or a list of parts", i));
    } else if (!m.contains("tool_calls")) {
      throw Error(fmt::format("messages[{}]: no \"content\"", i));
    }
  }
}

Value strftime_now(int64_t now) {
  return Value::function("strftime_now", [now](jinja::CallArgs& a) {
    a.expect("strftime_now", 1, {"format"});
    Value f = a.get(0, "format");
    if (!f.is_string()) jinja::fail("strftime_now: the format must be a string");
    std::time_t t = now ? std::time_t(now) : std::time(nullptr);
    std::tm tm{};
    if (now)
      gmtime_r(&t, &tm);
    else
      localtime_r(&t, &tm);
    char buf[512];
    size_t n = f.as_string().size() < 200 ? std::strftime(buf, sizeof buf, f.as_string().c_str(), &tm) : 0;
    if (n == 0 && !f.as_string().empty()) jinja::fail("strftime_now: the format gives no text or too much");
    return Value(std::string(buf, n));
  });
}

}  // namespace

ChatTemplate ChatTemplate::parse(std::string_view source) {
  ChatTemplate t;
  t.template_ = jinja::Template::parse(source);
  t.source_ = std::string(source);
  return t;
}

ChatTemplate ChatTemplate::from_gguf(const GgufFile& f) {
  std::optional<std::string> source = read_chat_template(f);
  ChatTemplate t = parse(source ? *source : kChatMlTemplate);
  t.fallback_ = !source;
  if (has_vocab(f)) {
    VocabConfig v = read_vocab(f);
    auto text = [&](int32_t id) { return id >= 0 && size_t(id) < v.tokens.size() ? v.tokens[size_t(id)] : ""; };
    t.bos_ = text(v.bos);
    t.eos_ = text(v.eos);
  }
  return t;
}

std::string ChatTemplate::render(const nlohmann::ordered_json& messages, const Options& o) const {
  check_messages(messages);
  if (!o.tools.is_null() && !o.tools.is_array()) throw Error("tools: not a JSON array");
  if (!o.extra.is_null() && !o.extra.is_object()) throw Error("extra template variables: not a JSON object");
  std::vector<std::pair<std::string, Value>> vars = {
      {"messages", to_value(messages, 0, "messages")},
      {"tools", o.tools.is_null() ? Value::none() : to_value(o.tools, 0, "tools")},
      {"documents", Value::none()},
      {"add_generation_prompt", Value(o.add_generation_prompt)},
      {"bos_token", Value(o.bos_token)},
      {"eos_token", Value(o.eos_token)},
      {"raise_exception",
       Value::function("raise_exception",
                       [](jinja::CallArgs& a) -> Value { jinja::fail(jinja::to_str(a.get(0, "message"))); })},
      {"strftime_now", strftime_now(o.now)},
  };
  if (o.extra.is_object())
    for (const auto& [k, v] : o.extra.items()) vars.emplace_back(k, to_value(v, 0, "extra template variables"));
  return template_.render(vars, o.limits);
}

}  // namespace vkllm
