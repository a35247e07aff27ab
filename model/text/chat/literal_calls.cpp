// The tool-call readers of the formats whose argument values are not JSON: Gemma 4's (strings
// between <|"|> marks, bare keys) and LFM2's Python calls. Both write the arguments as JSON text
// as the reply comes (a key's or string's characters as they arrive), so that a longer reply only
// extends them.
#include <fmt/format.h>
#include <cctype>

#include "text/chat/call_scan.h"
#include "text/chat/json_scan.h"

namespace vkllm::call_scan {

using json = nlohmann::ordered_json;

// JSON string escapes for '"', '\\' and control characters; other bytes as they are.
void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (uint8_t(c) < 0x20)
      out += fmt::format("\\u{:04x}", int(c));
    else
      out += c;
  }
}

JsonScan scalar_value(std::string_view t, size_t& i, std::string& out,
                      std::span<const std::pair<std::string_view, std::string_view>> words) {
  for (const auto& [word, as_json] : words)
    if (Match m = expect(t, i, word); m != Match::No) {
      out += m == Match::Yes ? as_json : as_json.substr(0, t.size() - i);
      return m == Match::Yes ? JsonScan::Complete : JsonScan::Partial;
    }
  size_t end = t.find_first_not_of("-+.0123456789eE", i);
  std::string_view number = t.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
  if (number.empty()) return JsonScan::Invalid;
  out += number;
  i += number.size();
  if (end == std::string_view::npos) return JsonScan::Partial;
  return json::accept(number) ? JsonScan::Complete : JsonScan::Invalid;
}

namespace {

using Words = std::pair<std::string_view, std::string_view>;
constexpr Words kJsonWords[] = {{"true", "true"}, {"false", "false"}, {"null", "null"}};
constexpr Words kPythonWords[] = {{"True", "true"}, {"False", "false"}, {"None", "null"},
                                  {"true", "true"}, {"false", "false"}, {"null", "null"}};

constexpr std::string_view kGemmaQuote = "<|\"|>";

JsonScan gemma_value(std::string_view t, size_t& i, std::string& out, int depth);

// Members of a {...} or items of a [...], after the opening bracket.
JsonScan gemma_members(std::string_view t, size_t& i, std::string& out, int depth, bool object) {
  char close = object ? '}' : ']';
  i = skip_space(t, i);
  if (i < t.size() && t[i] == close) return out += close, ++i, JsonScan::Complete;
  for (;;) {
    i = skip_space(t, i);
    if (object) {
      size_t colon = t.find_first_of(":}", i);
      std::string_view key = t.substr(i, colon == std::string_view::npos ? std::string_view::npos : colon - i);
      out += '"';
      append_escaped(out, key);
      if (colon == std::string_view::npos) return JsonScan::Partial;
      if (t[colon] != ':' || trim(key).empty()) return JsonScan::Invalid;
      out += "\":";
      i = skip_space(t, colon + 1);
    }
    if (JsonScan s = gemma_value(t, i, out, depth + 1); s != JsonScan::Complete) return s;
    i = skip_space(t, i);
    if (i >= t.size()) return JsonScan::Partial;
    if (t[i] == close) return out += close, ++i, JsonScan::Complete;
    if (t[i] != ',') return JsonScan::Invalid;
    out += ',';
    ++i;
  }
}

JsonScan gemma_value(std::string_view t, size_t& i, std::string& out, int depth) {
  if (depth > 64) return JsonScan::Invalid;
  if (i >= t.size()) return JsonScan::Partial;
  if (t[i] == '{' || t[i] == '[') {
    bool object = t[i] == '{';
    out += t[i++];
    return gemma_members(t, i, out, depth, object);
  }
  if (Match m = expect(t, i, kGemmaQuote); m != Match::No) {
    if (m == Match::Prefix) return JsonScan::Partial;
    out += '"';
    size_t end = t.find(kGemmaQuote, i);
    std::string_view text = t.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
    if (end == std::string_view::npos) text = hold_back(text, {kGemmaQuote});
    append_escaped(out, text);
    if (end == std::string_view::npos) return JsonScan::Partial;
    i = end + kGemmaQuote.size();
    return out += '"', JsonScan::Complete;
  }
  return scalar_value(t, i, out, kJsonWords);
}

// --- LFM2: <|tool_call_start|>[NAME(key=VALUE, ...), ...]<|tool_call_end|>, VALUE a Python
// literal ('text' or "text" with Python's escapes, numbers, True/False/None, lists, tuples,
// dicts) or JSON's true/false/null, which LFM2 writes too (llama.cpp reads both).

// dotted names: Calendar.create_event
bool name_char(char c) { return std::isalnum(uint8_t(c)) || c == '_' || c == '.' || c == '-'; }

// A quoted string with Python's escapes, as a JSON string. An escape cut short writes nothing yet.
JsonScan python_string(std::string_view t, size_t& i, std::string& out) {
  char quote = t[i++];
  out += '"';
  while (i < t.size()) {
    char c = t[i];
    if (c == quote) return out += '"', ++i, JsonScan::Complete;
    if (c != '\\') {
      append_escaped(out, t.substr(i++, 1));
      continue;
    }
    if (i + 1 >= t.size()) return JsonScan::Partial;
    char e = t[i + 1];
    size_t used = 2;
    switch (e) {
      case 'n':
      case 't':
      case 'r':
      case 'b':
      case 'f':
      case '"':
      case '\\':
        out += '\\', out += e;
        break;
      case '\'':
      case '/':
        out += e;
        break;
      case '0':
        out += "\\u0000";
        break;
      case '\n':  // a line continuation
        break;
      case 'u':
      case 'x': {
        size_t digits = e == 'u' ? 4 : 2;
        std::string_view hex = t.substr(i + 2, digits);
        if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) return JsonScan::Invalid;
        if (hex.size() < digits) return JsonScan::Partial;
        out += "\\u" + std::string(4 - digits, '0') + std::string(hex);
        used += digits;
        break;
      }
      default:  // Python keeps an unknown escape's backslash
        out += "\\\\";
        append_escaped(out, t.substr(i + 1, 1));
    }
    i += used;
  }
  return JsonScan::Partial;
}

