// The JSON Schema compiler: one grammar rule per schema node (named after its path), primitives
// added once when first used, $ref targets compiled once and shared.
#include "text/grammar/json_schema_grammar.h"

#include <fmt/format.h>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "error.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema_numbers.h"

namespace vkllm::grammar {

using json = nlohmann::ordered_json;

namespace {

// name -> (body, rules it uses)
const std::map<std::string, std::pair<std::string, std::vector<std::string>>> kPrimitives = {
    {"ws", {"| \" \" | \"\\n\" [ \\t]{0,20}", {}}},
    {"value",
     {"object | array | string | number | boolean | null", {"object", "array", "string", "number", "boolean", "null"}}},
    {"object",
     {"\"{\" ws ( string \":\" ws value ( \",\" ws string \":\" ws value )* )? \"}\" ws", {"ws", "string", "value"}}},
    {"array", {"\"[\" ws ( value ( \",\" ws value )* )? \"]\" ws", {"ws", "value"}}},
    {"string", {"\"\\\"\" char* \"\\\"\" ws", {"char", "ws"}}},
    {"char", {"[^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} )", {}}},
    {"integral", {"\"0\" | [1-9] [0-9]{0,15}", {}}},
    {"number", {"\"-\"? integral ( \".\" [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,2} )? ws", {"integral", "ws"}}},
    {"integer", {"\"-\"? integral ws", {"integral", "ws"}}},
    {"boolean", {"( \"true\" | \"false\" ) ws", {"ws"}}},
    {"null", {"\"null\" ws", {"ws"}}},
    {"date", {"[0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [12] [0-9] | \"3\" [01] )", {}}},
    {"time",
     {"( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{1,6} )? ( \"Z\" | [+-] ( [01] "
      "[0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )",
      {}}},
    {"uuid",
     {"[0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12}", {}}},
};

// Keywords whose meaning a grammar cannot (or vkllm does not) enforce: refused, not ignored.
const char* const kUnsupported[] = {"pattern",
                                    "patternProperties",
                                    "propertyNames",
                                    "uniqueItems",
                                    "contains",
                                    "minContains",
                                    "maxContains",
                                    "not",
                                    "if",
                                    "then",
                                    "else",
                                    "multipleOf",
                                    "dependentRequired",
                                    "dependentSchemas",
                                    "dependencies",
                                    "minProperties",
                                    "maxProperties",
                                    "unevaluatedProperties",
                                    "unevaluatedItems",
                                    "$dynamicRef"};

}  // namespace

// --- GrammarBuilder

std::string GrammarBuilder::schema(const json& root, const std::string& name) {
  root_ = &root;
  top_ = name;
  ref_rules_.clear();
  expanding_.clear();
  return visit(root, name, 0);
}

std::string GrammarBuilder::text(const std::string& root_body) const {
  std::string out = fmt::format("root ::= {}\n", root_body);
  for (const std::string& name : order_) out += fmt::format("{} ::= {}\n", name, rules_.at(name));
  return out;
}

void GrammarBuilder::fail(const std::string& where, const std::string& what) const {
  throw Error(fmt::format("json schema{}: {}", where == top_ ? "" : " at '" + where + "'", what));
}

std::string GrammarBuilder::primitive(const std::string& name) {
  if (rules_.count(name)) return name;
  const auto& [body, deps] = kPrimitives.at(name);
  rule(name, body);
  for (const std::string& d : deps) primitive(d);
  return name;
}

// Adds a rule under `name` (made unique); returns the name used.
std::string GrammarBuilder::rule(std::string name, const std::string& body) {
  std::string unique = name;
  for (int k = 2; rules_.count(unique); ++k) unique = fmt::format("{}-{}", name, k);
  rules_[unique] = body;
  order_.push_back(unique);
  return unique;
}

std::string GrammarBuilder::child(const std::string& name, const std::string& part) {
  std::string clean;
  for (char c : part) clean += std::isalnum(uint8_t(c)) ? c : '-';
  if (clean.size() > 32) clean.resize(32);
  return name + "-" + clean;
}

std::string GrammarBuilder::literal_value(const json& v) { return gbnf_literal(v.dump()) + " " + primitive("ws"); }

std::string GrammarBuilder::visit(const json& s, const std::string& name, int depth) {
  if (depth > kMaxSchemaDepth) fail(name, fmt::format("nested deeper than {} levels", kMaxSchemaDepth));
  if (s.is_boolean()) {
    if (!s.get<bool>()) fail(name, "the schema 'false' matches nothing");
    return primitive("value");
  }
  if (!s.is_object()) fail(name, "a schema must be an object or a boolean");
  for (const char* k : kUnsupported)
    if (s.contains(k)) fail(name, fmt::format("'{}' is not supported (a grammar cannot enforce it)", k));
  if (s.contains("$ref")) return visit_ref(s["$ref"], name, depth);
  if (s.contains("const")) return rule(name, literal_value(s["const"]));
  if (s.contains("enum")) {
    const json& e = s["enum"];
    if (!e.is_array() || e.empty()) fail(name, "'enum' must be a non-empty array");
    std::string body;
    for (const json& v : e) body += (body.empty() ? "" : " | ") + literal_value(v);
    return rule(name, body);
  }
  for (const char* key : {"anyOf", "oneOf"})
    if (s.contains(key)) {
      const json& alts = s[key];
      if (!alts.is_array() || alts.empty()) fail(name, fmt::format("'{}' must be a non-empty array", key));
      std::string body;
      for (size_t i = 0; i < alts.size(); ++i)
        body += (i ? " | " : "") + visit(alts[i], child(name, std::to_string(i)), depth + 1);
      return rule(name, body);
    }
  if (s.contains("allOf")) return visit(merge_all_of(s, name), name, depth + 1);
  const json* type = s.contains("type") ? &s["type"] : nullptr;
  if (type && type->is_array()) {
    if (type->empty()) fail(name, "'type' is an empty list");
    std::string body;
    for (const json& t : *type) {
      json one = s;
      one["type"] = t;
      body +=
          (body.empty() ? "" : " | ") + visit(one, child(name, t.is_string() ? t.get<std::string>() : "t"), depth + 1);
    }
    return rule(name, body);
  }
  std::string t = type ? (type->is_string() ? type->get<std::string>() : "?") : "";
  if (t.empty() && (s.contains("properties") || s.contains("additionalProperties") || s.contains("required")))
    t = "object";
  if (t.empty() && (s.contains("items") || s.contains("prefixItems"))) t = "array";
  if (t.empty()) return primitive("value");
  if (t == "object") return visit_object(s, name, depth);
  if (t == "array") return visit_array(s, name, depth);
  if (t == "string") return visit_string(s, name);
  if (t == "integer" || t == "number") return visit_number(s, name, t == "integer");
  if (t == "boolean" || t == "null") return primitive(t);
  fail(name, fmt::format("unknown type {}", type->dump()));
}

std::string GrammarBuilder::visit_ref(const json& ref, const std::string& name, int depth) {
  if (!ref.is_string()) fail(name, "'$ref' must be a string");
  std::string r = ref.get<std::string>();
  if (auto it = ref_rules_.find(r); it != ref_rules_.end()) return it->second;
  if (expanding_.count(r)) fail(name, fmt::format("the schema is recursive: '{}' refers back to itself", r));
  const json* target = resolve(r, name);
  expanding_.insert(r);
  std::string rule = visit(*target, child("ref", r.substr(r.rfind('/') + 1)), depth + 1);
  expanding_.erase(r);
  ref_rules_[r] = rule;
  return rule;
}

const GrammarBuilder::json* GrammarBuilder::resolve(const std::string& ref, const std::string& name) const {
  if (ref == "#") return root_;
  for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
    std::string p = prefix;
    if (ref.rfind(p, 0) != 0) continue;
    std::string section = p.substr(2, p.size() - 3), key = ref.substr(p.size());
    if (root_->contains(section) && (*root_)[section].is_object() && (*root_)[section].contains(key))
      return &(*root_)[section][key];
    fail(name, fmt::format("'$ref' {} names no definition", ref));
  }
  fail(name, fmt::format("'$ref' {} is not supported (only #/$defs/NAME and #/definitions/NAME)", ref));
}

