// Value: what a Jinja2 expression evaluates to, modelled on the Python objects jinja2 works with
// (undefined, None, bool, int, float, str, list/tuple, dict, callables, namespace), so that
// printing, comparing and serialising give Python's bytes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace vkllm::jinja {

// A failure while rendering, without the line; the evaluator adds "template: line L: ".
class TemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string& message);

class Value;
struct List;
struct Dict;
struct Function;
struct CallArgs;
using ListPtr = std::shared_ptr<const List>;
using DictPtr = std::shared_ptr<Dict>;
using FunctionPtr = std::shared_ptr<const Function>;

// Containers nest at most this deep (a deeper value would make printing and freeing recurse), and
// a list holds at most kMaxListItems.
constexpr int kMaxValueDepth = 100;
constexpr size_t kMaxListItems = size_t(1) << 20;

struct Undefined {
  std::string name;  // for "'x' is undefined"
};
struct None {};

class Value {
 public:
  enum class Type { Undefined, None, Bool, Int, Float, String, List, Dict, Function };

  Value() : v_(Undefined{}) {}
  static Value undefined(std::string name = {}) { return Value(Undefined{std::move(name)}); }
  static Value none() { return Value(None{}); }
  Value(bool b) : v_(b) {}
  Value(int v) : v_(int64_t(v)) {}
  Value(int64_t v) : v_(v) {}
  Value(double v) : v_(v) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  static Value list(std::vector<Value> items, bool tuple = false);
  // What jinja2's map/select/unique/... return: iterable once, no len(), not JSON, always true.
  static Value generator(std::vector<Value> items);
  static Value dict(std::vector<std::pair<std::string, Value>> items = {});
  static Value namespace_(std::vector<std::pair<std::string, Value>> items = {});
  static Value function(std::string name, std::function<Value(CallArgs&)> fn);
  // markupsafe's Markup, what `safe` and `escape` return: `+` with a plain str escapes the str.
  static Value markup(std::string s);

  Type type() const { return Type(v_.index()); }
  bool is_undefined() const { return type() == Type::Undefined; }
  bool is_none() const { return type() == Type::None; }
  bool is_bool() const { return type() == Type::Bool; }
  bool is_int() const { return type() == Type::Int; }
  bool is_float() const { return type() == Type::Float; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }  // Python: bool is an int
  bool is_string() const { return type() == Type::String; }
  bool is_markup() const { return markup_; }
  bool is_list() const { return type() == Type::List; }  // generators too; see is_generator
  bool is_generator() const;
  bool is_dict() const { return type() == Type::Dict; }  // namespaces too; see is_mapping
  bool is_mapping() const;
  bool is_namespace() const;
  bool is_function() const { return type() == Type::Function; }

  // Typed access; the wrong type fails with a TemplateError naming the types (never a crash).
  bool as_bool() const { return *get<bool>("bool"); }
  int64_t as_int() const;   // int or bool
  double as_float() const;  // any number
  const std::string& as_string() const { return *get<std::string>("str"); }
  const List& as_list() const { return **get<ListPtr>("list"); }
  const Dict& as_dict() const { return **get<DictPtr>("dict"); }
  Dict& as_mutable_dict() const { return **get<DictPtr>("dict"); }  // namespaces only
  const Function& as_function() const { return **get<FunctionPtr>("function"); }
  const std::string& undefined_name() const {
    static const std::string none;
    const Undefined* u = std::get_if<Undefined>(&v_);
    return u ? u->name : none;
  }

  int depth() const;  // 0 for scalars, 1 + the deepest element for containers
  bool truthy() const;
  std::string type_name() const;  // Python's: "str", "dict", "NoneType", ...

 private:
  static Value make_list(std::vector<Value> items, bool tuple, bool generator);
  template <typename T>
  const T* get(const char* want) const {
    const T* p = std::get_if<T>(&v_);
    if (!p) wrong_type(want);
    return p;
  }
  [[noreturn]] void wrong_type(const char* want) const;
  explicit Value(Undefined u) : v_(std::move(u)) {}
  explicit Value(None) : v_(None{}) {}
  std::variant<Undefined, None, bool, int64_t, double, std::string, ListPtr, DictPtr, FunctionPtr> v_;
  bool markup_ = false;
};

struct List {
  std::vector<Value> items;
  bool tuple = false;
  bool generator = false;
  int depth = 1;
};

// An insertion-ordered dict with string keys (what JSON objects and keyword arguments give).
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;
  int depth = 1;
  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value v);
};

// Arguments of a call: positional, then keyword.
class Evaluator;
struct CallArgs {
  Evaluator* ev = nullptr;  // the render this call belongs to
  int line = 0;
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
  // Argument i by position or name; an undefined Value when absent.
  Value get(size_t i, std::string_view name) const;
  bool has(size_t i, std::string_view name) const;
  // Fails when there are more than n positional or other keyword arguments than `names`.
  void expect(std::string_view what, size_t n, std::initializer_list<std::string_view> names) const;
};

struct Function {
  std::string name;
  std::function<Value(CallArgs&)> call;
};

// Python semantics.
bool equal(const Value& a, const Value& b);
int compare(const Value& a, const Value& b);  // <0, 0, >0; fails for unordered types
std::string to_str(const Value& v);           // str(v); undefined is ""
std::string repr(const Value& v);             // repr(v)
std::string float_repr(double v);             // repr(float): shortest round trip, Python's layout
std::string escape_html(std::string_view s);  // markupsafe.escape: & < > " '

struct JsonOptions {
  int indent = -1;  // -1: None (one line)
  std::string item_sep = ", ", key_sep = ": ";
  bool sort_keys = false, ensure_ascii = false;
};
// json.dumps(v, ...) as Python writes it.
std::string to_json(const Value& v, const JsonOptions& o);

// Code points of UTF-8 text (continuation bytes do not count), splitting it into characters, and
// the code point of one character.
size_t utf8_length(std::string_view s);
std::vector<std::string_view> utf8_chars(std::string_view s);
uint32_t code_point(std::string_view one_char);
// Bytes of the whitespace character (Python's str.isspace) starting s[i]; 0 if there is none.
size_t space_at(std::string_view s, size_t i);
// Offset of the first byte of s that is not well-formed UTF-8, or npos.
size_t invalid_utf8(std::string_view s);
std::string_view strip_spaces(std::string_view s, bool left, bool right);  // str.strip() and kin

}  // namespace vkllm::jinja
