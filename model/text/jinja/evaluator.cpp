// Evaluator: statements and expressions. Operators follow Python on the Value types; errors carry
// the line of the innermost expression or statement that failed.
#include "text/jinja/evaluator.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "error.h"
#include "text/jinja/builtins.h"

namespace vkllm::jinja {

namespace {

int64_t checked(bool overflow, int64_t v) {
  if (overflow) fail("integer overflow");
  return v;
}

std::string repeat(const std::string& s, int64_t n, const Evaluator& ev) {
  if (n <= 0 || s.empty()) return {};
  if (uint64_t(n) > ev.limits().max_output / s.size()) ev.check_size(ev.limits().max_output + 1);
  std::string out;
  out.reserve(s.size() * size_t(n));
  for (int64_t i = 0; i < n; ++i) out += s;
  return out;
}

// Python's % on numbers: the result takes the divisor's sign.
Value modulo(const Value& a, const Value& b) {
  if (a.is_float() || b.is_float()) {
    double x = a.as_float(), y = b.as_float();
    if (y == 0) fail("float modulo");
    double r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return Value(r);
  }
  int64_t x = a.as_int(), y = b.as_int();
  if (y == 0) fail("integer division or modulo by zero");
  if (y == -1) return Value(int64_t(0));
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return Value(r);
}

Value arithmetic(const std::string& op, const Value& a, const Value& b, const Evaluator& ev) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      ev.check_size(a.as_string().size() + b.as_string().size());
      if (!a.is_markup() && !b.is_markup()) return Value(a.as_string() + b.as_string());
      // Markup + str escapes the str (markupsafe), whichever side it is on
      return Value::markup((a.is_markup() ? a.as_string() : escape_html(a.as_string())) +
                           (b.is_markup() ? b.as_string() : escape_html(b.as_string())));
    }
    if (a.is_list() && b.is_list() && a.as_list().tuple == b.as_list().tuple && !a.is_generator() &&
        !b.is_generator()) {
      std::vector<Value> items = a.as_list().items;
      items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
      return Value::list(std::move(items), a.as_list().tuple);
    }
  }
  if (op == "*") {
    if (a.is_string() && b.is_int()) return Value(repeat(a.as_string(), b.as_int(), ev));
    if (a.is_int() && b.is_string()) return Value(repeat(b.as_string(), a.as_int(), ev));
    if ((a.is_list() && b.is_int() && !a.is_generator()) || (a.is_int() && b.is_list() && !b.is_generator())) {
      const List& l = a.is_list() ? a.as_list() : b.as_list();
      int64_t n = a.is_list() ? b.as_int() : a.as_int();
      if (n > 0 && !l.items.empty() && uint64_t(n) > kMaxListItems / l.items.size()) fail("list too long");
      std::vector<Value> items;
      for (int64_t i = 0; i < n; ++i) items.insert(items.end(), l.items.begin(), l.items.end());
      return Value::list(std::move(items), l.tuple);
    }
  }
  if (op == "%" && a.is_string()) return Value(percent_format(a.as_string(), b, ev));
  if (!a.is_number() || !b.is_number())
    fail(fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op, a.type_name(), b.type_name()));
  bool ints = !a.is_float() && !b.is_float();
  if (op == "/") {
    if (b.as_float() == 0) fail("division by zero");
    return Value(a.as_float() / b.as_float());
  }
  if (op == "%") return modulo(a, b);
  if (op == "//") {
    if (b.as_float() == 0) fail("integer division or modulo by zero");
    if (!ints) return Value(std::floor(a.as_float() / b.as_float()));
    int64_t x = a.as_int(), y = b.as_int();
    if (x == INT64_MIN && y == -1) fail("integer overflow");
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return Value(q);
  }
  if (op == "**") {
    if (ints && b.as_int() >= 0) {
      int64_t r = 1, base = a.as_int();
      int64_t e = b.as_int();
      if (base == 0 || base == 1) return Value(e == 0 ? int64_t(1) : base);
      if (base == -1) return Value(int64_t(e % 2 ? -1 : 1));
      for (; e > 0; --e) {  // |base| >= 2 overflows within 63 steps
        bool overflow = __builtin_mul_overflow(r, base, &r);
        checked(overflow, r);
      }
      return Value(r);
    }
    return Value(std::pow(a.as_float(), b.as_float()));
  }
  if (!ints) {
    double x = a.as_float(), y = b.as_float();
    return Value(op == "+" ? x + y : op == "-" ? x - y : x * y);
  }
  int64_t x = a.as_int(), y = b.as_int(), r = 0;
  bool overflow = op == "+"   ? __builtin_add_overflow(x, y, &r)
                  : op == "-" ? __builtin_sub_overflow(x, y, &r)
                              : __builtin_mul_overflow(x, y, &r);
  return Value(checked(overflow, r));
}

