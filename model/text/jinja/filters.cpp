// jinja2's filters and tests (jinja2/filters.py, jinja2/tests.py) over Values, with Hugging
// Face's tojson. Filters take soft strings where jinja2 does: `none|upper` is "NONE".
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "text/jinja/builtins.h"

namespace vkllm::jinja {

namespace {

std::string ascii_map(std::string s, int (*f)(int)) {
  for (char& c : s)
    if (uint8_t(c) < 0x80) c = char(f(c));
  return s;
}
std::string lower(const std::string& s) {
  return ascii_map(s, [](int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; });
}
std::string upper(const std::string& s) {
  return ascii_map(s, [](int c) { return c >= 'a' && c <= 'z' ? c - 32 : c; });
}

int64_t length(const Value& v) {
  switch (v.type()) {
    case Value::Type::Undefined:
      return 0;
    case Value::Type::String:
      return int64_t(utf8_length(v.as_string()));
    case Value::Type::List:
      if (v.is_generator()) break;
      return int64_t(v.as_list().items.size());
    case Value::Type::Dict:
      if (!v.is_namespace()) return int64_t(v.as_dict().items.size());
      break;
    default:
      break;
  }
  fail(fmt::format("object of type '{}' has no len()", v.type_name()));
}

// jinja2's make_attrgetter: "a.b.0" looks up a, then b, then item 0.
Value lookup_path(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  for (;;) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    v = digits && part.size() < 18 ? get_item(v, Value(int64_t(std::stoll(part)))) : get_item(v, Value(part));
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

// The key a sort, min, max or unique compares: an attribute, lowercased unless case_sensitive.
Value sort_key(const Value& item, const Value& attribute, bool case_sensitive) {
  Value v = attribute.is_undefined() || attribute.is_none() ? item : lookup_path(item, to_str(attribute));
  if (!case_sensitive && v.is_string()) return Value(lower(v.as_string()));
  return v;
}

std::vector<Value> sorted(std::vector<Value> items, const CallArgs& a, size_t first_arg) {
  bool reverse = a.get(first_arg, "reverse").truthy();
  bool cs = a.get(first_arg + 1, "case_sensitive").truthy();
  Value attr = a.get(first_arg + 2, "attribute");
  std::vector<std::pair<Value, Value>> keyed;
  for (Value& v : items) keyed.emplace_back(sort_key(v, attr, cs), std::move(v));
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? compare(y.first, x.first) < 0 : compare(x.first, y.first) < 0;
  });
  std::vector<Value> out;
  for (auto& [k, v] : keyed) out.push_back(std::move(v));
  return out;
}

Value min_max(const Value& v, const CallArgs& a, bool want_max) {
  std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined("min/max of an empty sequence");
  bool cs = a.get(0, "case_sensitive").truthy();
  Value attr = a.get(1, "attribute");
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    int c = compare(sort_key(items[i], attr, cs), sort_key(items[best], attr, cs));
    if (want_max ? c > 0 : c < 0) best = i;
  }
  return items[best];
}

Value tojson(const Value& v, const CallArgs& a) {
  a.expect("tojson", 1, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonOptions o;
  Value indent = a.get(0, "indent");
  if (indent.is_int())
    o.indent = int(std::clamp<int64_t>(indent.as_int(), 0, 64));
  else if (!indent.is_undefined() && !indent.is_none())
    fail("tojson: indent must be an integer");
  if (o.indent >= 0) o.item_sep = ",";
  Value seps = a.get(99, "separators");
  if (seps.is_list() && seps.as_list().items.size() == 2) {
    o.item_sep = to_str(seps.as_list().items[0]);
    o.key_sep = to_str(seps.as_list().items[1]);
  }
  o.ensure_ascii = a.get(99, "ensure_ascii").truthy();
  o.sort_keys = a.get(99, "sort_keys").truthy();
  return Value(to_json(v, o));
}

std::string indent(const std::string& s, const CallArgs& a) {
  Value w = a.get(0, "width");
  std::string pad = w.is_string()
                        ? w.as_string()
                        : std::string(size_t(std::clamp<int64_t>(w.is_undefined() ? 4 : w.as_int(), 0, 256)), ' ');
  bool first = a.get(1, "first").truthy(), blank = a.get(2, "blank").truthy();
  std::vector<std::string> lines;
  size_t start = 0;
  std::string text = s + "\n";
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n' || text[i] == '\r') {
      lines.push_back(text.substr(start, i - start));
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      start = i + 1;
    }
  std::string out = lines[0];
  for (size_t i = 1; i < lines.size(); ++i) out += "\n" + ((blank || !lines[i].empty()) ? pad : "") + lines[i];
  return first ? pad + out : out;
}

