// Building tool-call and JSON-reply grammars per family.
#include "text/chat/reply_grammar.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "error.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema_grammar.h"
#include "text/grammar/utf8_ranges.h"
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

// A tag as grammar: the special token it starts with (Gemma 4's "<|channel>" of
// "<|channel>thought") as a whole token, the rest as text.
std::string tag(const Tokenizer& vocab, std::string_view text) {
  for (size_t n = text.size(); n > 0; --n)
    if (int32_t id = vocab.find(text.substr(0, n)); id >= 0 && vocab.is_special(id))
      return n == text.size() ? marker(vocab, text)
                              : marker(vocab, text.substr(0, n)) + " " + gbnf_literal(text.substr(n));
  return gbnf_literal(text);
}

// Text that contains none of `patterns`: a rule per state of their Aho-Corasick automaton over
// characters, so the grammar knows when the next character would complete one.
std::string text_without(GrammarBuilder& b, const std::vector<std::string_view>& patterns) {
  struct Node {
    std::map<uint32_t, size_t> next;
    size_t fail = 0;
    bool done = false;  // a pattern ends here (or at a suffix of it)
  };
  std::vector<Node> trie(1);
  std::set<uint32_t> chars;
  for (std::string_view p : patterns) {
    std::optional<std::vector<uint32_t>> cps = grammar::utf8_decode(p);
    if (!cps || cps->empty()) continue;
    size_t at = 0;
    for (uint32_t c : *cps) {
      chars.insert(c);
      auto [it, fresh] = trie[at].next.emplace(c, trie.size());
      if (fresh) trie.emplace_back();
      at = it->second;
    }
    trie[at].done = true;
  }
  auto step = [&](size_t k, uint32_t c) {
    while (k && !trie[k].next.count(c)) k = trie[k].fail;
    auto it = trie[k].next.find(c);
    return it == trie[k].next.end() ? size_t(0) : it->second;
  };
  std::vector<size_t> order = {0};  // breadth first: fail links point to shallower nodes
  for (size_t i = 0; i < order.size(); ++i)
    for (const auto& [c, to] : trie[order[i]].next) {
      trie[to].fail = order[i] ? step(trie[order[i]].fail, c) : 0;
      trie[to].done = trie[to].done || trie[trie[to].fail].done;
      order.push_back(to);
    }
  std::string other = "[^";
  for (uint32_t c : chars) other += grammar::class_char(c);
  other += "]";
  std::map<size_t, std::string> names;
  for (size_t k : order)
    if (!trie[k].done) names[k] = b.reserve("text-without");
  for (const auto& [k, name] : names) {
    std::string body = fmt::format("\"\" | {} {}", other, names[0]);
    for (uint32_t c : chars)
      if (size_t to = step(k, c); !trie[to].done) body += fmt::format(" | [{}] {}", grammar::class_char(c), names[to]);
    b.define(name, body);
  }
  return names[0];
}

std::string text_without(GrammarBuilder& b, std::string_view pattern) { return text_without(b, std::vector{pattern}); }