GrammarBuilder::json GrammarBuilder::merge_all_of(const json& s, const std::string& name) {
  const json& parts = s["allOf"];
  if (!parts.is_array() || parts.empty()) fail(name, "'allOf' must be a non-empty array");
  json merged = {{"type", "object"}, {"properties", json::object()}, {"required", json::array()}};
  for (const json& raw : parts) {
    const json* p = &raw;
    if (p->is_object() && p->contains("$ref")) p = resolve((*p)["$ref"].get<std::string>(), name);
    if (!p->is_object() || !p->contains("properties"))
      fail(name, "'allOf' is supported only over object schemas with properties");
    for (const auto& [k, v] : (*p)["properties"].items()) merged["properties"][k] = v;
    if (p->contains("required"))
      for (const json& r : (*p)["required"]) merged["required"].push_back(r);
  }
  return merged;
}

std::string GrammarBuilder::visit_object(const json& s, const std::string& name, int depth) {
  const json empty = json::object();
  const json& props = s.contains("properties") ? s["properties"] : empty;
  if (!props.is_object()) fail(name, "'properties' must be an object");
  std::set<std::string> required;
  if (s.contains("required")) {
    if (!s["required"].is_array()) fail(name, "'required' must be an array of names");
    for (const json& r : s["required"]) {
      if (!r.is_string() || !props.contains(r.get<std::string>()))
        fail(name, fmt::format("'required' names {}, which is not in 'properties'", r.dump()));
      required.insert(r.get<std::string>());
    }
  }
  std::string ws = primitive("ws");
  std::vector<std::pair<std::string, bool>> kvs;  // (key: value, required) in the schema's order
  for (const auto& [key, sub] : props.items())
    kvs.emplace_back(fmt::format("{} {} \":\" {} {}", gbnf_literal(json(key).dump()), ws, ws,
                                 visit(sub, child(name, key), depth + 1)),
                     required.count(key) > 0);
  std::string extra;  // a rule for additional properties, or ""
  const json additional = s.contains("additionalProperties") ? s["additionalProperties"] : json(false);
  if (!(additional.is_boolean() && !additional.get<bool>())) {
    std::string v = additional.is_boolean() ? primitive("value") : visit(additional, child(name, "extra"), depth + 1);
    extra = rule(child(name, "extra-kv"), fmt::format("{} \":\" {} {}", primitive("string"), ws, v));
  }
  // Properties in the schema's order, the optional ones possibly absent, commas only between
  // those present: after[i] is the rest from property i once one was written (so each starts
  // with a comma), first[i] the rest from i while none was. Extra properties come last.
  size_t n = kvs.size();
  std::vector<std::string> after(n + 1), first(n + 1);
  after[n] = extra.empty() ? "\"\"" : fmt::format("( \",\" {} {} )*", ws, extra);
  first[n] = extra.empty() ? "\"\"" : fmt::format("( {} {} )?", extra, after[n]);
  for (size_t i = n; i-- > 0;) {
    const auto& [kv, req] = kvs[i];
    after[i] = rule(child(name, "after"), req ? fmt::format("\",\" {} {} {}", ws, kv, after[i + 1])
                                              : fmt::format("( \",\" {} {} )? {}", ws, kv, after[i + 1]));
    first[i] = rule(child(name, "first"), req ? fmt::format("{} {}", kv, after[i + 1])
                                              : fmt::format("{} {} | {}", kv, after[i + 1], first[i + 1]));
  }
  return rule(name, fmt::format("\"{{\" {} {} \"}}\" {}", ws, first[0], ws));
}