Value select(Evaluator& ev, const Value& v, CallArgs& a, bool attr, bool keep) {
  std::vector<Value> out;
  if (!v.truthy()) return Value::generator({});  // jinja2: `if value:` before iterating
  size_t k = attr ? 1 : 0;
  std::string test = a.args.size() > k ? to_str(a.args[k]) : "";
  CallArgs targs;
  targs.ev = &ev;
  if (a.args.size() > k + 1) targs.args.assign(a.args.begin() + long(k) + 1, a.args.end());
  for (const Value& item : iterate(v)) {
    Value x = attr ? lookup_path(item, to_str(a.get(0, "attribute"))) : item;
    bool ok = test.empty() ? x.truthy() : apply_test(ev, test, x, targs);
    if (ok == keep) out.push_back(item);
  }
  return Value::generator(std::move(out));
}

Value map(Evaluator& ev, const Value& v, CallArgs& a) {
  std::vector<Value> out;
  if (!v.truthy()) return Value::generator({});  // jinja2: `if value:` before iterating
  if (a.args.empty()) {
    std::string attr = to_str(a.get(99, "attribute"));
    Value dflt = a.get(99, "default");
    for (const Value& item : iterate(v)) {
      Value x = lookup_path(item, attr);
      out.push_back(x.is_undefined() && !dflt.is_undefined() ? dflt : x);
    }
    return Value::generator(std::move(out));
  }
  std::string name = to_str(a.args[0]);
  CallArgs fargs;
  fargs.ev = &ev;
  fargs.args.assign(a.args.begin() + 1, a.args.end());
  fargs.kwargs = a.kwargs;
  for (const Value& item : iterate(v)) out.push_back(apply_filter(ev, name, item, fargs));
  return Value::generator(std::move(out));
}

Value to_int(const Value& v, const CallArgs& a) {
  Value dflt = a.has(0, "default") ? a.get(0, "default") : Value(int64_t(0));
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.is_float())
    return std::isfinite(v.as_float()) && std::fabs(v.as_float()) < 9.2e18 ? Value(int64_t(v.as_float())) : dflt;
  if (!v.is_string()) return dflt;
  std::string s(strip_spaces(v.as_string(), true, true));
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  char* end = nullptr;
  errno = 0;
  long long i = std::strtoll(s.c_str(), &end, 10);
  if (!s.empty() && *end == 0 && errno == 0) return Value(int64_t(i));
  double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == 0 && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value(int64_t(d));
  return dflt;
}

Value to_float(const Value& v, const CallArgs& a) {
  Value dflt = a.has(0, "default") ? a.get(0, "default") : Value(0.0);
  if (v.is_number()) return Value(v.as_float());
  if (!v.is_string()) return dflt;
  std::string s(strip_spaces(v.as_string(), true, true));
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == 0 ? Value(d) : dflt;
}

Value first_or_last(const Value& v, bool last) {
  std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined(last ? "last item" : "first item");
  return last ? items.back() : items.front();
}

Value sum(const Value& v, const CallArgs& a, Evaluator& ev) {
  Value attr = a.get(0, "attribute");
  Value total = a.has(1, "start") ? a.get(1, "start") : Value(int64_t(0));
  for (const Value& item : iterate(v)) {
    Value x = attr.is_undefined() ? item : lookup_path(item, to_str(attr));
    if (!total.is_number() || !x.is_number()) fail("sum: unsupported operand types");
    int64_t r = 0;
    if (total.is_float() || x.is_float())
      total = Value(total.as_float() + x.as_float());
    else if (__builtin_add_overflow(total.as_int(), x.as_int(), &r))
      fail("integer overflow");
    else
      total = Value(r);
    ev.charge(1);
  }
  return total;
}

}  // namespace

