// Value: construction, Python's truthiness, equality, ordering, str() and repr().
#include "text/jinja/value.h"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cmath>

namespace vkllm::jinja {

void fail(const std::string& message) { throw TemplateError(message); }

namespace {

int max_depth(const std::vector<Value>& items) {
  int d = 0;
  for (const Value& v : items) d = std::max(d, v.depth());
  return d;
}

void check_depth(int depth) {
  if (depth > kMaxValueDepth) fail(fmt::format("values nest deeper than {} levels", kMaxValueDepth));
}

}  // namespace

Value Value::list(std::vector<Value> items, bool tuple) { return make_list(std::move(items), tuple, false); }
Value Value::generator(std::vector<Value> items) { return make_list(std::move(items), false, true); }

Value Value::make_list(std::vector<Value> items, bool tuple, bool generator) {
  if (items.size() > kMaxListItems) fail(fmt::format("a list longer than {} items", kMaxListItems));
  auto l = std::make_shared<List>();
  l->depth = 1 + max_depth(items);
  check_depth(l->depth);
  l->items = std::move(items);
  l->tuple = tuple;
  l->generator = generator;
  Value v;
  v.v_ = ListPtr(std::move(l));
  return v;
}

bool Value::is_generator() const { return is_list() && as_list().generator; }

Value Value::dict(std::vector<std::pair<std::string, Value>> items) {
  auto d = std::make_shared<Dict>();
  for (auto& [k, v] : items) d->set(k, std::move(v));
  Value v;
  v.v_ = DictPtr(std::move(d));
  return v;
}

Value Value::namespace_(std::vector<std::pair<std::string, Value>> items) {
  Value v = dict(std::move(items));
  v.as_mutable_dict().is_namespace = true;
  return v;
}

Value Value::function(std::string name, std::function<Value(CallArgs&)> fn) {
  Value v;
  v.v_ = FunctionPtr(std::make_shared<const Function>(Function{std::move(name), std::move(fn)}));
  return v;
}

Value Value::markup(std::string s) {
  Value v(std::move(s));
  v.markup_ = true;
  return v;
}

std::string escape_html(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool Value::is_mapping() const { return is_dict() && !as_dict().is_namespace; }
bool Value::is_namespace() const { return is_dict() && as_dict().is_namespace; }

void Value::wrong_type(const char* want) const { fail(fmt::format("expected {}, got {}", want, type_name())); }

int64_t Value::as_int() const {
  if (is_bool()) return int64_t(as_bool());
  if (!is_int()) fail(fmt::format("'{}' object cannot be interpreted as an integer", type_name()));
  return std::get<int64_t>(v_);
}

double Value::as_float() const {
  if (is_float()) return std::get<double>(v_);
  if (!is_int() && !is_bool()) fail(fmt::format("must be real number, not {}", type_name()));
  return double(as_int());
}

int Value::depth() const {
  if (is_list()) return as_list().depth;
  if (is_dict()) return as_dict().depth;
  return 0;
}

bool Value::truthy() const {
  switch (type()) {
    case Type::Undefined:
    case Type::None:
      return false;
    case Type::Bool:
      return as_bool();
    case Type::Int:
      return as_int() != 0;
    case Type::Float:
      return as_float() != 0.0;
    case Type::String:
      return !as_string().empty();
    case Type::List:
      return as_list().generator || !as_list().items.empty();
    case Type::Dict:
      return is_namespace() || !as_dict().items.empty();
    case Type::Function:
      return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (type()) {
    case Type::Undefined:
      return "Undefined";
    case Type::None:
      return "NoneType";
    case Type::Bool:
      return "bool";
    case Type::Int:
      return "int";
    case Type::Float:
      return "float";
    case Type::String:
      return "str";
    case Type::List:
      return as_list().generator ? "generator" : as_list().tuple ? "tuple" : "list";
    case Type::Dict:
      return is_namespace() ? "Namespace" : "dict";
    case Type::Function:
      return "function";
  }
  return "object";
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(const std::string& key, Value v) {
  depth = std::max(depth, 1 + v.depth());
  check_depth(depth);
  for (auto& [k, old] : items)
    if (k == key) {
      old = std::move(v);
      return;
    }
  items.emplace_back(key, std::move(v));
}

Value CallArgs::get(size_t i, std::string_view name) const {
  if (i < args.size()) return args[i];
  for (const auto& [k, v] : kwargs)
    if (k == name) return v;
  return Value::undefined(std::string(name));
}

bool CallArgs::has(size_t i, std::string_view name) const {
  if (i < args.size()) return true;
  for (const auto& [k, v] : kwargs)
    if (k == name) return true;
  return false;
}

void CallArgs::expect(std::string_view what, size_t n, std::initializer_list<std::string_view> names) const {
  if (args.size() > n) fail(fmt::format("{}() takes at most {} positional arguments ({} given)", what, n, args.size()));
  for (const auto& [k, v] : kwargs)
    if (std::find(names.begin(), names.end(), k) == names.end())
      fail(fmt::format("{}() got an unexpected keyword argument '{}'", what, k));
}

bool equal(const Value& a, const Value& b) {
  using T = Value::Type;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_float() == b.as_float();
    return a.as_int() == b.as_int();
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case T::Undefined:
    case T::None:
      return true;
    case T::String:
      return a.as_string() == b.as_string();
    case T::List: {
      const List &x = a.as_list(), &y = b.as_list();
      if (x.generator || y.generator) return &x == &y;
      if (x.tuple != y.tuple || x.items.size() != y.items.size()) return false;
      for (size_t i = 0; i < x.items.size(); ++i)
        if (!equal(x.items[i], y.items[i])) return false;
      return true;
    }
    case T::Dict: {
      const Dict &x = a.as_dict(), &y = b.as_dict();
      if (x.is_namespace || y.is_namespace) return &x == &y;
      if (x.items.size() != y.items.size()) return false;
      for (const auto& [k, v] : x.items) {
        const Value* w = y.find(k);
        if (!w || !equal(v, *w)) return false;
      }
      return true;
    }
    case T::Function:
      return &a.as_function() == &b.as_function();
    default:
      return false;
  }
}

int compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      double x = a.as_float(), y = b.as_float();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    int64_t x = a.as_int(), y = b.as_int();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    int c = a.as_string().compare(b.as_string());  // UTF-8 byte order is code point order
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list() && a.as_list().tuple == b.as_list().tuple && !a.is_generator() && !b.is_generator()) {
    const auto &x = a.as_list().items, &y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!equal(x[i], y[i])) return compare(x[i], y[i]);
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  fail(fmt::format("'<' not supported between instances of '{}' and '{}'", a.type_name(), b.type_name()));
}

std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string s(buf, r.ptr);  // [-]d[.ddd]e[+-]XX, the shortest digits that round-trip
  std::string sign;
  if (s[0] == '-') {
    sign = "-";
    s.erase(0, 1);
  }
  size_t e = s.find('e');
  int exp = std::stoi(s.substr(e + 1));
  std::string digits = s.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  if (exp >= -4 && exp < 16) {  // Python's repr writes [1e-4, 1e16) without an exponent
    std::string out;
    if (exp < 0) {
      out = "0." + std::string(size_t(-exp - 1), '0') + digits;
    } else {
      if (digits.size() <= size_t(exp) + 1) digits += std::string(size_t(exp) + 1 - digits.size(), '0');
      out = digits.substr(0, size_t(exp) + 1) + "." + digits.substr(size_t(exp) + 1);
      if (out.back() == '.') out += "0";
    }
    return sign + out;
  }
  std::string mant = digits.size() > 1 ? digits.substr(0, 1) + "." + digits.substr(1) : digits;
  return sign + fmt::format("{}e{}{:02d}", mant, exp < 0 ? '-' : '+', std::abs(exp));
}