JsonScan python_value(std::string_view t, size_t& i, std::string& out, int depth);

// The items of a list, tuple or dict after its opening bracket; a trailing comma is Python's.
JsonScan python_items(std::string_view t, size_t& i, std::string& out, int depth, char close, bool dict) {
  char json_close = dict ? '}' : ']';
  for (bool first = true;; first = false) {
    i = skip_space(t, i);
    if (i >= t.size()) return JsonScan::Partial;
    if (t[i] == close) return out += json_close, ++i, JsonScan::Complete;
    if (!first) {
      if (t[i] != ',') return JsonScan::Invalid;
      i = skip_space(t, i + 1);
      if (i >= t.size()) return JsonScan::Partial;
      if (t[i] == close) return out += json_close, ++i, JsonScan::Complete;
      out += ',';
    }
    if (dict) {
      if (t[i] != '"' && t[i] != '\'') return JsonScan::Invalid;
      if (JsonScan s = python_string(t, i, out); s != JsonScan::Complete) return s;
      i = skip_space(t, i);
      if (i >= t.size()) return JsonScan::Partial;
      if (t[i] != ':') return JsonScan::Invalid;
      out += ':';
      i = skip_space(t, i + 1);
    }
    if (JsonScan s = python_value(t, i, out, depth + 1); s != JsonScan::Complete) return s;
  }
}

JsonScan python_value(std::string_view t, size_t& i, std::string& out, int depth) {
  if (depth > 64) return JsonScan::Invalid;
  if (i >= t.size()) return JsonScan::Partial;
  char c = t[i];
  if (c == '"' || c == '\'') return python_string(t, i, out);
  if (c == '[' || c == '(' || c == '{') {
    out += c == '{' ? '{' : '[';
    ++i;
    return python_items(t, i, out, depth, c == '[' ? ']' : c == '(' ? ')' : '}', c == '{');
  }
  return scalar_value(t, i, out, kPythonWords);
}

// key=VALUE, ... up to the closing parenthesis, into out (which holds "{").
Read python_arguments(std::string_view t, size_t& i, std::string& out) {
  for (bool first = true;; first = false) {
    i = skip_space(t, i);
    if (i >= t.size()) return Read::Partial;
    if (t[i] == ')') return out += '}', ++i, Read::Done;
    if (!first) {
      if (t[i] != ',') return Read::Invalid;
      i = skip_space(t, i + 1);
      if (i >= t.size()) return Read::Partial;
      if (t[i] == ')') return out += '}', ++i, Read::Done;
      out += ',';
    }
    // A keyword: an identifier, or whatever name the tool's schema gave (which the grammar
    // writes as it is); a positional argument is not LFM2's calls.
    size_t key_end = t.find_first_of("=,()[]{}'\" \t\r\n", i);
    if (key_end == i) return Read::Invalid;
    if (key_end == std::string_view::npos) key_end = t.size();
    out += '"';
    append_escaped(out, t.substr(i, key_end - i));
    i = skip_space(t, key_end);
    if (i >= t.size()) return Read::Partial;
    if (t[i] != '=') return Read::Invalid;
    out += "\":";
    i = skip_space(t, i + 1);
    JsonScan s = python_value(t, i, out, 0);
    if (s != JsonScan::Complete) return s == JsonScan::Partial ? Read::Partial : Read::Invalid;
  }
}

}  // namespace

Read read_gemma4(std::string_view t, size_t& i, std::vector<ToolCall>& calls) {
  for (;;) {
    i = skip_space(t, i);
    if (Match m = expect(t, i, "<|tool_call>"); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Invalid;
    if (Match m = expect(t, i, "call:"); m != Match::Yes) return m == Match::Prefix ? Read::Partial : Read::Invalid;
    size_t brace = t.find('{', i);
    if (brace == std::string_view::npos)
      return t.substr(i).find_first_of("<} \n") == std::string_view::npos ? Read::Partial : Read::Invalid;
    std::string name(trim(t.substr(i, brace - i)));
    if (name.empty() || name.find_first_of(" \n<>") != std::string::npos) return Read::Invalid;
    i = brace;
    std::string args;
    JsonScan s = gemma_value(t, i, args, 0);
    if (s == JsonScan::Invalid) return Read::Invalid;
    calls.push_back({name, args, ""});
    if (s == JsonScan::Partial) return Read::Partial;
    if (Match m = expect(t, i, "<tool_call|>"); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Invalid;
    if (Match m = next_call(t, i, {"<|tool_call>"}); m != Match::Yes)
      return m == Match::Prefix ? Read::Partial : Read::Done;
  }
}

Read read_python_calls(std::string_view t, size_t& i, std::vector<ToolCall>& calls) {
  return marked_lists(t, i, "<|tool_call_start|>", "<|tool_call_end|>", [&](size_t& at) {
    size_t open = at;
    while (open < t.size() && name_char(t[open])) ++open;
    if (open >= t.size()) return Read::Partial;
    if (t[open] != '(' || open == at) return Read::Invalid;
    calls.push_back({std::string(t.substr(at, open - at)), "{", ""});
    at = open + 1;
    return python_arguments(t, at, calls.back().arguments);
  });
}

}  // namespace vkllm::call_scan
