// A JSON schema read into what it allows: a union of alternatives (SchemaAlt), each a
// conjunction of constraints per kind of value (SchemaNode: which kinds, number bounds, string
// lengths, array items, object properties, or a finite set of values). Keywords beside $ref,
// allOf, anyOf and oneOf are intersected with them, anyOf and oneOf become unions (oneOf's
// alternatives carry the other branches as exclusions), enum and const become the values that
// pass the rest of the schema. The reader also validates a value against a schema (for enum
// values and the exclusions) and proves two alternatives disjoint where it can (for oneOf).
// json_schema_grammar.cpp turns what it reads into grammar rules. Internal to the grammar code.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "text/grammar/json_schema_numbers.h"

namespace vkllm::grammar {

using SchemaJson = nlohmann::ordered_json;

// Kinds of JSON values; a number is an integer (1, 1.0) or a fraction (1.5).
enum : uint8_t {
  kNull = 1,
  kBoolean = 2,
  kObject = 4,
  kArray = 8,
  kString = 16,
  kInteger = 32,
  kFraction = 64,
  kNumber = kInteger | kFraction,
  kAnyKind = 127,
};

inline constexpr int kMaxSchemaDepth = 64;
inline constexpr size_t kMaxSchemaAlternatives = 64;  // of one schema, after anyOf/oneOf are multiplied out

struct SchemaNode {
  uint8_t kinds = kAnyKind;
  bool typed = false;                               // a `type` keyword applies: no kind is inferred from the others
  uint8_t constrained = 0;                          // kinds that keywords constrain (minLength: kString, ...)
  std::optional<std::vector<SchemaJson>> literals;  // enum/const: exactly these values
  std::optional<NumberBound> lo, hi;                // numbers
  int64_t min_length = 0, max_length = -1;          // strings, in code points (-1: no maximum)
  std::string format;                               // strings: date, time, date-time or uuid ("" none)
  std::vector<SchemaJson> prefix;                   // arrays: item i's schema is prefix[i], then items
  SchemaJson items = true;
  int64_t min_items = 0, max_items = -1;
  std::vector<std::pair<std::string, SchemaJson>> properties;  // objects, in the schema's order
  std::vector<std::string> required;
  SchemaJson additional = true;  // the schema of a property not in `properties`
  bool additional_given = false;

  const SchemaJson& item(size_t i) const { return i < prefix.size() ? prefix[i] : items; }
  const SchemaJson& property(const std::string& name) const;
  bool empty() const { return kinds == 0 || (literals && literals->empty()); }
};

struct SchemaAlt {
  SchemaNode node;
  std::vector<SchemaNode> excluded;  // oneOf's other branches: a valid value matches none of them
};

class SchemaReader {
 public:
  explicit SchemaReader(const SchemaJson& root) : root_(root) {}

  // The alternatives of a schema (none: no value is valid; why() says why). Throws Error naming
  // the keyword for what vkllm cannot honour, a malformed keyword, or a recursive $ref.
  std::vector<SchemaAlt> read(const SchemaJson& s, const std::string& where, int depth = 0);
  const std::string& why() const { return why_; }

  // What vkllm writes for a node (json_schema_grammar.h's rules): kinds inferred from keywords
  // when `type` is absent, no properties beyond the listed and required ones unless
  // additionalProperties says so, a format only where it fits the length bounds.
  SchemaNode generated(const SchemaNode& n) const;

  // Whether v is valid against a schema (false may also mean "cannot tell": never true for an
  // invalid value), and against one node (its kinds and bounds; items and properties by their
  // schemas).
  bool validates(const SchemaJson& s, const SchemaJson& v);
  bool admits(const SchemaNode& n, const SchemaJson& v);
  // Whether no value written for `g` (a generated() node) is valid against `e`: true only when
  // it can be shown (distinct kinds, disjoint bounds or lengths, a required property whose values
  // are disjoint, one `e` requires and `g` never writes, values of an enum).
  bool disjoint(const SchemaNode& g, const SchemaNode& e);

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const;
  SchemaNode keywords(const SchemaJson& s, const std::string& where);
  void type_keyword(const SchemaJson& t, SchemaNode& n, const std::string& where) const;
  void number_keywords(const SchemaJson& s, SchemaNode& n, const std::string& where) const;
  void array_keywords(const SchemaJson& s, SchemaNode& n, const std::string& where) const;
  void object_keywords(const SchemaJson& s, SchemaNode& n, const std::string& where) const;
  int64_t count(const SchemaJson& s, const char* key, const std::string& where) const;
  std::vector<SchemaAlt> read_ref(const SchemaJson& ref, const std::string& where, int depth);
  const SchemaJson& resolve(const std::string& ref, const std::string& where) const;
  std::vector<SchemaAlt> read_union(const SchemaJson& s, const char* key, const std::string& where, int depth);
  std::vector<SchemaAlt> intersect(const std::vector<SchemaAlt>& a, const std::vector<SchemaAlt>& b,
                                   const char* keyword, const std::string& where);
  SchemaNode intersect(const SchemaNode& a, const SchemaNode& b);
  bool admits(const std::vector<SchemaAlt>& alts, const SchemaJson& v);
  bool disjoint_kind(uint8_t kind, const SchemaNode& g, const SchemaNode& e);
  bool disjoint_schemas(const SchemaJson& g, const SchemaJson& e);

  const SchemaJson& root_;
  std::vector<std::string> expanding_;  // $refs being read (a second visit is recursion)
  size_t work_ = 0;                     // schemas read so far (bounds the cost of a hostile schema)
  int disjoint_depth_ = 0;
  std::string why_;
};

// JSON Schema's equality: numbers by value (1 == 1.0), objects whatever their keys' order.
bool json_equal(const SchemaJson& a, const SchemaJson& b);

}  // namespace vkllm::grammar