std::string to_str(const Value& v) {
  switch (v.type()) {
    case Value::Type::Undefined:
      return "";
    case Value::Type::String:
      return v.as_string();
    default:
      return repr(v);
  }
}

namespace {

bool printable(uint32_t cp) {
  if (cp < 0x20 || cp == 0x7f) return false;
  if (cp >= 0x80 && cp <= 0xa0) return false;
  if (cp == 0xad || (cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f)) return false;
  if ((cp >= 0x205f && cp <= 0x206f) || cp == 0x3000 || cp == 0xfeff || (cp >= 0xe000 && cp <= 0xf8ff)) return false;
  return true;
}

std::string string_repr(const std::string& s) {
  char q = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, q);
  for (std::string_view c : utf8_chars(s)) {
    uint32_t cp = code_point(c);
    if (cp == uint32_t(q) || cp == '\\') {
      out += '\\';
      out += char(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (printable(cp)) {
      out += c;
    } else if (cp < 0x100) {
      out += fmt::format("\\x{:02x}", cp);
    } else {
      out += cp < 0x10000 ? fmt::format("\\u{:04x}", cp) : fmt::format("\\U{:08x}", cp);
    }
  }
  return out + q;
}

}  // namespace

std::string repr(const Value& v) {
  switch (v.type()) {
    case Value::Type::Undefined:
      return "Undefined";
    case Value::Type::None:
      return "None";
    case Value::Type::Bool:
      return v.as_bool() ? "True" : "False";
    case Value::Type::Int:
      return std::to_string(v.as_int());
    case Value::Type::Float:
      return float_repr(v.as_float());
    case Value::Type::String:
      return string_repr(v.as_string());
    case Value::Type::List: {
      const List& l = v.as_list();
      if (l.generator) return "<generator object>";
      std::string out = l.tuple ? "(" : "[";
      for (size_t i = 0; i < l.items.size(); ++i) out += (i ? ", " : "") + repr(l.items[i]);
      if (l.tuple && l.items.size() == 1) out += ",";
      return out + (l.tuple ? ")" : "]");
    }
    case Value::Type::Dict: {
      const Dict& d = v.as_dict();
      std::string out = "{";
      for (size_t i = 0; i < d.items.size(); ++i)
        out += (i ? ", " : "") + string_repr(d.items[i].first) + ": " + repr(d.items[i].second);
      out += "}";
      return d.is_namespace ? "<Namespace " + out + ">" : out;
    }
    case Value::Type::Function:
      return "<function " + v.as_function().name + ">";
  }
  return "";
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

std::vector<std::string_view> utf8_chars(std::string_view s) {
  std::vector<std::string_view> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = 1;
    while (i + n < s.size() && (uint8_t(s[i + n]) & 0xc0) == 0x80 && n < 4) ++n;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

uint32_t code_point(std::string_view c) {
  auto b = [&](size_t i) { return uint32_t(uint8_t(c[i])); };
  switch (c.size()) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1f) << 6) | (b(1) & 0x3f);
    case 3:
      return ((b(0) & 0x0f) << 12) | ((b(1) & 0x3f) << 6) | (b(2) & 0x3f);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3f) << 12) | ((b(2) & 0x3f) << 6) | (b(3) & 0x3f);
  }
}