// Values stored in a namespace hold no namespaces or functions, so no value can contain itself.
void check_storable(const Value& v) {
  if (v.is_namespace() || v.is_function()) fail("a namespace attribute cannot hold a namespace or a function");
  if (v.is_list())
    for (const Value& x : v.as_list().items) check_storable(x);
  if (v.is_dict())
    for (const auto& [k, x] : v.as_dict().items) check_storable(x);
}

}  // namespace

[[noreturn]] void fail_undefined(const Value& v) {
  fail(v.undefined_name().empty() ? "undefined value used" : fmt::format("'{}' is undefined", v.undefined_name()));
}

Value Evaluator::eval_binary(const Expr& e) {
  Value a = eval(*e.a);
  Value b = eval(*e.b);
  if (e.name == "~") {
    std::string s = to_str(a);
    std::string t = to_str(b);
    check_size(s.size() + t.size());
    return Value(s + t);
  }
  return arithmetic(e.name, a, b, *this);
}

const Value* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_.get()) {
    auto it = s->vars_.find(name);
    if (it != s->vars_.end()) return &it->second;
  }
  return nullptr;
}

Evaluator::Depth::Depth(Evaluator& ev, int limit) : ev(ev) {
  if (++ev.depth_ > limit) {
    --ev.depth_;
    fail(fmt::format("recursion deeper than {} levels", limit));
  }
}

void Evaluator::charge(uint64_t steps) {
  steps_ += steps;
  if (steps_ > limits_.max_steps) fail(fmt::format("the template ran longer than {} steps", limits_.max_steps));
}

void Evaluator::check_size(size_t bytes) const {
  if (bytes > limits_.max_output) fail(fmt::format("text longer than {} bytes", limits_.max_output));
}

void Evaluator::write(std::string& out, std::string_view text) const {
  check_size(out.size() + text.size());
  out += text;
}

std::string Evaluator::render(const Body& body, std::shared_ptr<Scope> globals) {
  scope_ = std::move(globals);
  std::string out;
  exec(body, out);
  return out;
}

