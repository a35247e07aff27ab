// JSON Schema (draft 2020-12) to grammar text (GBNF), so that a reply is valid JSON of that
// schema by construction.
//
// The rule: every schema vkllm compiles generates only instances that validate against it, or
// the schema is refused with an Error that names the keyword. There is no third outcome: no
// keyword is silently ignored unless the specification makes it an annotation.
//
// Honoured: type (one or a list), enum, const, $ref (to the document itself, "#" or a JSON
// pointer such as #/$defs/NAME), allOf, anyOf, oneOf, and keywords beside any of these; numbers:
// minimum, maximum, exclusiveMinimum, exclusiveMaximum (exact decimals); strings: minLength,
// maxLength (in code points: a surrogate pair is one), the formats date, time, date-time and uuid;
// arrays: prefixItems, items, minItems, maxItems; objects: properties, required,
// additionalProperties. Annotations (title, description, default, examples, other formats,
// $comment, ...) are ignored, as the specification says.
// Refused, naming the keyword: what a grammar cannot enforce (pattern, patternProperties,
// propertyNames, uniqueItems, contains, not, if/then/else, multipleOf, dependent*,
// min/maxProperties, unevaluated*, $dynamicRef), $ref outside the document, $id inside it,
// recursion through $ref (an output could nest without bound), oneOf branches that are not shown
// to be disjoint, minLength or minItems above 10 000, more than 64 alternatives, schemas nested
// deeper than kMaxSchemaDepth, and schemas that no value satisfies.
//
// What vkllm writes is a subset of what validates, narrowed on purpose for generation:
// - a schema without `type` whose keywords belong to some kinds of value is read as those kinds
//   ({"maxLength": 2} writes strings, {"properties": ...} objects); without such keywords, any value;
// - properties come in the schema's order, required ones always, optional ones may be left out;
//   properties beyond those listed (and required) only where additionalProperties allows them,
//   with names that are not listed ones and hold no escapes;
// - whitespace between tokens is at most one newline and 20 spaces or tabs;
// - numbers: at most 16 integer and 16 fraction digits, an exponent only when unbounded; an enum
//   or const number also with trailing fraction zeros (1, 1.0); other enum/const values as written;
// - a oneOf value matches its own branch and provably no other; maxLength and maxItems above
//   10 000 write at most 10 000.
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "text/grammar/json_schema_node.h"

namespace vkllm::grammar {

// Grammar text built from rules: schemas compiled into it (several may share one grammar, e.g.
// the parameters of every tool), the JSON primitives, and rules of the caller's own.
class GrammarBuilder {
 public:
  using json = nlohmann::ordered_json;
  GrammarBuilder();
  ~GrammarBuilder();
  // Compiles a schema ($refs resolve within it); returns the rule that matches its values. JSON
  // tokens are followed by optional whitespace. Throws Error naming the schema's problem.
  std::string schema(const json& schema, const std::string& name) { return schema_in(schema, schema, name); }
  // A part of a schema (a property's), its $refs resolved within `root`.
  std::string schema_in(const json& root, const json& part, const std::string& name);
  // A rule of the caller's (the name is made unique); returns its name.
  std::string rule(std::string name, const std::string& body);
  // A unique name for a rule defined later (rules that refer to each other); define() sets it.
  std::string reserve(std::string name) { return rule(std::move(name), ""); }
  void define(const std::string& name, const std::string& body) { rules_.at(name) = body; }
  // A JSON primitive, added once: ws, value, object, array, string, char, number, integer, ...
  std::string primitive(const std::string& name);
  // The whole grammar: `root ::= root_body` and every rule added.
  std::string text(const std::string& root_body) const;
  // Values from now on in Gemma 4's call syntax: strings between `quote` (grammar text: its
  // special token), bare keys, no whitespace. Set before anything is added.
  void gemma_syntax(const std::string& quote);

  // Formats that write values outside JSON (Qwen3-Coder's XML parameters) ask what a schema
  // allows. A schema whose every written value is a string: its enum/const strings, or lengths
  // and format. Nothing when it allows other kinds. Throws as schema() does.
  struct StringForm {
    std::vector<std::string> literals;  // non-empty: exactly these
    int64_t min_length = 0, max_length = -1;
    std::string format;
  };
  std::optional<StringForm> string_form(const json& root, const json& part);
  // An object schema's properties in order with whether each is required (what is written),
  // and whether other properties may be written. Nothing when the schema allows non-objects or
  // several alternatives.
  struct ObjectForm {
    std::vector<std::pair<std::string, json>> properties;
    std::vector<bool> required;
  };
  std::optional<ObjectForm> object_form(const json& schema);

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const;
  static std::string child(const std::string& name, const std::string& part);
  std::optional<SchemaNode> single(const json& root, const json& part);
  std::optional<std::string> visit(const json& s, const std::string& name, int depth);
  std::optional<std::string> alternative(const SchemaAlt& alt, const std::string& name, int depth);
  std::string literal_value(const json& v);
  std::optional<std::string> number(const SchemaNode& g);
  std::optional<std::string> string(const SchemaNode& g);
  std::optional<std::string> array(const SchemaNode& g, const std::string& name, int depth);
  std::optional<std::string> object(const SchemaNode& g, const std::string& name, int depth);
  std::string key_without(const std::vector<std::string>& names, const std::string& name);

  bool gemma_ = false;
  std::string quote_ = "\"\\\"\"";                             // a string's delimiter, as grammar text
  std::unique_ptr<SchemaReader> reader_;                       // of the schema being compiled
  std::string top_, why_;                                      // the schema's rule; why the last part allows nothing
  std::map<std::string, std::optional<std::string>> visited_;  // schema text -> its rule
  std::set<std::string> visiting_;                             // schema texts being compiled
  std::map<std::string, std::string> rules_;
  std::vector<std::string> order_;
};

// The grammar (rule `root`) of the JSON values a schema accepts.
std::string json_schema_gbnf(const nlohmann::ordered_json& schema);
// The grammar of any JSON object (response_format {"type": "json_object"}).
std::string json_object_gbnf();
// `text` as a GBNF string literal ("..." with escapes).
std::string gbnf_literal(std::string_view text);

}  // namespace vkllm::grammar