size_t space_at(std::string_view s, size_t i) {
  unsigned char c = uint8_t(s[i]);
  if ((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20)) return 1;
  if (c < 0xc2) return 0;
  size_t n = c < 0xe0 ? 2 : (c < 0xf0 ? 3 : 4);
  if (i + n > s.size()) return 0;
  uint32_t cp = code_point(s.substr(i, n));
  bool space = cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
               cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
  return space ? n : 0;
}

std::string_view strip_spaces(std::string_view s, bool left, bool right) {
  if (left) {
    size_t i = 0, n;
    while (i < s.size() && (n = space_at(s, i))) i += n;
    s.remove_prefix(i);
  }
  if (right) {
    size_t end = s.size();
    while (end > 0) {  // step back one character at a time
      size_t start = end - 1;
      while (start > 0 && (uint8_t(s[start]) & 0xc0) == 0x80) --start;
      if (space_at(s, start) != end - start) break;
      end = start;
    }
    s = s.substr(0, end);
  }
  return s;
}

// Offset of the first byte that is not part of well-formed UTF-8, or npos.
size_t invalid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    uint8_t c = uint8_t(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k)
      if ((uint8_t(s[i + k]) & 0xc0) != 0x80) return i;
    if (n > 1) {
      uint32_t cp = code_point(s.substr(i, n));
      if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
          (cp >= 0xd800 && cp < 0xe000))
        return i;
    }
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace vkllm::jinja
