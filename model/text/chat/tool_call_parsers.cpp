// One reader per tool-call syntax. Each reads the calls that start at a marker and says how far
// they went: Done (the end of the calls), Partial (the text ends inside them) or Invalid (not
// that syntax after all: then, for a whole reply, everything is content).
#include "text/chat/tool_call_parsers.h"

#include <algorithm>
#include <optional>

#include "text/chat/call_scan.h"
#include "text/chat/json_scan.h"

namespace vkllm {

namespace {

using json = nlohmann::ordered_json;
using namespace call_scan;

// A call written as a JSON object: {"name": ..., "arguments" (or "parameters"): {...}, "id": ...}.
struct CallObject {
  JsonScan state = JsonScan::Invalid;
  ToolCall call;
  bool named = false;
  size_t end = 0;
};

// A complete JSON string's value (nothing if its escapes are bad).
std::optional<std::string> string_value(std::string_view raw) {
  if (!raw.starts_with('"')) return std::nullopt;
  try {
    return json::parse(raw).get<std::string>();
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

std::string json_quote(const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

// The arguments value's text: an object as written (cut at its last non-space character while
// partial), or the contents of a string that holds one (known only once the string is complete).
std::string arguments_text(std::string_view t, const JsonMember& m) {
  std::string_view raw = t.substr(m.value_begin, m.value_end - m.value_begin);
  if (raw.empty() || raw[0] != '"') return std::string(rtrim(raw));
  if (!m.complete) return "";
  return string_value(raw).value_or("");
}

CallObject read_call_object(std::string_view t, size_t pos) {
  CallObject c;
  JsonObjectScan obj = scan_json_object(t, pos);
  c.state = obj.state;
  c.end = obj.end;
  if (obj.state == JsonScan::Invalid) return c;
  for (const JsonMember& m : obj.members) {
    std::string_view raw = t.substr(m.value_begin, m.value_end - m.value_begin);
    if (m.key == "name" && m.complete) {
      c.call.name = string_value(raw).value_or("");
      c.named = !c.call.name.empty();
    } else if (m.key == "arguments" || m.key == "parameters") {
      c.call.arguments = arguments_text(t, m);
    } else if (m.key == "id" && m.complete) {
      c.call.id = string_value(raw).value_or("");
    }
  }
  if (c.state == JsonScan::Complete && !c.named) c.state = JsonScan::Invalid;
  return c;
}

// Reads one call object at t[i] into calls; i moves past it when complete.
Read call_object_at(std::string_view t, size_t& i, std::vector<ToolCall>& calls) {
  i = skip_space(t, i);
  if (i >= t.size()) return Read::Partial;
  if (t[i] != '{') return Read::Invalid;
  CallObject c = read_call_object(t, i);
  if (c.state == JsonScan::Invalid) return Read::Invalid;
  if (c.named) calls.push_back(std::move(c.call));
  if (c.state == JsonScan::Partial) return Read::Partial;
  i = c.end;
  return Read::Done;
}

Read read_hermes(std::string_view t, size_t& i, std::vector<ToolCall>& calls) {
  for (;;) {
    i = skip_space(t, i);
    if (Match m = expect(t, i, "<tool_call>"); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Invalid;
    if (Read r = call_object_at(t, i, calls); r != Read::Done) return r;
    i = skip_space(t, i);
    if (Match m = expect(t, i, "</tool_call>"); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Invalid;
    if (Match m = next_call(t, i, {"<tool_call>"}); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Done;
  }
}

// An XML parameter's value as JSON: a string when the function's schema says so (or the text is
// not JSON), else the JSON it is.
std::string xml_value(std::string_view raw, const json* schema) {
  bool text = false;
  if (schema && schema->is_object()) {
    const json& type = schema->contains("type") ? (*schema)["type"] : json();
    const json& values = schema->contains("enum") ? (*schema)["enum"] : json();
    text = type == "string" || (type.is_array() && type.size() == 1 && type[0] == "string") ||
           (schema->contains("const") && (*schema)["const"].is_string()) ||
           (values.is_array() && !values.empty() &&
            std::all_of(values.begin(), values.end(), [](const json& v) { return v.is_string(); }));
  }
  if (!text && json::accept(raw)) return std::string(trim(raw));
  return json_quote(std::string(raw));
}

const json* parameter_schema(const json* tools, const std::string& function, const std::string& key) {
  if (!tools || !tools->is_array()) return nullptr;
  for (const json& t : *tools) {
    const json* f = t.is_object() && t.contains("function") ? &t["function"] : nullptr;
    if (!f || !f->is_object() || f->value("name", json()) != function) continue;
    if (!f->contains("parameters") || !(*f)["parameters"].is_object()) return nullptr;
    const json& p = (*f)["parameters"];
    if (!p.contains("properties") || !p["properties"].is_object() || !p["properties"].contains(key)) return nullptr;
    return &p["properties"][key];
  }
  return nullptr;
}

// <tool_call>?<function=NAME><parameter=KEY>\nVALUE\n</parameter>...</function></tool_call>?
Read read_qwen_xml(std::string_view t, size_t& i, std::vector<ToolCall>& calls, const json* tools) {
  for (;;) {
    i = skip_space(t, i);
    if (expect(t, i, "<tool_call>") == Match::Yes) i = skip_space(t, i);
    if (Match m = expect(t, i, "<function="); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Invalid;
    size_t close = t.find('>', i);
    if (close == std::string_view::npos) return Read::Partial;
    calls.push_back({std::string(t.substr(i, close - i)), "{", ""});
    ToolCall& call = calls.back();
    i = close + 1;
    for (bool first = true;; first = false) {
      i = skip_space(t, i);
      Match end = expect(t, i, "</function>");
      if (end == Match::Yes) break;
      if (Match m = expect(t, i, "<parameter="); m != Match::Yes)
        return m == Match::Prefix || end == Match::Prefix ? Read::Partial : Read::Invalid;
      size_t key_end = t.find('>', i),
             value_end = key_end == std::string_view::npos ? key_end : t.find("</parameter>", key_end);
      if (value_end == std::string_view::npos) return Read::Partial;
      std::string key(t.substr(i, key_end - i));
      std::string_view value = t.substr(key_end + 1, value_end - key_end - 1);
      if (value.starts_with('\n')) value.remove_prefix(1);
      if (value.ends_with('\n')) value.remove_suffix(1);
      call.arguments +=
          (first ? "" : ", ") + json_quote(key) + ": " + xml_value(value, parameter_schema(tools, call.name, key));
      i = value_end + 12;
    }
    call.arguments += "}";
    i = skip_space(t, i);
    if (expect(t, i, "</tool_call>") == Match::Prefix) return Read::Partial;
    if (Match m = next_call(t, i, {"<tool_call>", "<function="}); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Done;
  }
}

// MARKER [ {call}, {call} ] CLOSE?  (Mistral Nemo's [TOOL_CALLS], Granite's <|tool_call|>,
// Nemotron v2's <TOOLCALL>...</TOOLCALL>, whose blocks may repeat)
Read read_json_list(std::string_view t, size_t& i, std::vector<ToolCall>& calls, std::string_view marker,
                    std::string_view close = "") {
  return marked_lists(t, i, marker, close, [&](size_t& at) { return call_object_at(t, at, calls); });
}

// [TOOL_CALLS]NAME([CALL_ID]ID)?[ARGS]{...}, repeated.
Read read_mistral(std::string_view t, size_t& i, std::vector<ToolCall>& calls) {
  for (;;) {
    if (Match m = expect(t, i, "[TOOL_CALLS]"); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Invalid;
    size_t bracket = t.find('[', i);
    if (bracket == std::string_view::npos) return Read::Partial;
    ToolCall call{std::string(trim(t.substr(i, bracket - i))), "", ""};
    if (call.name.empty()) return Read::Invalid;
    i = bracket;
    if (expect(t, i, "[CALL_ID]") == Match::Yes) {
      size_t args = t.find("[ARGS]", i);
      if (args == std::string_view::npos) return Read::Partial;
      call.id = std::string(trim(t.substr(i, args - i)));
      i = args;
    }
    if (Match m = expect(t, i, "[ARGS]"); m != Match::Yes) return m == Match::Prefix ? Read::Partial : Read::Invalid;
    i = skip_space(t, i);
    size_t end = 0;
    JsonScan s = i < t.size() && t[i] == '{' ? scan_json_value(t, i, end)
                                             : (i < t.size() ? JsonScan::Invalid : JsonScan::Partial);
    if (s == JsonScan::Invalid) return Read::Invalid;
    call.arguments = std::string(rtrim(t.substr(i, s == JsonScan::Complete ? end - i : std::string_view::npos)));
    calls.push_back(std::move(call));
    if (s == JsonScan::Partial) return Read::Partial;
    i = end;
    if (Match m = next_call(t, i, {"[TOOL_CALLS]"}); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Done;
    i = skip_space(t, i);
  }
}

// <｜tool▁calls▁begin｜>(<｜tool▁call▁begin｜>HEAD<｜tool▁sep｜>BODY<｜tool▁call▁end｜>)+<｜tool▁calls▁end｜>
// R1: HEAD "function", BODY NAME\n```json\n{...}\n```; V3.1: HEAD NAME, BODY {...}.
Read read_deepseek(std::string_view t, size_t& i, std::vector<ToolCall>& calls, bool r1) {
  constexpr std::string_view calls_begin = "<｜tool▁calls▁begin｜>", call_begin = "<｜tool▁call▁begin｜>",
                             sep = "<｜tool▁sep｜>", call_end = "<｜tool▁call▁end｜>",
                             calls_end = "<｜tool▁calls▁end｜>";
  if (expect(t, i, calls_begin) == Match::Prefix) return Read::Partial;
  for (bool first = true;; first = false) {
    i = skip_space(t, i);
    if (Match m = expect(t, i, call_begin); m != Match::Yes) {
      if (m == Match::Prefix) return Read::Partial;
      if (first) return Read::Invalid;
      break;
    }
    size_t at_sep = t.find(sep, i);
    if (at_sep == std::string_view::npos) return Read::Partial;
    ToolCall call;
    call.name = std::string(trim(t.substr(i, at_sep - i)));
    i = at_sep + sep.size();
    if (r1) {
      size_t nl = t.find('\n', i);
      if (nl == std::string_view::npos) return Read::Partial;
      call.name = std::string(trim(t.substr(i, nl - i)));
      i = skip_space(t, nl);
      if (Match m = expect(t, i, "```json"); m != Match::Yes) return m == Match::Prefix ? Read::Partial : Read::Invalid;
    }
    if (call.name.empty()) return Read::Invalid;
    i = skip_space(t, i);
    size_t end = 0;
    JsonScan s = i < t.size() ? scan_json_value(t, i, end) : JsonScan::Partial;
    if (s == JsonScan::Invalid || (i < t.size() && t[i] != '{')) return Read::Invalid;
    call.arguments = std::string(rtrim(t.substr(i, s == JsonScan::Complete ? end - i : std::string_view::npos)));
    calls.push_back(std::move(call));
    if (s == JsonScan::Partial) return Read::Partial;
    i = skip_space(t, end);
    if (r1)
      if (Match m = expect(t, i, "```"); m != Match::Yes) return m == Match::Prefix ? Read::Partial : Read::Invalid;
    i = skip_space(t, i);
    if (Match m = expect(t, i, call_end); m != Match::Yes) return m == Match::Prefix ? Read::Partial : Read::Invalid;
  }
  if (expect(t, i, calls_end) == Match::Prefix) return Read::Partial;
  return Read::Done;
}

// Calls that start at a marker, with the text before it as content.
void parse_marked(std::string_view text, const ChatReplyOptions& o, bool partial, ChatReply& r,
                  const std::vector<std::string_view>& markers) {
  size_t at = std::string_view::npos;
  for (std::string_view m : markers) at = std::min(at, text.find(m));
  if (at == std::string_view::npos) {
    r.content = std::string(partial ? hold_back(text, std::span<const std::string_view>(markers)) : text);
    return;
  }
  r.content = std::string(text.substr(0, at));
  size_t i = at;
  Read read = Read::Invalid;
  switch (o.format.tools) {
    case ToolCallFormat::Hermes:
      read = read_hermes(text, i, r.tool_calls);
      break;
    case ToolCallFormat::QwenXml:
      read = read_qwen_xml(text, i, r.tool_calls, o.tools);
      break;
    case ToolCallFormat::MistralNemo:
      read = read_json_list(text, i, r.tool_calls, "[TOOL_CALLS]");
      break;
    case ToolCallFormat::Granite:
      read = read_json_list(text, i, r.tool_calls, "<|tool_call|>");
      break;
    case ToolCallFormat::Mistral:
      read = read_mistral(text, i, r.tool_calls);
      break;
    case ToolCallFormat::NemotronV2:
      read = read_json_list(text, i, r.tool_calls, "<TOOLCALL>", "</TOOLCALL>");
      break;
    case ToolCallFormat::Gemma4:
      read = read_gemma4(text, i, r.tool_calls);
      break;
    case ToolCallFormat::Lfm2:
      read = read_python_calls(text, i, r.tool_calls);
      break;
    default:
      read = read_deepseek(text, i, r.tool_calls, o.format.tools == ToolCallFormat::DeepSeekR1);
  }
  if (partial) return;
  if (read != Read::Done) {  // not calls after all, or cut short: the reply is text
    r.content = std::string(text);
    r.tool_calls.clear();
    return;
  }
  r.content += std::string(trim(text.substr(i)));
}

// A call as the whole reply: {"name": ..., "parameters": {...}} (Llama 3.x, after an optional
// <|python_tag|>), or {"tool_calls": [...]} / {"tool_call": {...}} / {"response": "..."} (generic).
void parse_leading_json(std::string_view text, const ChatReplyOptions& o, bool partial, ChatReply& r) {
  size_t i = skip_space(text, 0);
  bool llama = o.format.tools == ToolCallFormat::Llama3;
  if (llama && text.substr(i).starts_with("<|python_tag|>")) i = skip_space(text, i + 14);
  if (i >= text.size() || (partial && llama && std::string_view("<|python_tag|>").starts_with(text.substr(i)))) {
    if (!partial) r.content = std::string(text);
    return;
  }
  size_t end = 0;
  JsonScan s = text[i] == '{' ? scan_json_value(text, i, end) : JsonScan::Invalid;
  if (llama && s != JsonScan::Invalid) {
    size_t at = i;
    Read read = call_object_at(text, at, r.tool_calls);
    if (read == Read::Partial && partial) return;
    if (read == Read::Done) {
      r.content = std::string(trim(text.substr(at)));
      return;
    }
    r.tool_calls.clear();
  } else if (s == JsonScan::Partial && partial) {
    return;
  } else if (s == JsonScan::Complete) {
    json j = json::parse(text.substr(i, end - i));
    auto add = [&](const json& c) {
      if (!c.is_object() || !c.contains("name") || !c["name"].is_string()) return false;
      const json args = c.contains("arguments") ? c["arguments"] : json::object();
      r.tool_calls.push_back(
          {c["name"].get<std::string>(), args.is_string() ? args.get<std::string>() : args.dump(), ""});
      return true;
    };
    bool ok = false;
    if (j.contains("tool_calls") && j["tool_calls"].is_array()) {
      ok = true;
      for (const json& c : j["tool_calls"]) ok = add(c) && ok;
    } else if (j.contains("tool_call")) {
      ok = add(j["tool_call"]);
    } else if (j.contains("response") && j["response"].is_string()) {
      r.content = j["response"].get<std::string>();
      return;
    }
    if (ok) return;
    r.tool_calls.clear();
  }
  r.content = std::string(text);
}

// The markers a format's calls start with (none for the formats whose call is the whole reply).
std::vector<std::string_view> call_markers(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::Hermes:
      return {"<tool_call>"};
    case ToolCallFormat::QwenXml:
      return {"<tool_call>", "<function="};
    case ToolCallFormat::MistralNemo:
    case ToolCallFormat::Mistral:
      return {"[TOOL_CALLS]"};
    case ToolCallFormat::Granite:
      return {"<|tool_call|>"};
    case ToolCallFormat::DeepSeekR1:
    case ToolCallFormat::DeepSeekV31:
      return {"<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>"};
    case ToolCallFormat::Gemma4:
      return {"<|tool_call>"};
    case ToolCallFormat::NemotronV2:
      return {"<TOOLCALL>"};
    case ToolCallFormat::Lfm2:
      return {"<|tool_call_start|>"};
    default:
      return {};
  }
}

}  // namespace

void parse_tool_calls(std::string_view text, const ChatReplyOptions& o, bool partial, ChatReply& r) {
  if (o.format.tools == ToolCallFormat::Unknown) {  // no reader: the reply is text
    r.content = std::string(text);
    return;
  }
  std::vector<std::string_view> markers = call_markers(o.format.tools);
  if (markers.empty()) return parse_leading_json(text, o, partial, r);
  parse_marked(text, o, partial, r, markers);
}

}  // namespace vkllm