int64_t GrammarBuilder::count(const json& s, const char* key, int64_t fallback, const std::string& name) const {
  if (!s.contains(key)) return fallback;
  const json& v = s[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0) fail(name, fmt::format("'{}' must be an integer >= 0", key));
  if (v.get<int64_t>() > int64_t(kMaxRepetition))
    fail(name, fmt::format("'{}' above {} is not supported", key, kMaxRepetition));
  return v.get<int64_t>();
}

// lo to hi (-1: unbounded) copies of x separated by sep, as grammar text.
std::string GrammarBuilder::repetition(const std::string& x, int64_t lo, int64_t hi, const std::string& sep) {
  if (hi == 0) return "";
  int64_t more = std::max<int64_t>(lo - 1, 0);
  std::string rest =
      hi < 0 ? fmt::format("( {} {} ){{{},}}", sep, x, more) : fmt::format("( {} {} ){{{},{}}}", sep, x, more, hi - 1);
  std::string seq = x + " " + rest;
  return lo == 0 ? "( " + seq + " )?" : seq;
}

std::string GrammarBuilder::visit_array(const json& s, const std::string& name, int depth) {
  std::string ws = primitive("ws"), sep = fmt::format("\",\" {}", ws);
  int64_t lo = count(s, "minItems", 0, name), hi = count(s, "maxItems", -1, name);
  if (hi >= 0 && hi < lo) fail(name, "'maxItems' is below 'minItems'");
  std::string body = fmt::format("\"[\" {} ", ws);
  if (s.contains("prefixItems")) {
    const json& prefix = s["prefixItems"];
    if (!prefix.is_array()) fail(name, "'prefixItems' must be an array");
    for (size_t i = 0; i < prefix.size(); ++i)
      body += (i ? sep + " " : "") + visit(prefix[i], child(name, std::to_string(i)), depth + 1) + " ";
    bool more = s.contains("items") && !(s["items"].is_boolean() && !s["items"].get<bool>());
    if (more) body += fmt::format("( {} {} )*", sep, visit(s["items"], child(name, "item"), depth + 1));
  } else {
    std::string item = s.contains("items") ? visit(s["items"], child(name, "item"), depth + 1) : primitive("value");
    body += repetition(item, lo, hi, sep);
  }
  return rule(name, body + fmt::format(" \"]\" {}", ws));
}

