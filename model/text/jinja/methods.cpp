// Methods of str, dict and list as Python defines them (the ones templates call), the global
// functions, `in`, and Python's two string formatting forms (str.format and %).
#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "text/jinja/builtins.h"

namespace vkllm::jinja {

namespace {

const std::string& str_arg(const CallArgs& a, size_t i, std::string_view name, std::string& storage) {
  Value v = a.get(i, name);
  if (!v.is_string()) fail(fmt::format("{}: a string argument is needed, not '{}'", name, v.type_name()));
  storage = v.as_string();
  return storage;
}

bool in_chars(std::string_view c, const std::vector<std::string_view>& set) {
  return std::find(set.begin(), set.end(), c) != set.end();
}

// str.strip/lstrip/rstrip with optional characters.
Value strip(const std::string& s, const CallArgs& a, bool left, bool right) {
  Value chars = a.get(0, "chars");
  if (chars.is_undefined() || chars.is_none()) return Value(std::string(strip_spaces(s, left, right)));
  if (!chars.is_string()) fail("strip arg must be None or str");
  std::vector<std::string_view> set = utf8_chars(chars.as_string()), cs = utf8_chars(s);
  size_t lo = 0, hi = cs.size();
  while (left && lo < hi && in_chars(cs[lo], set)) ++lo;
  while (right && hi > lo && in_chars(cs[hi - 1], set)) --hi;
  std::string out;
  for (size_t i = lo; i < hi; ++i) out += cs[i];
  return Value(std::move(out));
}

Value split(const std::string& s, const CallArgs& a, bool from_right) {
  Value sepv = a.get(0, "sep");
  int64_t maxsplit = a.has(1, "maxsplit") ? a.get(1, "maxsplit").as_int() : -1;
  std::vector<Value> out;
  if (sepv.is_undefined() || sepv.is_none()) {  // runs of whitespace; no empty strings
    std::vector<std::pair<size_t, size_t>> words;
    size_t i = 0, n;
    while (i < s.size()) {
      while (i < s.size() && (n = space_at(s, i))) i += n;
      if (i >= s.size()) break;
      size_t start = i;
      while (i < s.size() && !space_at(s, i)) ++i;
      words.emplace_back(start, i);
    }
    size_t keep = maxsplit < 0 || size_t(maxsplit) >= words.size() ? words.size() : size_t(maxsplit) + 1;
    if (keep == 0) return Value::list({});
    if (!from_right) {
      for (size_t w = 0; w + 1 < keep; ++w)
        out.emplace_back(s.substr(words[w].first, words[w].second - words[w].first));
      std::string_view rest = strip_spaces(std::string_view(s).substr(words[keep - 1].first), false, true);
      out.emplace_back(rest);
    } else {
      size_t first = words.size() - keep;
      out.emplace_back(strip_spaces(std::string_view(s).substr(0, words[first].second), true, false));
      for (size_t w = first + 1; w < words.size(); ++w)
        out.emplace_back(s.substr(words[w].first, words[w].second - words[w].first));
    }
    return Value::list(std::move(out));
  }
  if (!sepv.is_string()) fail("must be str or None");
  const std::string& sep = sepv.as_string();
  if (sep.empty()) fail("empty separator");
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t p; (p = s.find(sep, start)) != std::string::npos;) {
    parts.push_back(s.substr(start, p - start));
    start = p + sep.size();
  }
  parts.push_back(s.substr(start));
  if (maxsplit >= 0 && size_t(maxsplit) + 1 < parts.size()) {  // join back what is past maxsplit
    size_t keep = size_t(maxsplit) + 1;
    auto join = [&](size_t lo, size_t hi) {
      std::string r = parts[lo];
      for (size_t i = lo + 1; i < hi; ++i) r += sep + parts[i];
      return r;
    };
    std::vector<std::string> merged;
    if (!from_right) {
      merged.assign(parts.begin(), parts.begin() + long(keep - 1));
      merged.push_back(join(keep - 1, parts.size()));
    } else {
      merged.push_back(join(0, parts.size() - keep + 1));
      merged.insert(merged.end(), parts.end() - long(keep - 1), parts.end());
    }
    parts = std::move(merged);
  }
  for (std::string& p : parts) out.emplace_back(std::move(p));
  return Value::list(std::move(out));
}

bool affix(const std::string& s, const Value& what, bool prefix) {
  auto one = [&](const Value& v) {
    if (!v.is_string()) fail("startswith/endswith: a str or a tuple of str is needed");
    const std::string& p = v.as_string();
    if (p.size() > s.size()) return false;
    return prefix ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0;
  };
  if (what.is_list()) return std::any_of(what.as_list().items.begin(), what.as_list().items.end(), one);
  return one(what);
}

Value replace(const std::string& s, const CallArgs& a, const Evaluator* ev) {
  std::string o, n;
  const std::string& old = str_arg(a, 0, "old", o);
  const std::string& rep = str_arg(a, 1, "new", n);
  int64_t count = a.has(2, "count") ? a.get(2, "count").as_int() : -1;
  std::string out;
  auto grow = [&](std::string_view piece) {
    if (ev) ev->check_size(out.size() + piece.size());
    out += piece;
  };
  if (old.empty()) {  // "abc".replace("", "-") is "-a-b-c-"
    std::vector<std::string_view> cs = utf8_chars(s);
    int64_t done = 0;
    for (size_t i = 0; i <= cs.size(); ++i) {
      if (count < 0 || done < count) grow(rep), ++done;
      if (i < cs.size()) grow(cs[i]);
    }
    return Value(std::move(out));
  }
  size_t start = 0;
  for (int64_t done = 0; count < 0 || done < count; ++done) {
    size_t p = s.find(old, start);
    if (p == std::string::npos) break;
    grow(std::string_view(s).substr(start, p - start));
    grow(rep);
    start = p + old.size();
  }
  grow(std::string_view(s).substr(start));
  return Value(std::move(out));
}

std::string title(const std::string& s, bool only_first) {
  std::string out = s;
  bool prev_cased = false;
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    bool alpha = std::isalpha(uint8_t(c)) && uint8_t(c) < 0x80;
    if (alpha) out[i] = char((prev_cased || (only_first && i > 0)) ? std::tolower(c) : std::toupper(c));
    prev_cased = only_first ? true : alpha;
  }
  return out;
}