Evaluator::Flow Evaluator::exec(const Body& body, std::string& out) {
  for (const StmtPtr& s : body) {
    Flow f = exec_stmt(*s, out);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

std::string Evaluator::capture(const Body& body) {
  std::string out;
  exec(body, out);
  return out;
}

Evaluator::Flow Evaluator::exec_stmt(const Stmt& s, std::string& out) {
  Depth depth(*this, kMaxEvalDepth);
  charge(1);
  using SK = Stmt::Kind;
  try {
    switch (s.kind) {
      case SK::Text:
        write(out, s.text);
        return Flow::Normal;
      case SK::Output:
        write(out, to_str(eval(*s.expr)));
        return Flow::Normal;
      case SK::If:
        for (const auto& [cond, body] : s.branches)
          if (eval(*cond).truthy()) return exec(body, out);
        return exec(s.else_body, out);
      case SK::For:
        return exec_for(s, out);
      case SK::Set:
        exec_set(s, eval(*s.expr));
        return Flow::Normal;
      case SK::SetBlock: {
        Value v(capture(s.body));
        if (s.expr) {
          Value saved = std::exchange(block_result_, v);
          v = eval(*s.expr);
          block_result_ = saved;
        }
        exec_set(s, v);
        return Flow::Normal;
      }
      case SK::Macro:
        define_macro(s);
        return Flow::Normal;
      case SK::FilterBlock: {
        Value saved = std::exchange(block_result_, Value(capture(s.body)));
        Value v = eval(*s.expr);
        block_result_ = saved;
        write(out, to_str(v));
        return Flow::Normal;
      }
      case SK::With: {
        auto scope = std::make_shared<Scope>(scope_);
        for (const auto& [name, e] : s.params) scope->set(name, eval(*e));
        std::shared_ptr<Scope> saved = std::exchange(scope_, scope);
        Flow f = exec(s.body, out);
        scope_ = saved;
        return f;
      }
      case SK::Break:
        return Flow::Break;
      case SK::Continue:
        return Flow::Continue;
    }
  } catch (const TemplateError& e) {
    throw Error(fmt::format("template: line {}: {}", s.line, e.what()));
  }
  return Flow::Normal;
}

Evaluator::Flow Evaluator::exec_for(const Stmt& s, std::string& out) {
  std::vector<Value> items = iterate(eval(*s.expr));
  std::shared_ptr<Scope> outer = scope_;
  auto bind = [&](Scope& scope, const Value& item) {
    if (s.targets.size() == 1) return scope.set(s.targets[0], item);
    std::vector<Value> parts = iterate(item);
    if (parts.size() != s.targets.size())
      fail(fmt::format("cannot unpack {} values into {} names", parts.size(), s.targets.size()));
    for (size_t i = 0; i < parts.size(); ++i) scope.set(s.targets[i], parts[i]);
  };
  if (s.cond) {  // `for x in xs if cond`: loop.index and loop.length count what passes
    std::vector<Value> kept;
    for (const Value& item : items) {
      charge(1);
      auto scope = std::make_shared<Scope>(outer);
      bind(*scope, item);
      scope_ = scope;
      bool keep = eval(*s.cond).truthy();
      scope_ = outer;
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    scope_ = std::make_shared<Scope>(outer);
    Flow f = exec(s.else_body, out);
    scope_ = outer;
    return f == Flow::Normal ? f : Flow::Normal;
  }
  const int64_t n = int64_t(items.size());
  for (int64_t i = 0; i < n; ++i) {
    charge(1);
    auto scope = std::make_shared<Scope>(outer);
    bind(*scope, items[size_t(i)]);
    Value loop = Value::dict({{"index", Value(i + 1)},
                              {"index0", Value(i)},
                              {"revindex", Value(n - i)},
                              {"revindex0", Value(n - i - 1)},
                              {"first", Value(i == 0)},
                              {"last", Value(i == n - 1)},
                              {"length", Value(n)},
                              {"depth", Value(int64_t(1))},
                              {"depth0", Value(int64_t(0))},
                              {"previtem", i > 0 ? items[size_t(i - 1)] : Value::undefined("previtem")},
                              {"nextitem", i + 1 < n ? items[size_t(i + 1)] : Value::undefined("nextitem")}});
    loop.as_mutable_dict().set("cycle", Value::function("cycle", [i](CallArgs& a) {
                                 if (a.args.empty()) fail("no items for cycling given");
                                 return a.args[size_t(i) % a.args.size()];
                               }));
    scope->set("loop", loop);
    scope_ = scope;
    Flow f;
    try {
      f = exec(s.body, out);
    } catch (...) {
      scope_ = outer;
      throw;
    }
    scope_ = outer;
    if (f == Flow::Break) break;
  }
  return Flow::Normal;
}

void Evaluator::exec_set(const Stmt& s, const Value& v) {
  if (!s.attr.empty()) {
    const Value* ns = scope_->find(s.targets[0]);
    if (!ns || !ns->is_namespace()) fail("cannot assign attribute on non-namespace object");
    check_storable(v);
    ns->as_mutable_dict().set(s.attr, v);
    return;
  }
  if (s.targets.size() == 1) return scope_->set(s.targets[0], v);
  std::vector<Value> parts = iterate(v);
  if (parts.size() != s.targets.size())
    fail(fmt::format("cannot unpack {} values into {} names", parts.size(), s.targets.size()));
  for (size_t i = 0; i < parts.size(); ++i) scope_->set(s.targets[i], parts[i]);
}

// A macro is a function that renders its body in a new scope below the one it was defined in.
// It holds that scope weakly: a scope holding its own macros must not keep itself alive.
void Evaluator::define_macro(const Stmt& s) {
  std::weak_ptr<Scope> home = scope_;
  const Stmt* def = &s;
  scope_->set(
      s.targets[0], Value::function(s.targets[0], [this, home, def](CallArgs& a) -> Value {
        std::shared_ptr<Scope> parent = home.lock();
        if (!parent) fail("macro '" + def->targets[0] + "' called after its scope ended");
        if (a.args.size() > def->params.size())
          fail(fmt::format("macro '{}' takes not more than {} argument(s)", def->targets[0], def->params.size()));
        for (const auto& kw : a.kwargs)
          if (std::none_of(def->params.begin(), def->params.end(), [&](const auto& p) { return p.first == kw.first; }))
            fail(fmt::format("macro '{}' takes no keyword argument '{}'", def->targets[0], kw.first));
        if (macro_depth_ >= limits_.max_call_depth)
          fail(fmt::format("macro calls nested deeper than {}", limits_.max_call_depth));
        auto scope = std::make_shared<Scope>(parent);
        std::shared_ptr<Scope> saved = std::exchange(scope_, scope);
        ++macro_depth_;
        std::string out;
        try {
          for (size_t i = 0; i < def->params.size(); ++i) {
            const auto& [name, default_value] = def->params[i];
            Value v = a.get(i, name);
            if (!a.has(i, name) && default_value) v = eval(*default_value);
            if (!a.has(i, name) && !default_value) v = Value::undefined(name);
            scope->set(name, v);
          }
          exec(def->body, out);
        } catch (...) {
          --macro_depth_;
          scope_ = saved;
          throw;
        }
        --macro_depth_;
        scope_ = saved;
        return Value(std::move(out));
      }));
}

}  // namespace vkllm::jinja
