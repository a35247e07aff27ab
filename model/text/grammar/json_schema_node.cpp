// Reading a JSON schema into alternatives of per-kind constraints: the keywords of each kind, the
// applicators ($ref, allOf, anyOf, oneOf) as intersections and unions, enum/const as filtered
// values; then validation of a value, and disjointness of two alternatives.
#include "text/grammar/json_schema_node.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "error.h"
#include "text/grammar/gbnf.h"

namespace vkllm::grammar {

using json = SchemaJson;

namespace {

constexpr size_t kMaxWork = 200000;  // schemas read while compiling one (each read is small)

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
                                    "$dynamicRef",
                                    "$recursiveRef"};

// The string formats vkllm writes exactly, with the lengths of what it writes.
struct Format {
  const char* name;
  int64_t min_length, max_length;
};
const Format kFormats[] = {{"date", 10, 10}, {"time", 9, 21}, {"date-time", 20, 32}, {"uuid", 36, 36}};

const Format* find_format(const std::string& name) {
  for (const Format& f : kFormats)
    if (name == f.name) return &f;
  return nullptr;
}

uint8_t kind_named(const std::string& t) {
  if (t == "null") return kNull;
  if (t == "boolean") return kBoolean;
  if (t == "object") return kObject;
  if (t == "array") return kArray;
  if (t == "string") return kString;
  if (t == "integer") return kInteger;
  if (t == "number") return kNumber;
  return 0;
}

uint8_t kind_of(const json& v) {
  if (v.is_null()) return kNull;
  if (v.is_boolean()) return kBoolean;
  if (v.is_object()) return kObject;
  if (v.is_array()) return kArray;
  if (v.is_string()) return kString;
  if (v.is_number_float()) {
    double x = v.get<double>();
    return std::isfinite(x) && x == std::floor(x) ? kInteger : kFraction;
  }
  return kInteger;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// x and y as one schema: {"allOf": [x, y]}, or the one that says more when the other is true.
json all_of(const json& x, const json& y) {
  if (x == json(true) || x == y) return y;
  if (y == json(true)) return x;
  if (x == json(false) || y == json(false)) return false;
  return json{{"allOf", json::array({x, y})}};
}

bool contains(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

std::string child(const std::string& where, const std::string& part) {
  return where.empty() ? part : where + "/" + part;
}

// JSON pointer segment: ~1 is '/', ~0 is '~', %XX a byte.
std::string pointer_segment(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '~' && i + 1 < s.size() && (s[i + 1] == '0' || s[i + 1] == '1')) {
      out += s[++i] == '0' ? '~' : '/';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(uint8_t(s[i + 1])) &&
               std::isxdigit(uint8_t(s[i + 2]))) {
      out += char(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool json_equal(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    auto x = Decimal::of(a), y = Decimal::of(b);
    return x && y && !x->huge && !y->huge ? *x == *y : a == b;
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!json_equal(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a.items())
      if (!b.contains(k) || !json_equal(v, b[k])) return false;
    return true;
  }
  return a == b;
}

const json& SchemaNode::property(const std::string& name) const {
  for (const auto& [k, s] : properties)
    if (k == name) return s;
  return additional;
}

void SchemaReader::fail(const std::string& where, const std::string& what) const {
  throw Error(fmt::format("json schema{}: {}", where.empty() ? "" : " at '" + where + "'", what));
}

// --- keywords of one schema object

int64_t SchemaReader::count(const json& s, const char* key, const std::string& where) const {
  const json& v = s[key];
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != std::floor(v.get<double>()))
    fail(where, fmt::format("'{}' must be an integer >= 0", key));
  return v.get<double>() > 1e15 ? int64_t(1e15) : int64_t(v.get<double>());
}

void SchemaReader::type_keyword(const json& t, SchemaNode& n, const std::string& where) const {
  uint8_t kinds = 0;
  for (const json& one : t.is_array() ? t : json::array({t})) {
    uint8_t k = one.is_string() ? kind_named(one.get<std::string>()) : 0;
    if (!k) fail(where, fmt::format("unknown type {}", one.dump()));
    kinds |= k;
  }
  if (t.is_array() && t.empty()) fail(where, "'type' is an empty list");
  n.kinds &= kinds;
  n.typed = true;
}

void SchemaReader::number_keywords(const json& s, SchemaNode& n, const std::string& where) const {
  struct Bound {
    const char* key;
    bool lower, exclusive;
  };
  for (Bound b : {Bound{"minimum", true, false}, Bound{"exclusiveMinimum", true, true}, Bound{"maximum", false, false},
                  Bound{"exclusiveMaximum", false, true}}) {
    if (!s.contains(b.key)) continue;
    std::optional<Decimal> d = Decimal::of(s[b.key]);
    if (!d) fail(where, fmt::format("'{}' must be a number", b.key));
    if (b.lower)
      n.lo = tighter_lower(n.lo, NumberBound{*d, b.exclusive});
    else
      n.hi = tighter_upper(n.hi, NumberBound{*d, b.exclusive});
    n.constrained |= kNumber;
  }
}

void SchemaReader::array_keywords(const json& s, SchemaNode& n, const std::string& where) const {
  if (s.contains("prefixItems")) {
    if (!s["prefixItems"].is_array()) fail(where, "'prefixItems' must be an array of schemas");
    n.prefix = std::vector<json>(s["prefixItems"].begin(), s["prefixItems"].end());
    n.constrained |= kArray;
  }
  if (s.contains("items")) {
    if (s["items"].is_array())
      fail(where, "'items' must be a schema (an array of schemas is 'prefixItems' in JSON Schema 2020-12)");
    n.items = s["items"];
    n.constrained |= kArray;
  }
  if (s.contains("minItems")) n.min_items = count(s, "minItems", where), n.constrained |= kArray;
  if (s.contains("maxItems")) n.max_items = count(s, "maxItems", where), n.constrained |= kArray;
  if (n.min_items > int64_t(kMaxRepetition))
    fail(where, fmt::format("'minItems' above {} is not supported", kMaxRepetition));
}

void SchemaReader::object_keywords(const json& s, SchemaNode& n, const std::string& where) const {
  if (s.contains("properties")) {
    if (!s["properties"].is_object()) fail(where, "'properties' must be an object");
    for (const auto& [k, v] : s["properties"].items()) n.properties.emplace_back(k, v);
    n.constrained |= kObject;
  }
  if (s.contains("required")) {
    if (!s["required"].is_array()) fail(where, "'required' must be an array of names");
    for (const json& r : s["required"]) {
      if (!r.is_string()) fail(where, "'required' must be an array of names");
      if (!contains(n.required, r.get<std::string>())) n.required.push_back(r.get<std::string>());
    }
    n.constrained |= kObject;
  }
  if (s.contains("additionalProperties")) {
    n.additional = s["additionalProperties"];
    n.additional_given = true;
    n.constrained |= kObject;
  }
}

SchemaNode SchemaReader::keywords(const json& s, const std::string& where) {
  SchemaNode n;
  if (s.contains("type")) type_keyword(s["type"], n, where);
  number_keywords(s, n, where);
  if (s.contains("minLength")) n.min_length = count(s, "minLength", where), n.constrained |= kString;
  if (s.contains("maxLength")) n.max_length = count(s, "maxLength", where), n.constrained |= kString;
  if (n.min_length > int64_t(kMaxRepetition))
    fail(where, fmt::format("'minLength' above {} is not supported", kMaxRepetition));
  if (s.contains("format") && s["format"].is_string() && find_format(s["format"].get<std::string>())) {
    n.format = s["format"].get<std::string>();
    n.constrained |= kString;
  }
  array_keywords(s, n, where);
  object_keywords(s, n, where);
  return n;
}

// --- reading

std::vector<SchemaAlt> SchemaReader::read(const json& s, const std::string& where, int depth) {
  if (++work_ > kMaxWork) fail(where, "the schema is too complex to compile");
  if (depth > kMaxSchemaDepth) fail(where, fmt::format("nested deeper than {} levels", kMaxSchemaDepth));
  if (s.is_boolean()) {
    if (s.get<bool>()) return {SchemaAlt{}};
    why_ = "the schema 'false' matches nothing";
    return {};
  }
  if (!s.is_object()) fail(where, "a schema must be an object or a boolean");
  for (const char* k : kUnsupported)
    if (s.contains(k)) fail(where, fmt::format("'{}' is not supported (a grammar cannot enforce it)", k));
  if (&s != &root_ && s.contains("$id"))
    fail(where, "'$id' inside a schema is not supported (only references within the document, #/...)");
  std::vector<SchemaAlt> out = {SchemaAlt{keywords(s, where), {}}};
  if (s.contains("$ref")) out = intersect(out, read_ref(s["$ref"], where, depth), "$ref", where);
  if (s.contains("allOf")) {
    const json& parts = s["allOf"];
    if (!parts.is_array() || parts.empty()) fail(where, "'allOf' must be a non-empty array");
    for (size_t i = 0; i < parts.size(); ++i)
      out = intersect(out, read(parts[i], child(where, "allOf" + std::to_string(i)), depth + 1), "allOf", where);
  }
  for (const char* key : {"anyOf", "oneOf"})
    if (s.contains(key)) out = intersect(out, read_union(s, key, where, depth), key, where);
  if (s.contains("const") || s.contains("enum")) {
    if (s.contains("enum") && !s["enum"].is_array()) fail(where, "'enum' must be an array");
    std::vector<json> values;
    for (const json& v : s.contains("enum") ? s["enum"] : json::array({s["const"]}))
      if ((!s.contains("const") || json_equal(v, s["const"])) && admits(out, v)) values.push_back(v);
    if (values.empty()) why_ = "no value of 'enum' or 'const' satisfies the schema's other keywords";
    SchemaNode lit;
    lit.literals = std::move(values);
    out = lit.empty() ? std::vector<SchemaAlt>{} : std::vector<SchemaAlt>{SchemaAlt{std::move(lit), {}}};
  }
  return out;
}

// anyOf: any branch; oneOf: any branch, which must not match the others (kept as exclusions).
std::vector<SchemaAlt> SchemaReader::read_union(const json& s, const char* key, const std::string& where, int depth) {
  const json& branches = s[key];
  if (!branches.is_array() || branches.empty()) fail(where, fmt::format("'{}' must be a non-empty array", key));
  std::vector<std::vector<SchemaAlt>> each;
  for (size_t i = 0; i < branches.size(); ++i)
    each.push_back(read(branches[i], child(where, key + std::to_string(i)), depth + 1));
  std::vector<SchemaAlt> out;
  for (size_t i = 0; i < each.size(); ++i)
    for (SchemaAlt a : each[i]) {
      if (std::string(key) == "oneOf")
        for (size_t j = 0; j < each.size(); ++j)
          for (const SchemaAlt& other : each[j])
            if (j != i) a.excluded.push_back(other.node);
      out.push_back(std::move(a));
    }
  if (out.size() > kMaxSchemaAlternatives)
    fail(where, fmt::format("'{}' gives more than {} alternatives", key, kMaxSchemaAlternatives));
  if (out.empty()) why_ = fmt::format("no branch of '{}' matches anything", key);
  return out;
}

std::vector<SchemaAlt> SchemaReader::read_ref(const json& ref, const std::string& where, int depth) {
  if (!ref.is_string()) fail(where, "'$ref' must be a string");
  std::string r = ref.get<std::string>();
  if (contains(expanding_, r)) fail(where, fmt::format("the schema is recursive: '{}' refers back to itself", r));
  const json& target = resolve(r, where);
  expanding_.push_back(r);
  std::vector<SchemaAlt> out = read(target, child(where, r), depth + 1);
  expanding_.pop_back();
  return out;
}

const json& SchemaReader::resolve(const std::string& ref, const std::string& where) const {
  if (ref == "#") return root_;
  if (!ref.starts_with("#/"))
    fail(where, fmt::format("'$ref' {} is not supported (only references within the document: #/$defs/NAME)", ref));
  const json* at = &root_;
  for (size_t start = 2; start <= ref.size();) {
    size_t end = std::min(ref.find('/', start), ref.size());
    std::string key = pointer_segment(std::string_view(ref).substr(start, end - start));
    if (at->is_object() && at->contains(key)) {
      at = &(*at)[key];
    } else if (at->is_array() && !key.empty() && key.size() < 10 &&
               key.find_first_not_of("0123456789") == std::string::npos && std::stoul(key) < at->size()) {
      at = &(*at)[std::stoul(key)];
    } else {
      fail(where, fmt::format("'$ref' {} names no definition", ref));
    }
    start = end + 1;
  }
  return *at;
}

// --- intersections

std::vector<SchemaAlt> SchemaReader::intersect(const std::vector<SchemaAlt>& a, const std::vector<SchemaAlt>& b,
                                               const char* keyword, const std::string& where) {
  if (a.size() * b.size() > kMaxSchemaAlternatives)
    fail(where, fmt::format("'{}' gives more than {} alternatives", keyword, kMaxSchemaAlternatives));
  std::vector<SchemaAlt> out;
  for (const SchemaAlt& x : a)
    for (const SchemaAlt& y : b) {
      SchemaAlt both{intersect(x.node, y.node), x.excluded};
      both.excluded.insert(both.excluded.end(), y.excluded.begin(), y.excluded.end());
      if (!both.node.empty()) out.push_back(std::move(both));
    }
  if (out.empty() && !a.empty() && !b.empty())
    why_ = fmt::format("'{}' and the keywords beside it exclude each other", keyword);
  return out;
}

SchemaNode SchemaReader::intersect(const SchemaNode& a, const SchemaNode& b) {
  if (a.literals || b.literals) {
    const SchemaNode& lit = a.literals ? a : b;
    const SchemaNode& other = a.literals ? b : a;
    SchemaNode out;
    out.literals.emplace();
    for (const json& v : *lit.literals)
      if (admits(other, v)) out.literals->push_back(v);
    return out;
  }
  SchemaNode n;
  n.kinds = a.kinds & b.kinds;
  n.typed = a.typed || b.typed;
  n.constrained = a.constrained | b.constrained;
  n.lo = tighter_lower(a.lo, b.lo);
  n.hi = tighter_upper(a.hi, b.hi);
  n.min_length = std::max(a.min_length, b.min_length);
  n.max_length = a.max_length < 0   ? b.max_length
                 : b.max_length < 0 ? a.max_length
                                    : std::min(a.max_length, b.max_length);
  n.format = a.format.empty() ? b.format : (b.format.empty() || b.format == a.format ? a.format : "");
  for (size_t i = 0; i < std::max(a.prefix.size(), b.prefix.size()); ++i)
    n.prefix.push_back(all_of(a.item(i), b.item(i)));
  n.items = all_of(a.items, b.items);
  n.min_items = std::max(a.min_items, b.min_items);
  n.max_items = a.max_items < 0 ? b.max_items : b.max_items < 0 ? a.max_items : std::min(a.max_items, b.max_items);
  for (const auto& [k, s] : a.properties) n.properties.emplace_back(k, all_of(s, b.property(k)));
  for (const auto& kv : b.properties)
    if (std::none_of(a.properties.begin(), a.properties.end(), [&](const auto& p) { return p.first == kv.first; }))
      n.properties.emplace_back(kv.first, all_of(a.additional, kv.second));
  n.required = a.required;
  for (const std::string& r : b.required)
    if (!contains(n.required, r)) n.required.push_back(r);
  n.additional = all_of(a.additional, b.additional);
  n.additional_given = a.additional_given || b.additional_given;
  return n;
}

// --- validation

bool SchemaReader::admits(const std::vector<SchemaAlt>& alts, const json& v) {
  for (const SchemaAlt& a : alts)
    if (admits(a.node, v) &&
        std::none_of(a.excluded.begin(), a.excluded.end(), [&](const SchemaNode& e) { return admits(e, v); }))
      return true;
  return false;
}

bool SchemaReader::validates(const json& s, const json& v) { return admits(read(s, "", 0), v); }

bool SchemaReader::admits(const SchemaNode& n, const json& v) {
  if (n.literals)
    return std::any_of(n.literals->begin(), n.literals->end(), [&](const json& x) { return json_equal(x, v); });
  if (!(n.kinds & kind_of(v))) return false;
  if (v.is_number()) {
    std::optional<Decimal> d = Decimal::of(v);
    return d && (!n.lo || above(*d, *n.lo)) && (!n.hi || below(*d, *n.hi));
  }
  if (v.is_string()) {
    int64_t len = int64_t(code_points(v.get<std::string>()));
    return len >= n.min_length && (n.max_length < 0 || len <= n.max_length);
  }
  if (v.is_array()) {
    if (int64_t(v.size()) < n.min_items || (n.max_items >= 0 && int64_t(v.size()) > n.max_items)) return false;
    for (size_t i = 0; i < v.size(); ++i)
      if (!validates(n.item(i), v[i])) return false;
    return true;
  }
  if (v.is_object()) {
    for (const std::string& r : n.required)
      if (!v.contains(r)) return false;
    for (const auto& [k, x] : v.items())
      if (!validates(n.property(k), x)) return false;
  }
  return true;
}

// --- what vkllm writes

SchemaNode SchemaReader::generated(const SchemaNode& n) const {
  SchemaNode g = n;
  if (g.literals) return g;
  if (!g.typed && g.constrained) g.kinds &= g.constrained;
  for (const std::string& r : g.required)
    if (std::none_of(g.properties.begin(), g.properties.end(), [&](const auto& p) { return p.first == r; }))
      g.properties.emplace_back(r, g.additional);
  if (!g.additional_given && !g.properties.empty()) g.additional = false;
  g.max_length = g.max_length < 0 ? -1 : std::min<int64_t>(g.max_length, kMaxRepetition);
  g.max_items = g.max_items < 0 ? -1 : std::min<int64_t>(g.max_items, kMaxRepetition);
  if (const Format* f = find_format(g.format);
      !f || f->min_length < g.min_length || (g.max_length >= 0 && f->max_length > g.max_length))
    g.format.clear();
  return g;
}

// --- disjointness

bool SchemaReader::disjoint(const SchemaNode& g, const SchemaNode& e) {
  if (g.literals)
    return std::none_of(g.literals->begin(), g.literals->end(), [&](const json& v) { return admits(e, v); });
  if (e.literals)
    return std::none_of(e.literals->begin(), e.literals->end(), [&](const json& v) { return admits(g, v); });
  for (uint8_t k : {kNull, kBoolean, kObject, kArray, kString, kInteger, kFraction})
    if ((g.kinds & e.kinds & k) && !disjoint_kind(k, g, e)) return false;
  return true;
}

bool SchemaReader::disjoint_kind(uint8_t kind, const SchemaNode& g, const SchemaNode& e) {
  auto apart = [](int64_t lo1, int64_t hi1, int64_t lo2, int64_t hi2) {
    return (hi1 >= 0 && hi1 < lo2) || (hi2 >= 0 && hi2 < lo1);
  };
  if (kind == kInteger || kind == kFraction) {
    auto gap = [](const std::optional<NumberBound>& hi, const std::optional<NumberBound>& lo) {
      return hi && lo && (hi->value < lo->value || (hi->value == lo->value && (hi->exclusive || lo->exclusive)));
    };
    return gap(g.hi, e.lo) || gap(e.hi, g.lo);
  }
  if (kind == kString) {
    const Format* f = find_format(g.format);
    return apart(f ? f->min_length : g.min_length, f ? f->max_length : g.max_length, e.min_length, e.max_length);
  }
  if (kind == kArray) {
    int64_t g_max = g.items == json(false) && (g.max_items < 0 || g.max_items > int64_t(g.prefix.size()))
                        ? int64_t(g.prefix.size())
                        : g.max_items;
    if (apart(g.min_items, g_max, e.min_items, e.max_items)) return true;
    for (int64_t i = 0; i < g.min_items; ++i)
      if (disjoint_schemas(g.item(size_t(i)), e.item(size_t(i)))) return true;
    return false;
  }
  if (kind == kObject) {
    for (const std::string& p : g.required)  // written every time: its values against e's schema for it
      if (disjoint_schemas(g.property(p), e.property(p))) return true;
    bool closed = g.additional == json(false);
    for (const std::string& p : e.required)  // e needs a property g never writes
      if (closed && std::none_of(g.properties.begin(), g.properties.end(), [&](const auto& x) { return x.first == p; }))
        return true;
  }
  return false;
}

bool SchemaReader::disjoint_schemas(const json& g, const json& e) {
  if (e == json(false)) return true;
  if (disjoint_depth_ >= kMaxSchemaDepth) return false;  // a recursive schema: cannot tell (refused later)
  ++disjoint_depth_;
  std::vector<SchemaAlt> gs = read(g, "", 0), es = read(e, "", 0);
  bool apart = true;
  for (const SchemaAlt& x : gs) {
    SchemaNode gx = generated(x.node);
    for (const SchemaAlt& y : es) apart = apart && disjoint(gx, y.node);
  }
  --disjoint_depth_;
  return apart;
}

}  // namespace vkllm::grammar
