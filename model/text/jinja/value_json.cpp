// to_json: Python's json.dumps, byte for byte, for the values a template can hold (what Hugging
// Face's `tojson` filter gives: ensure_ascii off, separators ", " and ": " unless indented).
#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "text/jinja/value.h"

namespace vkllm::jinja {

namespace {

void quote(const std::string& s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = uint8_t(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else if (c < 0x80 || !ensure_ascii) {
      out += char(c);
    } else {
      size_t n = 1;
      while (i + n < s.size() && (uint8_t(s[i + n]) & 0xc0) == 0x80 && n < 4) ++n;
      uint32_t cp = code_point(std::string_view(s).substr(i, n));
      i += n - 1;
      if (cp < 0x10000) {
        out += fmt::format("\\u{:04x}", cp);
      } else {
        cp -= 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
      }
    }
  }
  out += '"';
}

void dump(const Value& v, const JsonOptions& o, int level, std::string& out) {
  auto newline = [&](int l) {
    if (o.indent < 0) return;
    out += '\n';
    out.append(size_t(o.indent) * size_t(l), ' ');
  };
  switch (v.type()) {
    case Value::Type::None:
      out += "null";
      return;
    case Value::Type::Bool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Type::Int:
      out += std::to_string(v.as_int());
      return;
    case Value::Type::Float: {
      double d = v.as_float();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : float_repr(d);
      return;
    }
    case Value::Type::String:
      quote(v.as_string(), o.ensure_ascii, out);
      return;
    case Value::Type::List: {
      if (v.is_generator()) break;
      const auto& items = v.as_list().items;
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += o.item_sep;
        newline(level + 1);
        dump(items[i], o, level + 1, out);
      }
      newline(level);
      out += ']';
      return;
    }
    case Value::Type::Dict: {
      if (v.is_namespace()) break;
      std::vector<const std::pair<std::string, Value>*> items;
      for (const auto& kv : v.as_dict().items) items.push_back(&kv);
      if (o.sort_keys)
        std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      if (items.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += o.item_sep;
        newline(level + 1);
        quote(items[i]->first, o.ensure_ascii, out);
        out += o.key_sep;
        dump(items[i]->second, o, level + 1, out);
      }
      newline(level);
      out += '}';
      return;
    }
    default:
      break;
  }
  fail(fmt::format("Object of type {} is not JSON serializable", v.type_name()));
}

}  // namespace

std::string to_json(const Value& v, const JsonOptions& o) {
  std::string out;
  dump(v, o, 0, out);
  return out;
}

}  // namespace vkllm::jinja
