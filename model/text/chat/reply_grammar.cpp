// Building tool-call and JSON-reply grammars per family.
#include "text/chat/reply_grammar.h"

#include <fmt/format.h>
#include <algorithm>
#include <set>

#include "error.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema_grammar.h"
#include "text/tokenizer.h"

namespace vkllm {

using json = nlohmann::ordered_json;
using grammar::gbnf_literal;
using grammar::GrammarBuilder;

namespace {

// A marker as grammar: the special token of that text when the vocabulary has one, else text.
std::string marker(const Tokenizer& vocab, std::string_view text) {
  int32_t id = vocab.find(text);
  return id >= 0 && vocab.is_special(id) ? fmt::format("<[{}]>", id) : gbnf_literal(text);
}

// Text that never contains `pattern` (ASCII): a rule per matched prefix length of the pattern
// (KMP), so the grammar knows when the next character would complete it.
std::string text_without(GrammarBuilder& b, std::string_view pattern) {
  size_t m = pattern.size();
  std::vector<size_t> fail(m, 0);
  for (size_t i = 1, k = 0; i < m; ++i) {
    while (k > 0 && pattern[i] != pattern[k]) k = fail[k - 1];
    if (pattern[i] == pattern[k]) ++k;
    fail[i] = k;
  }
  auto next = [&](size_t k, char c) {
    while (k > 0 && pattern[k] != c) k = fail[k - 1];
    return pattern[k] == c ? k + 1 : 0;
  };
  std::set<char> chars(pattern.begin(), pattern.end());
  std::string other = "[^";
  for (char c : chars) other += fmt::format("\\x{:02X}", uint8_t(c));
  other += "]";
  std::vector<std::string> names;
  for (size_t k = 0; k < m; ++k) names.push_back(b.reserve("text-without"));
  for (size_t k = 0; k < m; ++k) {
    std::string body = fmt::format("\"\" | {} {}", other, names[0]);
    for (char c : chars)
      if (size_t to = next(k, c); to < m) body += fmt::format(" | {} {}", gbnf_literal(std::string(1, c)), names[to]);
    b.define(names[k], body);
  }
  return names[0];
}

std::string reasoning_prefix(GrammarBuilder& b, const ChatFormat& f, const Tokenizer& vocab, ReasoningPrefix p) {
  if (p == ReasoningPrefix::None) return "";
  if (f.harmony())
    return fmt::format("( {} \"analysis\" {} .* {} {} \"assistant\" )? ", marker(vocab, "<|channel|>"),
                       marker(vocab, "<|message|>"), marker(vocab, "<|end|>"), marker(vocab, "<|start|>"));
  if (!f.think_tags) return "";
  std::string think = fmt::format("{} {} [ \\t\\r\\n]{{0,4}}", text_without(b, "</think>"), marker(vocab, "</think>"));
  if (p == ReasoningPrefix::Open) return think + " ";
  return fmt::format("( {} {} )? ", marker(vocab, "<think>"), think);
}

const json& function_of(const json& tool, size_t i) {
  if (!tool.is_object() || tool.value("type", json("function")) != "function" || !tool.contains("function") ||
      !tool["function"].is_object())
    throw Error(fmt::format("tools[{}] must be {{\"type\": \"function\", \"function\": {{...}}}}", i));
  const json& f = tool["function"];
  if (!f.contains("name") || !f["name"].is_string() || f["name"].get<std::string>().empty())
    throw Error(fmt::format("tools[{}].function.name must be a non-empty string", i));
  return f;
}

json parameters_of(const json& f) {
  if (!f.contains("parameters") || f["parameters"].is_null()) return json{{"type", "object"}};
  return f["parameters"];
}

// A string parameter's value as the XML formats write it: the text itself, unquoted. Enums and
// consts of strings are their literals, formats their pattern, a length-bounded string that many
// characters (none a '<', so it cannot end the block early), any other string text up to
// "\n</parameter>". Empty when the schema is not a string schema (the value is then JSON).
std::string xml_text(GrammarBuilder& b, const json& s, const std::string& rule) {
  if (!s.is_object()) return "";
  auto all_strings = [](const json& v) {
    return v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); });
  };
  if (s.contains("const")) return s["const"].is_string() ? gbnf_literal(s["const"].get<std::string>()) : "";
  if (s.contains("enum")) {
    if (!all_strings(s["enum"])) return "";
    std::vector<std::string> alts;
    for (const json& v : s["enum"]) alts.push_back(gbnf_literal(v.get<std::string>()));
    return b.rule(rule, fmt::format("{}", fmt::join(alts, " | ")));
  }
  if (s.value("type", json()) != "string") return "";
  std::string format = s.value("format", "");
  if (format == "date" || format == "time" || format == "uuid") return b.primitive(format);
  if (format == "date-time") return fmt::format("{} \"T\" {}", b.primitive("date"), b.primitive("time"));
  auto bound = [&](const char* key) -> int64_t {
    const json& v = s.contains(key) ? s[key] : json();
    if (v.is_null()) return -1;
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > grammar::kMaxRepetition)
      throw Error(fmt::format("'{}' must be an integer from 0 to {}", key, grammar::kMaxRepetition));
    return v.get<int64_t>();
  };
  int64_t lo = std::max<int64_t>(bound("minLength"), 0), hi = bound("maxLength");
  if (hi >= 0 && hi < lo) throw Error("'maxLength' is below 'minLength'");
  if (lo == 0 && hi < 0) return text_without(b, "\n</parameter>");
  return b.rule(rule, hi < 0 ? fmt::format("[^<]{{{},}}", lo) : fmt::format("[^<]{{{},{}}}", lo, hi));
}