// Reasoning before the constrained part: gpt-oss's analysis message, or the family's tags around
// text that holds no closing tag. Where the family calls from inside its reasoning (Qwen3.5:
// call_markers, ChatFormat::call_in_reasoning) the text holds no call marker either, and the
// closing tag may be left out: the reader ends the reasoning at the marker as at the tag. Other
// families must close it, or their reader would keep the call as reasoning.
std::string reasoning_prefix(GrammarBuilder& b, const ChatFormat& f, const Tokenizer& vocab, ReasoningPrefix p,
                             const std::vector<std::string_view>& call_markers) {
  if (p == ReasoningPrefix::None) return "";
  if (f.harmony())
    return fmt::format("( {} \"analysis\" {} .* {} {} \"assistant\" )? ", marker(vocab, "<|channel|>"),
                       marker(vocab, "<|message|>"), marker(vocab, "<|end|>"), marker(vocab, "<|start|>"));
  if (f.reasoning_open().empty()) return "";
  std::vector<std::string_view> stops = {f.reasoning_close()};
  stops.insert(stops.end(), call_markers.begin(), call_markers.end());
  std::string close = fmt::format("{} [ \\t\\r\\n]{{0,4}}", tag(vocab, f.reasoning_close()));
  std::string think = fmt::format("{} {}", text_without(b, stops), call_markers.empty() ? close : "( " + close + " )?");
  if (p == ReasoningPrefix::Open) return think + " ";
  return fmt::format("( {} {} )? ", tag(vocab, f.reasoning_open()), think);
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
// "\n</parameter>". Empty when the schema allows more than strings (the value is then JSON).
std::string xml_text(GrammarBuilder& b, const json& root, const json& s, const std::string& rule) {
  std::optional<GrammarBuilder::StringForm> f = b.string_form(root, s);
  if (!f) return "";
  if (!f->literals.empty()) {
    std::vector<std::string> alts;
    for (const std::string& v : f->literals) alts.push_back(gbnf_literal(v));
    return b.rule(rule, fmt::format("{}", fmt::join(alts, " | ")));
  }
  if (f->format == "date" || f->format == "time" || f->format == "uuid") return b.primitive(f->format);
  if (f->format == "date-time") return fmt::format("{} \"T\" {}", b.primitive("date"), b.primitive("time"));
  if (f->min_length == 0 && f->max_length < 0) return text_without(b, "\n</parameter>");
  return b.rule(rule, f->max_length < 0 ? fmt::format("[^<]{{{},}}", f->min_length)
                                        : fmt::format("[^<]{{{},{}}}", f->min_length, f->max_length));
}

// <function=NAME> with one <parameter=KEY> block per property (required ones first, the others
// optional); string values are their text (xml_text), others JSON. The parameters must be one
// object schema (what the blocks can write).
std::string xml_parameters(GrammarBuilder& b, const json& params, const std::string& rule) {
  std::optional<GrammarBuilder::ObjectForm> form = b.object_form(params);
  if (!form) throw Error("the parameters must be one object schema (anyOf/oneOf at the top cannot be written as XML)");
  std::string req, opt;
  for (size_t i = 0; i < form->properties.size(); ++i) {
    const auto& [key, schema] = form->properties[i];
    std::string part = fmt::format("{}-{}", rule, i), value = xml_text(b, params, schema, part);
    if (value.empty()) value = b.schema_in(params, schema, part);
    std::string block = fmt::format("{} {} \"\\n</parameter>\\n\"", gbnf_literal("<parameter=" + key + ">\n"), value);
    if (form->required[i])
      req += block + " ";
    else
      opt += "( " + block + " )? ";
  }
  return req + opt;
}

// LFM2's keyword arguments, key=VALUE with VALUE as JSON (Python reads JSON's strings, numbers,
// lists and objects as its own literals, and LFM2's reader JSON's true/false/null): the required
// ones first, in order, then each optional one or not, with ", " between those written.
std::string python_arguments(GrammarBuilder& b, const json& params, const std::string& rule) {
  std::optional<GrammarBuilder::ObjectForm> form = b.object_form(params);
  if (!form) throw Error("the parameters must be one object schema (anyOf/oneOf at the top cannot be keywords)");
  std::vector<std::string> req, opt;
  for (size_t i = 0; i < form->properties.size(); ++i) {
    const auto& [key, schema] = form->properties[i];
    if (key.empty() || key.find_first_of("=,()[]{}'\" \t\r\n") != std::string::npos)
      throw Error(fmt::format("'{}' cannot be a keyword argument of a Python call (LFM2's syntax)", key));
    std::string arg =
        fmt::format("{} {}", gbnf_literal(key + "="), b.schema_in(params, schema, fmt::format("{}-{}", rule, i)));
    (form->required[i] ? req : opt).push_back(arg);
  }
  // after(k): the optional arguments from k on, each after a ", " (something was written before)
  auto after = [&](size_t k) {
    std::string out;
    for (size_t j = k; j < opt.size(); ++j) out += fmt::format(" ( \", \" {} )?", opt[j]);
    return out;
  };
  if (!req.empty()) return fmt::format("{}{}", fmt::join(req, " \", \" "), after(0));
  if (opt.empty()) return "\"\"";
  std::vector<std::string> firsts;  // none required: the first one written, then the others after it
  for (size_t k = 0; k < opt.size(); ++k) firsts.push_back(fmt::format("{}{}", opt[k], after(k + 1)));
  return b.rule(rule + "-args", fmt::format("( {} )?", fmt::join(firsts, " | ")));
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
    case ToolCallFormat::Lfm2:
      return fmt::format("{} {} \")\"", gbnf_literal(name + "("), python_arguments(b, params, rule));
    case ToolCallFormat::Gemma4:  // the builder writes Gemma's values (gemma_syntax)
      return fmt::format("{} {} {} {}", marker(v, "<|tool_call>"), gbnf_literal("call:" + name), args(),
                         marker(v, "<tool_call|>"));
    default:  // Granite, Nemotron v2, Generic: a JSON object in a list
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
    case ToolCallFormat::Gemma4:
      return many("\"\"");
    case ToolCallFormat::MistralNemo:
      return fmt::format("{} \"[\" {} \"]\"", marker(v, "[TOOL_CALLS]"), many("\", \""));
    case ToolCallFormat::DeepSeekR1:
    case ToolCallFormat::DeepSeekV31:
      return fmt::format("{} {} {}", marker(v, "<｜tool▁calls▁begin｜>"), many("\"\""),
                         marker(v, "<｜tool▁calls▁end｜>"));
    case ToolCallFormat::Granite:
      return fmt::format("{} \"[\" {} \"]\"", marker(v, "<|tool_call|>"), many("\", \""));
    case ToolCallFormat::NemotronV2:
      return fmt::format("{} \"[\" {} \"]\" {}", marker(v, "<TOOLCALL>"), many("\", \""), marker(v, "</TOOLCALL>"));
    case ToolCallFormat::Lfm2:
      return fmt::format("{} \"[\" {} \"]\" {}", marker(v, "<|tool_call_start|>"), many("\", \""),
                         marker(v, "<|tool_call_end|>"));
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
    case ToolCallFormat::Gemma4:
      return {"<|tool_call>"};
    case ToolCallFormat::NemotronV2:
      return {"<TOOLCALL>"};
    case ToolCallFormat::Lfm2:
      return {"<|tool_call_start|>"};
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
  if (f.tools == ToolCallFormat::Unknown)
    throw Error(
        fmt::format("this model's chat template ({}) writes tool calls in a syntax vkllm does not read", f.unknown));
  GrammarBuilder b;
  if (f.tools == ToolCallFormat::Gemma4) b.gemma_syntax(marker(vocab, "<|\"|>"));
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
    std::vector<std::string_view> ends;  // what may end the reasoning besides its closing tag
    if (!f.call_in_reasoning().empty()) ends.push_back(f.call_in_reasoning());
    body = reasoning_prefix(b, f, vocab, prefix, ends) + body;
  }
  out.gbnf = b.text(body);
  return out;
}

ReplyConstraint json_reply_constraint(const ChatFormat& f, const Tokenizer& vocab, const json& schema,
                                      ReasoningPrefix prefix) {
  GrammarBuilder b;
  std::string value = schema.is_null() ? b.schema(json{{"type", "object"}, {"additionalProperties", true}}, "reply")
                                       : b.schema(schema, "reply");
  std::string body = reasoning_prefix(b, f, vocab, prefix, {});
  if (f.harmony()) body += fmt::format("{} \"final\" {} ", marker(vocab, "<|channel|>"), marker(vocab, "<|message|>"));
  ReplyConstraint out;
  out.gbnf = b.text(body + value);
  return out;
}

}  // namespace vkllm
