// Python's string formatting: str.format ("{}", "{0}", "{name}", "{x.attr}", "{x[key]}",
// conversions !s/!r; no format specs) and printf-style `%` (%s %r %d %i %f %x %% with flags,
// width and precision).
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "text/jinja/builtins.h"

namespace vkllm::jinja {

namespace {

// "name.attr[key][0]" applied to the argument it names.
Value resolve_field(const std::string& field, const CallArgs& a, size_t& auto_index) {
  size_t end = field.find_first_of(".[");
  std::string head = field.substr(0, end);
  Value v;
  if (head.empty() || std::all_of(head.begin(), head.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    size_t index = head.empty() ? auto_index++ : (head.size() > 9 ? SIZE_MAX : size_t(std::stoul(head)));
    if (index >= a.args.size()) fail(fmt::format("Replacement index {} out of range for positional args tuple", head));
    v = a.args[index];
  } else {
    auto it = std::find_if(a.kwargs.begin(), a.kwargs.end(), [&](const auto& kv) { return kv.first == head; });
    if (it == a.kwargs.end()) fail(fmt::format("format: no argument named '{}'", head));
    v = it->second;
  }
  while (end != std::string::npos && end < field.size()) {
    if (field[end] == '.') {
      size_t next = field.find_first_of(".[", end + 1);
      v = get_attr(v, field.substr(end + 1, next == std::string::npos ? std::string::npos : next - end - 1));
      end = next;
    } else {
      size_t close = field.find(']', end);
      if (close == std::string::npos) fail("Missing ']' in format string");
      std::string key = field.substr(end + 1, close - end - 1);
      bool digits = !key.empty() && key.size() < 18 &&
                    std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
      v = get_item(v, digits ? Value(int64_t(std::stoll(key))) : Value(key));
      end = close + 1;
    }
  }
  if (v.is_undefined()) fail(fmt::format("format: no argument for '{{{}}}'", field));
  return v;
}

}  // namespace

std::string python_format(const std::string& s, const CallArgs& a) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '}') {
      if (i + 1 < s.size() && s[i + 1] == '}')
        ++i;
      else
        fail("Single '}' encountered in format string");
      out += '}';
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = s.find('}', i);
    if (close == std::string::npos) fail("Single '{' encountered in format string");
    std::string field = s.substr(i + 1, close - i - 1);
    i = close;
    char conv = 's';
    size_t colon = field.find(':');
    if (colon != std::string::npos) {
      if (colon + 1 < field.size()) fail("format specs in str.format are not supported");
      field.resize(colon);
    }
    size_t bang = field.find('!');
    if (bang != std::string::npos) {
      if (bang + 2 != field.size() || (field[bang + 1] != 's' && field[bang + 1] != 'r'))
        fail("format: unknown conversion");
      conv = field[bang + 1];
      field.resize(bang);
    }
    Value v = resolve_field(field, a, auto_index);
    out += conv == 'r' ? repr(v) : to_str(v);
    if (a.ev) a.ev->check_size(out.size());
  }
  return out;
}

std::string percent_format(const std::string& f, const Value& args, const Evaluator& ev) {
  std::vector<Value> positional =
      args.is_list() && args.as_list().tuple ? args.as_list().items : std::vector<Value>{args};
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    if (++i >= f.size()) fail("incomplete format");
    Value v;
    bool named = false;
    if (f[i] == '(') {
      size_t close = f.find(')', i);
      if (close == std::string::npos || !args.is_mapping()) fail("format requires a mapping");
      const Value* x = args.as_dict().find(f.substr(i + 1, close - i - 1));
      if (!x) fail("format: key not found");
      v = *x;
      named = true;
      i = close + 1;
    }
    size_t spec_start = i;
    while (i < f.size() && std::string_view("-+ #0").find(f[i]) != std::string_view::npos) ++i;
    while (i < f.size() && ((f[i] >= '0' && f[i] <= '9') || f[i] == '.')) ++i;
    if (i >= f.size()) fail("incomplete format");
    std::string spec = f.substr(spec_start, i - spec_start);
    if (spec.size() > 8) fail("format spec too long");
    char type = f[i];
    if (type == '%') {
      out += '%';
      continue;
    }
    if (!named) {
      if (next >= positional.size()) fail("not enough arguments for format string");
      v = positional[next++];
    }
    char buf[512];
    if (type == 's' || type == 'r') {
      std::string text = type == 's' ? to_str(v) : repr(v);
      size_t digits = spec.find_first_of("123456789");
      size_t width = digits == std::string::npos ? 0 : size_t(std::atoi(spec.c_str() + digits));
      ev.check_size(width);
      size_t n = utf8_length(text);
      std::string pad(width > n ? width - n : 0, ' ');
      out += spec.find('-') != std::string::npos ? text + pad : pad + text;
    } else if (type == 'd' || type == 'i' || type == 'x' || type == 'X') {
      if (!v.is_number()) fail(fmt::format("%{} format: a number is required, not {}", type, v.type_name()));
      std::snprintf(
          buf, sizeof buf, ("%" + spec + "ll" + (type == 'i' ? 'd' : type)).c_str(),
          (long long)(v.is_float() ? (std::fabs(v.as_float()) < 9.2e18 ? (long long)v.as_float() : 0) : v.as_int()));
      out += buf;
    } else if (type == 'f' || type == 'e' || type == 'g') {
      if (!v.is_number()) fail(fmt::format("%{} format: a real number is required, not {}", type, v.type_name()));
      std::snprintf(buf, sizeof buf, ("%" + spec + type).c_str(), v.as_float());
      out += buf;
    } else {
      fail(fmt::format("unsupported format character '{}'", type));
    }
    ev.check_size(out.size());
  }
  if (next < positional.size() && !args.is_mapping()) fail("not all arguments converted during string formatting");
  return out;
}

}  // namespace vkllm::jinja
