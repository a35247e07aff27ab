// The JSON Schema compiler: the reader (json_schema_node) says what a schema allows, as
// alternatives of per-kind constraints; each becomes grammar text here, narrowed to what vkllm
// writes (json_schema_grammar.h). One rule per schema node (named after its path), primitives
// added once when first used, equal sub-schemas compiled once.
#include "text/grammar/json_schema_grammar.h"

#include <fmt/format.h>
#include <cctype>
#include <map>
#include <set>
#include <vector>

#include "error.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema_numbers.h"
#include "text/grammar/utf8_ranges.h"

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
    // One code point: a character, or an escape (a surrogate pair's two \u escapes together).
    {"char",
     {"[^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" ( [0-9a-cA-CeEfF] [0-9a-fA-F]{3} | [dD] [0-7] "
      "[0-9a-fA-F]{2} | [dD] [89abAB] [0-9a-fA-F]{2} \"\\\\u\" [dD] [c-fC-F] [0-9a-fA-F]{2} ) )",
      {}}},
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

// Gemma 4's tool-call arguments: strings between <|"|> marks (a character may be '<' only when
// neither '|' nor '<' follows, so that no mark can be spelt inside), bare keys, no whitespace.
const std::map<std::string, std::pair<std::string, std::vector<std::string>>> kGemmaPrimitives = {
    {"ws", {"\"\"", {}}},
    {"char", {"[^<] | \"<\" [^|<]", {}}},
    {"key", {"[^:{}\\x5B\\x5D,<\"\\x00-\\x20]+", {}}},
    {"object", {"\"{\" ( key \":\" value ( \",\" key \":\" value )* )? \"}\"", {"key", "value"}}},
};

std::string join(const std::vector<std::string>& parts, const char* sep) {
  return fmt::format("{}", fmt::join(parts, sep));
}

}  // namespace

// --- GrammarBuilder

GrammarBuilder::GrammarBuilder() = default;
GrammarBuilder::~GrammarBuilder() = default;

std::string GrammarBuilder::schema_in(const json& root, const json& part, const std::string& name) {
  reader_ = std::make_unique<SchemaReader>(root);
  top_ = name;
  visited_.clear();
  visiting_.clear();
  std::optional<std::string> r = visit(part, name, 0);
  reader_.reset();
  if (!r) fail(name, why_.empty() ? "no value satisfies the schema" : why_);
  return *r;
}

std::string GrammarBuilder::text(const std::string& root_body) const {
  std::string out = fmt::format("root ::= {}\n", root_body);
  for (const std::string& name : order_) out += fmt::format("{} ::= {}\n", name, rules_.at(name));
  return out;
}

void GrammarBuilder::fail(const std::string& where, const std::string& what) const {
  throw Error(fmt::format("json schema{}: {}", where == top_ ? "" : " at '" + where + "'", what));
}

void GrammarBuilder::gemma_syntax(const std::string& quote) {
  gemma_ = true;
  quote_ = quote;
}