// <function=NAME> with one <parameter=KEY> block per property (required ones first, the others
// optional); string values are their text (xml_text), others JSON.
std::string xml_parameters(GrammarBuilder& b, const json& params, const std::string& rule) {
  if (!params.is_object() || !params.contains("properties") || !params["properties"].is_object()) return "";
  std::set<std::string> required;
  if (params.contains("required") && params["required"].is_array())
    for (const json& r : params["required"])
      if (r.is_string()) required.insert(r.get<std::string>());
  std::string req, opt;
  size_t i = 0;
  for (const auto& [key, schema] : params["properties"].items()) {
    std::string part = fmt::format("{}-{}", rule, i++), value = xml_text(b, schema, part);
    if (value.empty()) value = b.schema(schema, part);
    std::string block = fmt::format("{} {} \"\\n</parameter>\\n\"", gbnf_literal("<parameter=" + key + ">\n"), value);
    if (required.count(key))
      req += block + " ";
    else
      opt += "( " + block + " )? ";
  }
  return req + opt;
}

// One call of function f in the family's syntax; args: the rule of its arguments.
std::string one_call(GrammarBuilder& b, const ChatFormat& fmt_, const Tokenizer& v, const json& f,
                     const std::string& rule) {
  std::string name = f["name"].get<std::string>();
  std::string quoted = json(name).dump();
  json params = parameters_of(f);
  auto args = [&] { return b.schema(params, rule); };
  switch (fmt_.tools) {
    case ToolCallFormat::Hermes:
      return fmt::format("{} {} {} {} {}", marker(v, "<tool_call>"),
                         gbnf_literal("\n{\"name\": " + quoted + ", \"arguments\": "), args(), gbnf_literal("}\n"),
                         marker(v, "</tool_call>"));
    case ToolCallFormat::QwenXml:
      return fmt::format("{} {} {} {} {}", marker(v, "<tool_call>"), gbnf_literal("\n<function=" + name + ">\n"),
                         xml_parameters(b, params, rule), gbnf_literal("</function>\n"), marker(v, "</tool_call>"));
    case ToolCallFormat::Llama3:
      return fmt::format("{} {} \"}}\"", gbnf_literal("{\"name\": " + quoted + ", \"parameters\": "), args());
    case ToolCallFormat::MistralNemo:
      return fmt::format("{} {} {}", gbnf_literal("{\"name\": " + quoted + ", \"arguments\": "), args(),
                         "\", \\\"id\\\": \\\"\" [a-zA-Z0-9]{9} \"\\\"}\"");
    case ToolCallFormat::Mistral: {
      std::string id = v.find("[CALL_ID]") >= 0 ? fmt::format("( {} [a-zA-Z0-9]{{9}} )? ", marker(v, "[CALL_ID]")) : "";
      return fmt::format("{} {} {}{} {}", marker(v, "[TOOL_CALLS]"), gbnf_literal(name), id, marker(v, "[ARGS]"),
                         args());
    }
    case ToolCallFormat::DeepSeekR1:
      return fmt::format("{} \"function\" {} {} {} {} {}", marker(v, "<｜tool▁call▁begin｜>"),
                         marker(v, "<｜tool▁sep｜>"), gbnf_literal(name + "\n```json\n"), args(), gbnf_literal("\n```"),
                         marker(v, "<｜tool▁call▁end｜>"));
    case ToolCallFormat::DeepSeekV31:
      return fmt::format("{} {} {} {} {}", marker(v, "<｜tool▁call▁begin｜>"), gbnf_literal(name),
                         marker(v, "<｜tool▁sep｜>"), args(), marker(v, "<｜tool▁call▁end｜>"));
    case ToolCallFormat::GptOss:
      return fmt::format("{} {} {} \"json\" {} {}", marker(v, "<|channel|>"),
                         gbnf_literal("commentary to=functions." + name + " "), marker(v, "<|constrain|>"),
                         marker(v, "<|message|>"), args());
    default:  // Granite, Generic: a JSON object in a list
      return fmt::format("{} {} \"}}\"", gbnf_literal("{\"name\": " + quoted + ", \"arguments\": "), args());
  }
}

