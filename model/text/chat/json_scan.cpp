// A small structural JSON scanner that tolerates a value cut short.
#include "text/chat/json_scan.h"

#include <nlohmann/json.hpp>

namespace vkllm {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A string starting at text[pos] == '"': Complete with end past the closing quote.
JsonScan scan_string(std::string_view t, size_t pos, size_t& end) {
  for (size_t i = pos + 1; i < t.size(); ++i) {
    char c = t[i];
    if (c == '"') {
      end = i + 1;
      return JsonScan::Complete;
    }
    if (uint8_t(c) < 0x20) return JsonScan::Invalid;
    if (c == '\\' && ++i == t.size()) break;
  }
  return JsonScan::Partial;
}

// true, false, null and numbers: the characters they may hold, then a check that the whole word
// is a prefix of (or is) a valid literal.
JsonScan scan_word(std::string_view t, size_t pos, size_t& end) {
  size_t i = pos;
  while (i < t.size() && (std::isalnum(uint8_t(t[i])) || t[i] == '-' || t[i] == '+' || t[i] == '.')) ++i;
  std::string_view w = t.substr(pos, i - pos);
  if (w.empty()) return JsonScan::Invalid;
  for (std::string_view lit : {"true", "false", "null"})
    if (lit.starts_with(w)) {
      if (w.size() < lit.size()) return i == t.size() ? JsonScan::Partial : JsonScan::Invalid;
      end = i;
      return JsonScan::Complete;
    }
  if (!(w[0] == '-' || (w[0] >= '0' && w[0] <= '9'))) return JsonScan::Invalid;
  end = i;
  if (i == t.size()) return JsonScan::Partial;  // more digits may follow
  return nlohmann::json::accept(w) ? JsonScan::Complete : JsonScan::Invalid;
}

}  // namespace

size_t skip_json_space(std::string_view t, size_t pos) {
  while (pos < t.size() && is_space(t[pos])) ++pos;
  return pos;
}

JsonScan scan_json_value(std::string_view t, size_t pos, size_t& end) {
  if (pos >= t.size()) return JsonScan::Partial;
  char c = t[pos];
  if (c == '"') return scan_string(t, pos, end);
  if (c != '{' && c != '[') return scan_word(t, pos, end);
  // Objects and arrays: brackets balanced outside strings; the contents are checked by the
  // parser once complete.
  std::vector<char> open;
  for (size_t i = pos; i < t.size(); ++i) {
    char x = t[i];
    if (x == '"') {
      size_t e = 0;
      JsonScan s = scan_string(t, i, e);
      if (s != JsonScan::Complete) return s;
      i = e - 1;
    } else if (x == '{' || x == '[') {
      open.push_back(x == '{' ? '}' : ']');
    } else if (x == '}' || x == ']') {
      if (open.empty() || open.back() != x) return JsonScan::Invalid;
      open.pop_back();
      if (open.empty()) {
        end = i + 1;
        return nlohmann::json::accept(t.substr(pos, end - pos)) ? JsonScan::Complete : JsonScan::Invalid;
      }
    }
  }
  return JsonScan::Partial;
}

JsonObjectScan scan_json_object(std::string_view t, size_t pos) {
  JsonObjectScan out;
  size_t i = skip_json_space(t, pos + 1);
  auto partial = [&] {
    out.state = JsonScan::Partial;
    return out;
  };
  if (i < t.size() && t[i] == '}') {
    out.state = JsonScan::Complete;
    out.end = i + 1;
    return out;
  }
  for (;;) {
    if (i >= t.size()) return partial();
    if (t[i] != '"') return out;  // Invalid
    size_t key_end = 0;
    JsonScan k = scan_string(t, i, key_end);
    if (k != JsonScan::Complete) return k == JsonScan::Partial ? partial() : out;
    JsonMember m;
    try {
      m.key = nlohmann::json::parse(t.substr(i, key_end - i)).get<std::string>();
    } catch (const nlohmann::json::exception&) {
      return out;
    }
    i = skip_json_space(t, key_end);
    if (i >= t.size()) return partial();
    if (t[i] != ':') return out;
    m.value_begin = i = skip_json_space(t, i + 1);
    size_t value_end = 0;
    JsonScan v = scan_json_value(t, i, value_end);
    if (v == JsonScan::Invalid) return out;
    if (v == JsonScan::Partial) {
      m.value_end = t.size();
      out.members.push_back(std::move(m));
      return partial();
    }
    m.value_end = value_end;
    m.complete = true;
    out.members.push_back(std::move(m));
    i = skip_json_space(t, value_end);
    if (i >= t.size()) return partial();
    if (t[i] == '}') {
      out.state = JsonScan::Complete;
      out.end = i + 1;
      return out;
    }
    if (t[i] != ',') return out;
    i = skip_json_space(t, i + 1);
  }
}

}  // namespace vkllm