int64_t find(const std::string& s, const std::string& sub, bool reverse) {
  size_t p = reverse ? s.rfind(sub) : s.find(sub);
  return p == std::string::npos ? -1 : int64_t(utf8_length(std::string_view(s).substr(0, p)));
}

Value str_method(const std::string& s, const std::string& name, CallArgs& a) {
  std::string tmp;
  if (name == "strip" || name == "lstrip" || name == "rstrip") return strip(s, a, name != "rstrip", name != "lstrip");
  if (name == "split" || name == "rsplit") return split(s, a, name == "rsplit");
  if (name == "startswith" || name == "endswith") return Value(affix(s, a.get(0, "prefix"), name == "startswith"));
  if (name == "upper" || name == "lower") {
    std::string out = s;
    for (char& c : out)
      if (uint8_t(c) < 0x80) c = char(name == "upper" ? std::toupper(c) : std::tolower(c));
    return Value(out);
  }
  if (name == "title") return Value(title(s, false));
  if (name == "capitalize") return Value(title(s, true));
  if (name == "replace") return replace(s, a, a.ev);
  if (name == "find" || name == "rfind") return Value(find(s, str_arg(a, 0, "sub", tmp), name == "rfind"));
  if (name == "index" || name == "rindex") {
    int64_t i = find(s, str_arg(a, 0, "sub", tmp), name == "rindex");
    if (i < 0) fail("substring not found");
    return Value(i);
  }
  if (name == "count") {
    const std::string& sub = str_arg(a, 0, "sub", tmp);
    if (sub.empty()) return Value(int64_t(utf8_length(s) + 1));
    int64_t n = 0;
    for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
    return Value(n);
  }
  if (name == "join") {
    std::string out;
    std::vector<Value> items = iterate(a.get(0, "iterable"));
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string())
        fail(fmt::format("sequence item {}: expected str instance, {} found", i, items[i].type_name()));
      if (a.ev) a.ev->check_size(out.size() + s.size() + items[i].as_string().size());
      out += (i ? s : "") + items[i].as_string();
    }
    return Value(std::move(out));
  }
  if (name == "format") return Value(python_format(s, a));
  if (name == "removeprefix" || name == "removesuffix") {
    const std::string& p = str_arg(a, 0, "prefix", tmp);
    bool pre = name == "removeprefix";
    if (!affix(s, Value(p), pre)) return Value(s);
    return Value(pre ? s.substr(p.size()) : s.substr(0, s.size() - p.size()));
  }
  if (name == "splitlines") {
    std::vector<Value> out;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == '\n' || s[i] == '\r') {
        size_t e = i;
        if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
        out.emplace_back(s.substr(start, (a.get(0, "keepends").truthy() ? i + 1 : e) - start));
        start = i + 1;
      }
    if (start < s.size()) out.emplace_back(s.substr(start));
    return Value::list(std::move(out));
  }
  auto all = [&](int (*pred)(int)) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) { return uint8_t(c) < 0x80 && pred(c); });
  };
  if (name == "isdigit") return Value(all([](int c) { return int(std::isdigit(c)); }));
  if (name == "isalpha") return Value(all([](int c) { return int(std::isalpha(c)); }));
  if (name == "isalnum") return Value(all([](int c) { return int(std::isalnum(c)); }));
  if (name == "isspace") return Value(!s.empty() && strip_spaces(s, true, false).empty());
  fail(fmt::format("str.{}() is not supported", name));
}