Value apply_filter(Evaluator& ev, const std::string& name, const Value& v, CallArgs& a) {
  if (name == "tojson") return tojson(v, a);
  if (name == "length" || name == "count") return Value(length(v));
  if (name == "trim") {
    Value chars = a.get(0, "chars");
    std::string s = to_str(v);
    if (chars.is_undefined() || chars.is_none()) {
      std::string t(strip_spaces(s, true, true));
      return v.is_markup() ? Value::markup(std::move(t)) : Value(std::move(t));
    }
    return method(Value(s), "strip").as_function().call(a);
  }
  if (name == "string") return v.is_markup() ? v : Value(to_str(v));
  if (name == "safe") return v.is_markup() ? v : Value::markup(to_str(v));
  if (name == "upper") return Value(upper(to_str(v)));
  if (name == "lower") return Value(lower(to_str(v)));
  if (name == "capitalize" || name == "title") {
    CallArgs none;
    return method(Value(to_str(v)), name).as_function().call(none);
  }
  if (name == "default" || name == "d") {
    bool boolean = a.get(1, "boolean").truthy();
    bool use = v.is_undefined() || (boolean && !v.truthy());
    return use ? (a.has(0, "default_value") ? a.get(0, "default_value") : Value("")) : v;
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::generator({});
    if (!v.is_mapping()) fail("items: can only get item pairs from a mapping");
    CallArgs none;
    return Value::generator(method(v, "items").as_function().call(none).as_list().items);
  }
  if (name == "dictsort") {
    if (!v.is_mapping()) fail("dictsort: a mapping is needed");
    bool cs = a.get(0, "case_sensitive").truthy();
    bool by_value = to_str(a.get(1, "by")) == "value";
    bool reverse = a.get(2, "reverse").truthy();
    CallArgs none;
    std::vector<Value> pairs = iterate(method(v, "items").as_function().call(none));
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
      Value kx = sort_key(x.as_list().items[by_value], Value(), cs),
            ky = sort_key(y.as_list().items[by_value], Value(), cs);
      return reverse ? compare(ky, kx) < 0 : compare(kx, ky) < 0;
    });
    return Value::list(std::move(pairs));
  }
  if (name == "join") {
    Value attr = a.get(1, "attribute");
    std::string sep = a.has(0, "d") ? to_str(a.get(0, "d")) : "", out;
    bool first = true;
    for (const Value& item : iterate(v)) {
      std::string s = to_str(attr.is_undefined() ? item : lookup_path(item, to_str(attr)));
      ev.check_size(out.size() + sep.size() + s.size());
      out += (first ? "" : sep) + s;
      first = false;
    }
    return Value(std::move(out));
  }
  if (name == "first" || name == "last") return first_or_last(v, name == "last");
  if (name == "list") return Value::list(iterate(v));
  if (name == "unique") {
    std::vector<Value> out, seen;
    for (const Value& item : iterate(v)) {
      Value k = sort_key(item, a.get(1, "attribute"), a.get(0, "case_sensitive").truthy());
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, k); })) {
        seen.push_back(k);
        out.push_back(item);
      }
      ev.charge(seen.size());
    }
    return Value::generator(std::move(out));
  }
  if (name == "sort") return Value::list(sorted(iterate(v), a, 0));
  if (name == "min" || name == "max") return min_max(v, a, name == "max");
  if (name == "reverse") {
    if (v.is_string()) {
      std::vector<std::string_view> chars = utf8_chars(v.as_string());
      std::string out;
      for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
      return Value(std::move(out));
    }
    std::vector<Value> items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value::generator(std::move(items));
  }
  if (name == "map") return map(ev, v, a);
  if (name == "select" || name == "reject") return select(ev, v, a, false, name == "select");
  if (name == "selectattr" || name == "rejectattr") return select(ev, v, a, true, name == "selectattr");
  if (name == "replace") {
    CallArgs r;
    r.ev = &ev;
    r.args = {Value(to_str(a.get(0, "old"))), Value(to_str(a.get(1, "new")))};
    if (a.has(2, "count") && !a.get(2, "count").is_none()) r.args.push_back(a.get(2, "count"));
    return method(Value(to_str(v)), "replace").as_function().call(r);
  }
  if (name == "indent") return Value(indent(to_str(v), a));
  if (name == "int") return to_int(v, a);
  if (name == "float") return to_float(v, a);
  if (name == "abs") {
    if (!v.is_number()) fail(fmt::format("bad operand type for abs(): '{}'", v.type_name()));
    if (v.is_float()) return Value(std::fabs(v.as_float()));
    if (v.as_int() == INT64_MIN) fail("integer overflow");
    return Value(std::abs(v.as_int()));
  }
  if (name == "round") {
    if (!v.is_number()) fail("round: a number is needed");
    double p = std::pow(
        10.0, double(std::clamp<int64_t>(a.has(0, "precision") ? a.get(0, "precision").as_int() : 0, -20, 20)));
    std::string how = a.has(1, "method") ? to_str(a.get(1, "method")) : "common";
    double x = v.as_float() * p;
    x = how == "ceil" ? std::ceil(x) : how == "floor" ? std::floor(x) : std::round(x);
    return Value(x / p);
  }
  if (name == "sum") return sum(v, a, ev);
  if (name == "attr") return get_attr(v, to_str(a.get(0, "name")));
  if (name == "escape" || name == "e") return v.is_markup() ? v : Value::markup(escape_html(to_str(v)));
  if (name == "forceescape") return Value::markup(escape_html(to_str(v)));
  if (name == "format") return Value(percent_format(to_str(v), Value::list(a.args, true), ev));
  fail(fmt::format("no filter named '{}'", name));
}