std::string GrammarBuilder::visit_string(const json& s, const std::string& name) {
  std::string ws = primitive("ws");
  if (s.contains("format") && s["format"].is_string()) {
    std::string f = s["format"].get<std::string>();
    if (f == "date" || f == "time" || f == "uuid")
      return rule(name, fmt::format("\"\\\"\" {} \"\\\"\" {}", primitive(f), ws));
    if (f == "date-time")
      return rule(name, fmt::format("\"\\\"\" {} \"T\" {} \"\\\"\" {}", primitive("date"), primitive("time"), ws));
    // other formats (email, uri, ...) are annotations here: any string
  }
  int64_t lo = count(s, "minLength", 0, name), hi = count(s, "maxLength", -1, name);
  if (hi >= 0 && hi < lo) fail(name, "'maxLength' is below 'minLength'");
  if (lo == 0 && hi < 0) return primitive("string");
  std::string chars = hi < 0 ? fmt::format("char{{{},}}", lo) : fmt::format("char{{{},{}}}", lo, hi);
  primitive("char");
  return rule(name, fmt::format("\"\\\"\" {} \"\\\"\" {}", chars, ws));
}

// A bound as an integer: for integers fractional bounds round inwards; for numbers they must be
// whole (the grammar compares integer parts).
std::optional<NumberBound> GrammarBuilder::bound(const json& s, const char* key, const char* exclusive, bool lower,
                                                 bool integer, const std::string& name) {
  const json* v = s.contains(exclusive) && s[exclusive].is_number() ? &s[exclusive] : nullptr;
  bool excl = v != nullptr;
  if (!v && s.contains(key)) v = &s[key];
  if (!v) return std::nullopt;
  if (!v->is_number()) fail(name, fmt::format("'{}' must be a number", excl ? exclusive : key));
  double x = v->get<double>();
  if (!(std::fabs(x) < 9e18)) fail(name, fmt::format("'{}' is out of range", excl ? exclusive : key));
  if (integer) {
    double r = lower ? std::ceil(x) : std::floor(x);
    if (excl && r == x) r += lower ? 1 : -1;
    return NumberBound{int64_t(r), false};
  }
  if (x != std::floor(x))
    fail(name, fmt::format("'{}' must be a whole number for type number", excl ? exclusive : key));
  return NumberBound{int64_t(x), excl};
}

std::string GrammarBuilder::visit_number(const json& s, const std::string& name, bool integer) {
  auto lo = bound(s, "minimum", "exclusiveMinimum", true, integer, name);
  auto hi = bound(s, "maximum", "exclusiveMaximum", false, integer, name);
  if (!lo && !hi) return primitive(integer ? "integer" : "number");
  std::string body;
  if (integer) {
    std::optional<int64_t> a, b;
    if (lo) a = lo->value;
    if (hi) b = hi->value;
    body = integer_range_gbnf(a, b);
  } else {
    body = number_range_gbnf(lo, hi);
  }
  if (body.empty()) fail(name, "no number lies between 'minimum' and 'maximum'");
  return rule(name, body + " " + primitive("ws"));
}

std::string gbnf_literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    uint8_t b = uint8_t(c);
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (b < 0x20)
      out += fmt::format("\\x{:02X}", b);
    else
      out += c;
  }
  return out + "\"";
}

std::string json_schema_gbnf(const json& schema) {
  GrammarBuilder b;
  return b.text(b.schema(schema, "schema"));
}

std::string json_object_gbnf() { return json_schema_gbnf(json{{"type", "object"}, {"additionalProperties", true}}); }

}  // namespace vkllm::grammar