Value dict_method(const Value& obj, const std::string& name, CallArgs& a) {
  const Dict& d = obj.as_dict();
  if (name == "items" || name == "keys" || name == "values") {
    a.expect(name, 0, {});
    std::vector<Value> out;
    for (const auto& [k, v] : d.items)
      out.push_back(name == "items" ? Value::list({Value(k), v}, true) : name == "keys" ? Value(k) : v);
    return Value::list(std::move(out));
  }
  if (name == "get") {
    Value key = a.get(0, "key");
    const Value* v = key.is_string() ? d.find(key.as_string()) : nullptr;
    return v ? *v : (a.has(1, "default") ? a.get(1, "default") : Value::none());
  }
  if (name == "copy") return Value::dict(d.items);
  fail(fmt::format("dict.{}() is not supported", name));
}

Value list_method(const Value& obj, const std::string& name, CallArgs& a) {
  const auto& items = obj.as_list().items;
  Value x = a.get(0, "value");
  if (name == "count")
    return Value(int64_t(std::count_if(items.begin(), items.end(), [&](const Value& v) { return equal(v, x); })));
  for (size_t i = 0; i < items.size(); ++i)
    if (equal(items[i], x)) return Value(int64_t(i));
  fail(fmt::format("{} is not in list", repr(x)));
}

bool is_any(const std::string& name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Value method(const Value& obj, const std::string& name) {
  bool known = false;
  if (obj.is_string())
    known = is_any(name, {"strip",      "lstrip",  "rstrip",  "split",      "rsplit",  "startswith",   "endswith",
                          "upper",      "lower",   "title",   "capitalize", "replace", "find",         "rfind",
                          "index",      "rindex",  "count",   "join",       "format",  "removeprefix", "removesuffix",
                          "splitlines", "isdigit", "isalpha", "isalnum",    "isspace"});
  else if (obj.is_mapping())
    known = is_any(name, {"items", "keys", "values", "get", "copy"});
  else if (obj.is_list())
    known = is_any(name, {"index", "count"});
  if (!known) {
    bool mutates =
        (obj.is_list() && is_any(name, {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"})) ||
        (obj.is_mapping() && is_any(name, {"pop", "popitem", "setdefault", "update", "clear"}));
    if (mutates)
      return Value::undefined(
          fmt::format("{}.{} (a sandboxed template may not modify a {})", obj.type_name(), name, obj.type_name()));
    return Value::undefined(name);
  }
  return Value::function(name, [obj, name](CallArgs& a) -> Value {
    if (obj.is_string()) return str_method(obj.as_string(), name, a);
    if (obj.is_dict()) return dict_method(obj, name, a);
    return list_method(obj, name, a);
  });
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) fail(fmt::format("'in <string>' requires string as left operand, not {}", item.type_name()));
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_list()) {
    const auto& items = container.as_list().items;
    return std::any_of(items.begin(), items.end(), [&](const Value& v) { return equal(v, item); });
  }
  if (container.is_mapping()) return item.is_string() && container.as_dict().find(item.as_string());
  if (container.is_undefined()) return false;
  fail(fmt::format("argument of type '{}' is not iterable", container.type_name()));
}

void add_builtin_globals(Scope& g) {
  g.set("range", Value::function("range", [](CallArgs& a) {
          a.expect("range", 3, {});
          for (const Value& v : a.args)
            if (!v.is_int() && !v.is_bool())
              fail(fmt::format("'{}' object cannot be interpreted as an integer", v.type_name()));
          if (a.args.empty()) fail("range expected at least 1 argument, got 0");
          int64_t start = a.args.size() > 1 ? a.args[0].as_int() : 0;
          int64_t stop = a.args.size() > 1 ? a.args[1].as_int() : a.args[0].as_int();
          int64_t step = a.args.size() > 2 ? a.args[2].as_int() : 1;
          if (step == 0) fail("range() arg 3 must not be zero");
          __int128 span = __int128(stop) - start, n = 0;
          if ((span > 0 && step > 0) || (span < 0 && step < 0)) n = (span + step + (step > 0 ? -1 : 1)) / step;
          if (n > 100000) fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
          std::vector<Value> out;
          for (__int128 k = 0; k < n; ++k) out.emplace_back(int64_t(start + k * step));
          if (a.ev) a.ev->charge(out.size());
          return Value::list(std::move(out));
        }));
  g.set("dict", Value::function("dict", [](CallArgs& a) {
          a.expect("dict", 0, {});
          std::vector<std::pair<std::string, Value>> items(a.kwargs.begin(), a.kwargs.end());
          return Value::dict(std::move(items));
        }));
  g.set("namespace", Value::function("namespace", [](CallArgs& a) {
          std::vector<std::pair<std::string, Value>> items;
          if (!a.args.empty()) {
            if (a.args.size() > 1 || !a.args[0].is_mapping())
              fail("namespace() takes one mapping and keyword arguments");
            items = a.args[0].as_dict().items;
          }
          items.insert(items.end(), a.kwargs.begin(), a.kwargs.end());
          for (const auto& [k, v] : items)
            if (v.is_namespace() || v.is_function())
              fail("a namespace attribute cannot hold a namespace or a function");
          return Value::namespace_(std::move(items));
        }));
}

}  // namespace vkllm::jinja
