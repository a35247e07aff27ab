// JSON Schema to grammar text (GBNF), so that a reply is valid JSON of that schema by
// construction. Supported: type (one or a list), properties, required, additionalProperties,
// enum, const, items, prefixItems, minItems/maxItems, minLength/maxLength, minimum/maximum and
// exclusiveMinimum/exclusiveMaximum (integer bounds; a "number" too), anyOf/oneOf, allOf of
// objects, $ref to #/$defs/... or #/definitions/..., and the string formats date, time,
// date-time and uuid. Annotations (title, description, default, examples, ...) are ignored.
// Refused with an Error that names the keyword: what a grammar cannot enforce (pattern,
// uniqueItems, not, if, multipleOf, ...), recursion through $ref, and schemas nested deeper than
// kMaxSchemaDepth. Properties come out in the schema's order (optional ones may be left out).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "text/grammar/json_schema_numbers.h"

namespace vkllm::grammar {

inline constexpr int kMaxSchemaDepth = 64;

// Grammar text built from rules: schemas compiled into it (several may share one grammar, e.g.
// the parameters of every tool), the JSON primitives, and rules of the caller's own.
class GrammarBuilder {
 public:
  using json = nlohmann::ordered_json;
  // Compiles a schema ($refs resolve within it); returns the rule that matches its values. JSON
  // tokens are followed by optional whitespace (at most one newline and 20 spaces or tabs, so a
  // model cannot pad forever). Throws Error naming the schema's problem.
  std::string schema(const json& schema, const std::string& name);
  // A rule of the caller's (the name is made unique); returns its name.
  std::string rule(std::string name, const std::string& body);
  // A unique name for a rule defined later (rules that refer to each other); define() sets it.
  std::string reserve(std::string name) { return rule(std::move(name), ""); }
  void define(const std::string& name, const std::string& body) { rules_.at(name) = body; }
  // A JSON primitive, added once: ws, value, object, array, string, char, number, integer, ...
  std::string primitive(const std::string& name);
  // The whole grammar: `root ::= root_body` and every rule added.
  std::string text(const std::string& root_body) const;

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const;
  static std::string child(const std::string& name, const std::string& part);
  std::string literal_value(const json& v);
  std::string visit(const json& s, const std::string& name, int depth);
  std::string visit_ref(const json& ref, const std::string& name, int depth);
  const json* resolve(const std::string& ref, const std::string& name) const;
  json merge_all_of(const json& s, const std::string& name);
  std::string visit_object(const json& s, const std::string& name, int depth);
  int64_t count(const json& s, const char* key, int64_t fallback, const std::string& name) const;
  static std::string repetition(const std::string& x, int64_t lo, int64_t hi, const std::string& sep);
  std::string visit_array(const json& s, const std::string& name, int depth);
  std::string visit_string(const json& s, const std::string& name);
  std::optional<NumberBound> bound(const json& s, const char* key, const char* exclusive, bool lower, bool integer,
                                   const std::string& name);
  std::string visit_number(const json& s, const std::string& name, bool integer);

  const json* root_ = nullptr;  // the schema being compiled
  std::string top_;
  std::map<std::string, std::string> rules_;
  std::vector<std::string> order_;
  std::map<std::string, std::string> ref_rules_;
  std::set<std::string> expanding_;
};

// The grammar (rule `root`) of the JSON values a schema accepts.
std::string json_schema_gbnf(const nlohmann::ordered_json& schema);
// The grammar of any JSON object (response_format {"type": "json_object"}).
std::string json_object_gbnf();
// `text` as a GBNF string literal ("..." with escapes).
std::string gbnf_literal(std::string_view text);

}  // namespace vkllm::grammar
