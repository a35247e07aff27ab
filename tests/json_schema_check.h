// An independent JSON Schema validator for the tests (no code shared with the grammar compiler):
// the keywords vkllm's schema compiler supports, checked on a parsed value. Returns "" when the
// value is valid, else where and why it is not.
#pragma once
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

namespace vkllm::test {

class SchemaCheck {
 public:
  using json = nlohmann::ordered_json;
  explicit SchemaCheck(const json& root) : root_(root) {}

  std::string check(const json& v) const { return check(v, root_, "$"); }

 private:
  static size_t code_points(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  }

  // "#" or a JSON pointer into the document ("#/$defs/a", ~0 ~1 and %XX escapes decoded).
  const json& resolve(const std::string& ref) const {
    if (ref.rfind("#", 0) != 0) throw std::runtime_error("unsupported $ref " + ref);
    const json* at = &root_;
    std::string rest = ref.substr(1);
    while (!rest.empty()) {
      rest.erase(0, 1);  // the '/'
      size_t end = rest.find('/');
      std::string raw = rest.substr(0, end), key;
      rest = end == std::string::npos ? "" : rest.substr(end);
      for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '~' && i + 1 < raw.size())
          key += raw[++i] == '0' ? '~' : '/';
        else if (raw[i] == '%' && i + 2 < raw.size())
          key += char(std::stoi(raw.substr(i + 1, 2), nullptr, 16)), i += 2;
        else
          key += raw[i];
      }
      at = at->is_array() ? &(*at)[std::stoul(key)] : &(*at)[key];
    }
    return *at;
  }

  // JSON Schema's equality: numbers by value, objects whatever their keys' order.
  static bool equal(const json& a, const json& b) {
    if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
    if (a.type() != b.type()) return false;
    if (a.is_array()) {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (!equal(a[i], b[i])) return false;
      return true;
    }
    if (a.is_object()) {
      if (a.size() != b.size()) return false;
      for (const auto& [k, x] : a.items())
        if (!b.contains(k) || !equal(x, b[k])) return false;
      return true;
    }
    return a == b;
  }

  static bool has_type(const json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer")
      return v.is_number_integer() || (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()));
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    return false;
  }

  std::string check(const json& v, const json& s, const std::string& at) const {
    if (s.is_boolean()) return s.get<bool>() ? "" : at + ": schema false";
    if (s.contains("$ref"))
      if (std::string e = check(v, resolve(s["$ref"].get<std::string>()), at); !e.empty()) return e;
    if (s.contains("const") && !equal(v, s["const"])) return at + ": not the const " + s["const"].dump();
    if (s.contains("enum")) {
      bool found = false;
      for (const json& e : s["enum"]) found = found || equal(e, v);
      if (!found) return at + ": not one of the enum " + s["enum"].dump();
    }
    for (const char* key : {"anyOf", "oneOf"})
      if (s.contains(key)) {
        int ok = 0;
        for (const json& alt : s[key]) ok += check(v, alt, at).empty();
        if (ok == 0 || (std::string(key) == "oneOf" && ok != 1))
          return at + ": " + key + " matched " + std::to_string(ok);
      }
    if (s.contains("allOf"))
      for (const json& part : s["allOf"])
        if (std::string e = check(v, part, at); !e.empty()) return e;
    if (s.contains("type")) {
      bool ok = false;
      if (s["type"].is_array())
        for (const json& t : s["type"]) ok = ok || has_type(v, t.get<std::string>());
      else
        ok = has_type(v, s["type"].get<std::string>());
      if (!ok) return at + ": not of type " + s["type"].dump();
    }
    if (v.is_object()) return check_object(v, s, at);
    if (v.is_array()) return check_array(v, s, at);
    if (v.is_string()) return check_string(v.get<std::string>(), s, at);
    if (v.is_number()) return check_number(v.get<double>(), s, at);
    return "";
  }

  std::string check_object(const json& v, const json& s, const std::string& at) const {
    if (s.contains("required"))
      for (const json& r : s["required"])
        if (!v.contains(r.get<std::string>())) return at + ": missing required " + r.dump();
    for (const auto& [k, x] : v.items()) {
      if (s.contains("properties") && s["properties"].contains(k)) {
        if (std::string e = check(x, s["properties"][k], at + "." + k); !e.empty()) return e;
      } else if (s.contains("additionalProperties")) {
        if (std::string e = check(x, s["additionalProperties"], at + "." + k); !e.empty()) return e;
      }
    }
    return "";
  }

  std::string check_array(const json& v, const json& s, const std::string& at) const {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return at + ": fewer than minItems";
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return at + ": more than maxItems";
    size_t prefix = s.contains("prefixItems") ? s["prefixItems"].size() : 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const json* item = i < prefix ? &s["prefixItems"][i] : s.contains("items") ? &s["items"] : nullptr;
      if (item)
        if (std::string e = check(v[i], *item, at + "[" + std::to_string(i) + "]"); !e.empty()) return e;
    }
    return "";
  }

  std::string check_string(const std::string& x, const json& s, const std::string& at) const {
    size_t n = code_points(x);
    if (s.contains("minLength") && n < s["minLength"].get<size_t>()) return at + ": shorter than minLength";
    if (s.contains("maxLength") && n > s["maxLength"].get<size_t>()) return at + ": longer than maxLength";
    if (s.contains("format")) {
      std::string f = s["format"], date = R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]))",
                  time = R"(([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))";
      std::string re = f == "date"        ? date
                       : f == "time"      ? time
                       : f == "date-time" ? date + "T" + time
                       : f == "uuid" ? "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
                                     : ".*";
      if (!std::regex_match(x, std::regex(re))) return at + ": not a " + f;
    }
    return "";
  }

  std::string check_number(double x, const json& s, const std::string& at) const {
    if (s.contains("minimum") && x < s["minimum"].get<double>()) return at + ": below minimum";
    if (s.contains("maximum") && x > s["maximum"].get<double>()) return at + ": above maximum";
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>())
      return at + ": not above exclusiveMinimum";
    if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>())
      return at + ": not below exclusiveMaximum";
    return "";
  }

  const json& root_;
};

}  // namespace vkllm::test