std::string GrammarBuilder::primitive(const std::string& name) {
  if (rules_.count(name)) return name;
  if (gemma_ && name == "string") {
    rule(name, fmt::format("{} char* {}", quote_, quote_));
    primitive("char");
    return name;
  }
  const auto& table = gemma_ && kGemmaPrimitives.count(name) ? kGemmaPrimitives : kPrimitives;
  const auto& [body, deps] = table.at(name);
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

// A sub-schema's rule, or nothing when no value satisfies it (why_ says why).
std::optional<std::string> GrammarBuilder::visit(const json& s, const std::string& name, int depth) {
  if (depth > kMaxSchemaDepth) fail(name, fmt::format("nested deeper than {} levels", kMaxSchemaDepth));
  std::string key = s.dump();
  if (auto it = visited_.find(key); it != visited_.end()) return it->second;
  if (!visiting_.insert(key).second) fail(name, "the schema is recursive: a '$ref' leads back to where it is");
  std::vector<SchemaAlt> alts = reader_->read(s, name == top_ ? "" : name, depth);
  if (alts.empty()) why_ = reader_->why();
  std::vector<std::string> bodies;
  for (const SchemaAlt& a : alts)
    if (std::optional<std::string> b = alternative(a, name, depth)) bodies.push_back(*b);
  std::optional<std::string> out;
  if (!bodies.empty()) out = rule(name, join(bodies, " | "));
  visiting_.erase(key);
  visited_[key] = out;
  return out;
}

// One alternative as written: its values (enum/const), or one part per kind it allows.
std::optional<std::string> GrammarBuilder::alternative(const SchemaAlt& alt, const std::string& name, int depth) {
  SchemaNode g = reader_->generated(alt.node);
  std::vector<std::string> parts;
  if (g.literals) {
    for (const json& v : *g.literals)
      if (std::none_of(alt.excluded.begin(), alt.excluded.end(),
                       [&](const SchemaNode& e) { return reader_->admits(e, v); }))
        parts.push_back(literal_value(v));
    if (parts.empty()) why_ = "no value of 'enum' or 'const' matches exactly one branch of 'oneOf'";
  } else {
    for (const SchemaNode& e : alt.excluded)
      if (!reader_->disjoint(g, e))
        fail(name,
             "'oneOf': its branches may both match one value, which makes it invalid; vkllm needs branches it can "
             "tell apart (different types, disjoint bounds, or a required property with different values)");
    auto add = [&](std::optional<std::string> part) {
      if (part) parts.push_back("( " + *part + " )");
    };
    if (g.kinds & kNull) parts.push_back(primitive("null"));
    if (g.kinds & kBoolean) parts.push_back(primitive("boolean"));
    if (g.kinds & kInteger) add(number(g));
    if (g.kinds & kString) add(string(g));
    if (g.kinds & kArray) add(array(g, name, depth));
    if (g.kinds & kObject) add(object(g, name, depth));
    if (g.kinds == 0) why_ = "its 'type' and the keywords beside it allow no kind of value";
  }
  if (parts.empty()) return std::nullopt;
  return join(parts, " | ");
}

// An enum/const value: as written, a number also with trailing fraction zeros (1 is 1.0).
std::string GrammarBuilder::literal_value(const json& v) {
  std::string ws = primitive("ws");
  if (std::optional<Decimal> d = Decimal::of(v); d && !d->huge)
    return fmt::format("{} {} {}", gbnf_literal(d->text()),
                       d->fraction.empty() ? "( \".\" \"0\"{1,15} )?" : "\"0\"{0,15}", ws);
  if (!gemma_) return gbnf_literal(v.dump()) + " " + ws;
  if (v.is_string()) return fmt::format("{} {} {}", quote_, gbnf_literal(v.get<std::string>()), quote_);
  std::vector<std::string> parts;
  if (v.is_array())
    for (const json& x : v) parts.push_back(literal_value(x));
  if (v.is_object())
    for (const auto& [k, x] : v.items()) parts.push_back(gbnf_literal(k + ":") + " " + literal_value(x));
  if (v.is_array()) return "\"[\" " + join(parts, " \",\" ") + " \"]\"";
  if (v.is_object()) return "\"{\" " + join(parts, " \",\" ") + " \"}\"";
  return gbnf_literal(v.dump());
}

// Integers (the kind allows no fractions) or decimals within the bounds.
std::optional<std::string> GrammarBuilder::number(const SchemaNode& g) {
  bool integer = !(g.kinds & kFraction);
  if (!g.lo && !g.hi) return primitive(integer ? "integer" : "number");
  std::string body;
  if (integer) {
    std::optional<int64_t> lo, hi;
    if (integer_bounds(g.lo, g.hi, lo, hi)) body = integer_range_gbnf(lo, hi);
  } else {
    body = number_range_gbnf(g.lo, g.hi);
  }
  if (body.empty()) {
    why_ = fmt::format("no {} lies between 'minimum' and 'maximum'", integer ? "integer" : "number");
    return std::nullopt;
  }
  return body + " " + primitive("ws");
}

std::optional<std::string> GrammarBuilder::string(const SchemaNode& g) {
  std::string ws = primitive("ws");
  if (g.format == "date-time")
    return fmt::format("{} {} \"T\" {} {} {}", quote_, primitive("date"), primitive("time"), quote_, ws);
  if (!g.format.empty()) return fmt::format("{} {} {} {}", quote_, primitive(g.format), quote_, ws);
  int64_t lo = g.min_length, hi = g.max_length;
  if (hi >= 0 && hi < lo) {
    why_ = "'maxLength' is below 'minLength'";
    return std::nullopt;
  }
  if (lo == 0 && hi < 0) return primitive("string");
  // Gemma's '<' pairs would count as one: bounded Gemma strings hold no '<'.
  std::string one = gemma_ ? "[^<]" : primitive("char");
  std::string chars = hi < 0 ? fmt::format("{}{{{},}}", one, lo) : fmt::format("{}{{{},{}}}", one, lo, hi);
  return fmt::format("{} {} {} {}", quote_, chars, quote_, ws);
}

// "[" items "]": item i from prefix[i], then `items`; between minItems and maxItems of them (an
// item whose schema allows nothing ends the array there).
std::optional<std::string> GrammarBuilder::array(const SchemaNode& g, const std::string& name, int depth) {
  if (g.prefix.empty() && g.items == json(true) && g.min_items == 0 && g.max_items < 0) return primitive("array");
  std::string ws = primitive("ws"), sep = fmt::format("\",\" {}", ws);
  std::vector<std::string> prefix;
  bool cut = false;  // an item position that allows nothing: no item from there on
  for (size_t i = 0; i < g.prefix.size() && !cut; ++i) {
    std::optional<std::string> r = visit(g.prefix[i], child(name, std::to_string(i)), depth + 1);
    if (r)
      prefix.push_back(*r);
    else
      cut = true;
  }
  std::optional<std::string> item;
  if (!cut && g.items != json(false)) item = visit(g.items, child(name, "item"), depth + 1);
  int64_t lo = g.min_items, hi = g.max_items, p = int64_t(prefix.size());
  if (!item && (hi < 0 || hi > p)) hi = p;
  if (hi >= 0 && hi < lo) {
    why_ =
        hi == g.max_items ? "'maxItems' is below 'minItems'" : "'minItems' asks for more items than the schema allows";
    return std::nullopt;
  }
  // The items from position i on, i items written before (so each starts with a comma if i > 0).
  std::string body;
  if (p == 0 && hi != 0) {  // (hi 0: no item at all; `item` may then be none)
    int64_t more = std::max<int64_t>(lo - 1, 0);
    std::string rest = hi < 0 ? fmt::format("( {} {} ){{{},}}", sep, *item, more)
                              : fmt::format("( {} {} ){{{},{}}}", sep, *item, more, hi - 1);
    body = lo == 0 ? fmt::format("( {} {} )?", *item, rest) : fmt::format("{} {}", *item, rest);
  } else if (p > 0) {
    int64_t from = std::max<int64_t>(lo - p, 0);
    if (item && (hi < 0 || hi > p))
      body = hi < 0 ? fmt::format("( {} {} ){{{},}}", sep, *item, from)
                    : fmt::format("( {} {} ){{{},{}}}", sep, *item, from, hi - p);
    for (int64_t i = std::min(p, hi < 0 ? p : hi); i-- > 0;) {
      std::string one = fmt::format("{}{} {}", i ? sep + " " : "", prefix[size_t(i)], body);
      body = i < lo ? one : fmt::format("( {} )?", one);
    }
  }
  return fmt::format("\"[\" {} {} \"]\" {}", ws, body, ws);
}

// "{" properties "}": the listed ones in order (required ones always), then others where
// additionalProperties allows them, under names that are not listed.
std::optional<std::string> GrammarBuilder::object(const SchemaNode& g, const std::string& name, int depth) {
  if (g.properties.empty() && g.additional == json(true)) return primitive("object");
  std::string ws = primitive("ws");
  std::vector<std::pair<std::string, bool>> kvs;  // (key: value, required) in the schema's order
  std::vector<std::string> names;
  for (const auto& [key, sub] : g.properties) {
    names.push_back(key);
    bool req = std::find(g.required.begin(), g.required.end(), key) != g.required.end();
    std::optional<std::string> v = visit(sub, child(name, key), depth + 1);
    if (!v && req) {
      why_ = fmt::format("the required property \"{}\" can have no valid value", key);
      return std::nullopt;
    }
    std::string k = gemma_ ? gbnf_literal(key) : fmt::format("{} {}", gbnf_literal(json(key).dump()), ws);
    if (v) kvs.emplace_back(fmt::format("{} \":\" {} {}", k, ws, *v), req);
  }
  std::string extra;  // a rule for additional properties, or ""
  if (g.additional != json(false))
    if (std::optional<std::string> v = visit(g.additional, child(name, "extra"), depth + 1))
      extra = rule(child(name, "extra-kv"), fmt::format("{} \":\" {} {}", key_without(names, name), ws, *v));
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
  return fmt::format("\"{{\" {} {} \"}}\" {}", ws, first[0], ws);
}

// A JSON string (then ws) that is none of `names`: a rule per place in the names' trie, over
// characters; no escapes, so that no name can be spelt another way.
std::string GrammarBuilder::key_without(const std::vector<std::string>& names, const std::string& name) {
  struct Node {
    std::map<uint32_t, size_t> next;
    bool end = false;
  };
  std::vector<Node> trie(1);
  for (const std::string& n : names) {
    std::optional<std::vector<uint32_t>> cps = utf8_decode(n);
    auto unspellable = [&](uint32_t c) {
      return c < 0x20 || c == '"' || c == '\\' ||
             (gemma_ && (c == ' ' || std::string_view(":{}[],<").find(char(c)) != std::string_view::npos));
    };
    if (!cps || std::any_of(cps->begin(), cps->end(), unspellable)) continue;  // a name no extra key can spell
    size_t at = 0;
    for (uint32_t c : *cps) {
      auto [it, fresh] = trie[at].next.emplace(c, trie.size());
      if (fresh) trie.emplace_back();
      at = it->second;
    }
    trie[at].end = true;
  }
  // A key's characters: JSON's without escapes; Gemma's bare keys stop at its punctuation.
  std::string chars = gemma_ ? "[^:{}\\x5B\\x5D,<\"\\x00-\\x20" : "[^\"\\\\\\x00-\\x1F";
  std::string quote = gemma_ ? "\"\"" : "\"\\\"\"";
  std::string free = rule(child(name, "key-rest"), fmt::format("{}]* {}", chars, quote));
  std::vector<std::string> rules;
  for (size_t k = 0; k < trie.size(); ++k) rules.push_back(reserve(child(name, "key")));
  for (size_t k = 0; k < trie.size(); ++k) {
    std::string other = chars;
    for (const auto& [c, to] : trie[k].next) other += class_char(c);
    std::vector<std::string> alts = {other + "] " + free};
    for (const auto& [c, to] : trie[k].next) alts.push_back(fmt::format("[{}] {}", class_char(c), rules[to]));
    if (!trie[k].end && !(gemma_ && k == 0)) alts.push_back(quote);  // Gemma's keys are not empty
    define(rules[k], join(alts, " | "));
  }
  return gemma_ ? rules[0] : fmt::format("\"\\\"\" {} {}", rules[0], primitive("ws"));
}

// --- forms for formats outside JSON

std::optional<SchemaNode> GrammarBuilder::single(const json& root, const json& part) {
  SchemaReader reader(root);
  std::vector<SchemaAlt> alts = reader.read(part, "");
  if (alts.size() != 1 || !alts[0].excluded.empty()) return std::nullopt;
  return reader.generated(alts[0].node);
}

std::optional<GrammarBuilder::StringForm> GrammarBuilder::string_form(const json& root, const json& part) {
  std::optional<SchemaNode> g = single(root, part);
  if (!g) return std::nullopt;
  StringForm f;
  if (g->literals) {
    for (const json& v : *g->literals) {
      if (!v.is_string()) return std::nullopt;
      f.literals.push_back(v.get<std::string>());
    }
    return f;
  }
  if (g->kinds != kString) return std::nullopt;
  f.min_length = g->min_length, f.max_length = g->max_length, f.format = g->format;
  return f;
}

std::optional<GrammarBuilder::ObjectForm> GrammarBuilder::object_form(const json& schema) {
  std::optional<SchemaNode> g = single(schema, schema);
  if (!g || g->literals || g->kinds != kObject) return std::nullopt;
  ObjectForm f;
  for (const auto& [key, sub] : g->properties) {
    f.properties.emplace_back(key, sub);
    f.required.push_back(std::find(g->required.begin(), g->required.end(), key) != g->required.end());
  }
  return f;
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