// The calls part: one call or (parallel) several, with the family's framing around them.
std::string calls_body(const ChatFormat& f, const Tokenizer& v, const std::string& call, bool parallel) {
  auto many = [&](const std::string& sep) { return parallel ? fmt::format("{} ( {} {} )*", call, sep, call) : call; };
  switch (f.tools) {
    case ToolCallFormat::Hermes:
    case ToolCallFormat::QwenXml:
      return many("\"\\n\"");
    case ToolCallFormat::Llama3:
    case ToolCallFormat::Mistral:
    case ToolCallFormat::GptOss:
      return f.tools == ToolCallFormat::Mistral ? many("\"\"") : call;  // Llama 3 and harmony: one call a turn
    case ToolCallFormat::MistralNemo:
      return fmt::format("{} \"[\" {} \"]\"", marker(v, "[TOOL_CALLS]"), many("\", \""));
    case ToolCallFormat::DeepSeekR1:
    case ToolCallFormat::DeepSeekV31:
      return fmt::format("{} {} {}", marker(v, "<｜tool▁calls▁begin｜>"), many("\"\""),
                         marker(v, "<｜tool▁calls▁end｜>"));
    case ToolCallFormat::Granite:
      return fmt::format("{} \"[\" {} \"]\"", marker(v, "<|tool_call|>"), many("\", \""));
    default:
      return fmt::format("\"{{\\\"tool_calls\\\": [\" {} \"]}}\"", many("\", \""));
  }
}

// Where a lazily applied call grammar starts, per family.
std::vector<std::string> triggers(const ChatFormat& f, bool& at_start) {
  at_start = false;
  switch (f.tools) {
    case ToolCallFormat::Hermes:
    case ToolCallFormat::QwenXml:
      return {"<tool_call>"};
    case ToolCallFormat::MistralNemo:
    case ToolCallFormat::Mistral:
      return {"[TOOL_CALLS]"};
    case ToolCallFormat::DeepSeekR1:
    case ToolCallFormat::DeepSeekV31:
      return {"<｜tool▁calls▁begin｜>"};
    case ToolCallFormat::Granite:
      return {"<|tool_call|>"};
    case ToolCallFormat::GptOss:
      return {"<|channel|>commentary to=functions."};
    default:
      at_start = true;
      return {"{"};
  }
}

}  // namespace

ReplyConstraint tool_call_constraint(const ChatFormat& f, const Tokenizer& vocab, const json& tools,
                                     const ToolChoice& choice, bool parallel, ReasoningPrefix prefix) {
  ReplyConstraint out;
  if (choice.kind == ToolChoice::None || !tools.is_array() || tools.empty()) return out;
  GrammarBuilder b;
  std::vector<std::string> calls;
  std::set<std::string> names;
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& fn = function_of(tools[i], i);
    std::string name = fn["name"].get<std::string>();
    names.insert(name);
    if (choice.kind == ToolChoice::Named && name != choice.name) continue;
    try {
      calls.push_back(one_call(b, f, vocab, fn, fmt::format("tool-{}", i)));
    } catch (const Error& e) {
      throw Error(fmt::format("tools[{}] ({}): {}", i, name, e.what()));
    }
  }
  if (choice.kind == ToolChoice::Named && calls.empty())
    throw Error(fmt::format("tool_choice names '{}', which is not one of the tools", choice.name));
  std::string call = calls.size() == 1 ? calls[0] : "( " + fmt::format("{}", fmt::join(calls, " | ")) + " )";
  std::string body = calls_body(f, vocab, call, parallel);
  if (choice.kind == ToolChoice::Auto) {
    out.triggers = triggers(f, out.trigger_at_start);  // each trigger is how the call grammar starts
  } else {
    body = reasoning_prefix(b, f, vocab, prefix) + body;
  }
  out.gbnf = b.text(body);
  return out;
}

ReplyConstraint json_reply_constraint(const ChatFormat& f, const Tokenizer& vocab, const json& schema,
                                      ReasoningPrefix prefix) {
  GrammarBuilder b;
  std::string value = schema.is_null() ? b.schema(json{{"type", "object"}, {"additionalProperties", true}}, "reply")
                                       : b.schema(schema, "reply");
  std::string body = reasoning_prefix(b, f, vocab, prefix);
  if (f.harmony()) body += fmt::format("{} \"final\" {} ", marker(vocab, "<|channel|>"), marker(vocab, "<|message|>"));
  ReplyConstraint out;
  out.gbnf = b.text(body + value);
  return out;
}

}  // namespace vkllm