bool apply_test(Evaluator& ev, const std::string& name, const Value& v, CallArgs& a) {
  (void)ev;
  Value arg = a.get(0, "other");
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_mapping();
  if (name == "iterable") return v.is_undefined() || v.is_string() || v.is_list() || v.is_mapping();
  if (name == "sequence")
    return v.is_undefined() || v.is_string() || (v.is_list() && !v.is_generator()) || v.is_mapping();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "callable") return v.is_function();
  if (name == "escaped") return false;
  if (name == "lower" || name == "upper") {
    std::string s = to_str(v);
    bool cased = std::any_of(s.begin(), s.end(), [](char c) { return std::isalpha(uint8_t(c)); });
    return cased && s == (name == "lower" ? lower(s) : upper(s));
  }
  if (name == "odd" || name == "even") {
    if (!v.is_number()) fail("odd/even: a number is needed");
    bool odd = v.is_float() ? std::fmod(std::fabs(v.as_float()), 2.0) == 1.0 : (v.as_int() & 1) != 0;
    return odd == (name == "odd");
  }
  if (name == "divisibleby") {
    arg = a.get(0, "num");
    if (!v.is_number() || !arg.is_number() || arg.as_float() == 0) fail("divisibleby: a non-zero number is needed");
    if (v.is_float() || arg.is_float()) return std::fmod(v.as_float(), arg.as_float()) == 0;
    return arg.as_int() == -1 || v.as_int() % arg.as_int() == 0;
  }
  if (name == "eq" || name == "equalto" || name == "==") return equal(v, arg);
  if (name == "ne" || name == "!=") return !equal(v, arg);
  if (name == "lt" || name == "lessthan" || name == "<") return compare(v, arg) < 0;
  if (name == "le" || name == "<=") return compare(v, arg) <= 0;
  if (name == "gt" || name == "greaterthan" || name == ">") return compare(v, arg) > 0;
  if (name == "ge" || name == ">=") return compare(v, arg) >= 0;
  if (name == "in") return contains(a.get(0, "seq"), v);
  if (name == "sameas") {  // identity: known for the singletons and namespaces only
    if (v.is_none() || v.is_bool() || v.is_namespace()) return v.type() == arg.type() && equal(v, arg);
    return false;
  }
  fail(fmt::format("no test named '{}'", name));
}

}  // namespace vkllm::jinja
