// Evaluator: runs a parsed template over variables, with jinja2's scoping (a for loop's body and
// a macro get their own scope per iteration or call; if does not) and bounds on the work, the
// output and the call depth, so a template that loops or recurses forever ends in an error.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "text/jinja/nodes.h"

namespace vkllm::jinja {

constexpr int kMaxEvalDepth = 400;  // nested eval/exec calls, macros included

// Throws "'name' is undefined" (or "undefined value used" for a value without a name).
[[noreturn]] void fail_undefined(const Value& v);

struct Limits {
  size_t max_output = size_t(64) << 20;  // bytes of output, and of any one string
  uint64_t max_steps = 5'000'000;        // expressions evaluated + loop iterations + bytes/256 or items copied
  int max_call_depth = 64;               // macro calls inside macro calls
};

class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent_(std::move(parent)) {}
  const Value* find(const std::string& name) const;
  void set(const std::string& name, Value v) { vars_[name] = std::move(v); }

 private:
  std::shared_ptr<Scope> parent_;
  std::unordered_map<std::string, Value> vars_;
};

class Evaluator {
 public:
  explicit Evaluator(const Limits& limits) : limits_(limits) {}
  // Renders body with `globals` as the outermost scope.
  std::string render(const Body& body, std::shared_ptr<Scope> globals);

  Value eval(const Expr& e);
  Value call(const Value& f, CallArgs& args);  // a function, macro or bound method
  const Limits& limits() const { return limits_; }
  void charge(uint64_t steps);          // fails past max_steps
  void check_size(size_t bytes) const;  // fails past max_output

 private:
  enum class Flow { Normal, Break, Continue };
  Flow exec(const Body& body, std::string& out);
  Flow exec_stmt(const Stmt& s, std::string& out);
  Flow exec_for(const Stmt& s, std::string& out);
  void exec_set(const Stmt& s, const Value& v);
  void define_macro(const Stmt& s);
  Value eval_inner(const Expr& e);
  Value eval_binary(const Expr& e);
  Value eval_compare(const Expr& e);
  Value eval_call(const Expr& e);
  CallArgs eval_args(const Expr& e);
  void write(std::string& out, std::string_view text) const;
  std::string capture(const Body& body);

  struct Depth {
    Depth(Evaluator& ev, int limit);
    ~Depth() { --ev.depth_; }
    Evaluator& ev;
  };

  Limits limits_;
  uint64_t steps_ = 0;
  int depth_ = 0;  // nested eval/exec calls
  int macro_depth_ = 0;
  std::shared_ptr<Scope> scope_;
  Value block_result_;  // what BlockResult evaluates to
};

// Iteration in Python's sense: list items, dict keys, string characters; undefined is empty.
std::vector<Value> iterate(const Value& v);
// Attribute and item access with jinja2's fallbacks (a dict's key, a str's method, ...).
Value get_attr(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);

}  // namespace vkllm::jinja
