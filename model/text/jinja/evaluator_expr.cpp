// Evaluator, expressions: names, literals, access, calls, operators; every result is charged to
// the step budget by its size, so copying big values in a loop runs out of steps, not memory.
#include <fmt/format.h>
#include <algorithm>

#include "error.h"
#include "text/jinja/builtins.h"
#include "text/jinja/evaluator.h"

namespace vkllm::jinja {

namespace {

bool absent(const Expr* e, const Value& v) { return !e || v.is_none() || v.is_undefined(); }

// obj[start:stop:step] with Python's index rules, on lists, tuples and strings (by character).
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step, const Expr& e) {
  if (obj.is_undefined()) fail_undefined(obj);
  auto index = [](const Value& v) {
    if (!v.is_int() && !v.is_bool()) fail("slice indices must be integers or None");
    return v.as_int();
  };
  int64_t st = absent(e.d.get(), step) ? 1 : index(step);
  if (st == 0) fail("slice step cannot be zero");
  std::vector<std::string_view> chars;
  size_t n = 0;
  if (obj.is_string()) {
    chars = utf8_chars(obj.as_string());
    n = chars.size();
  } else if (obj.is_list() && !obj.is_generator()) {
    n = obj.as_list().items.size();
  } else {
    fail(fmt::format("'{}' object is not subscriptable", obj.type_name()));
  }
  const int64_t len = int64_t(n);
  auto adjust = [&](const Expr* x, const Value& v, int64_t dflt) {
    if (absent(x, v)) return dflt;
    int64_t i = index(v);
    if (i < 0) i = std::max<int64_t>(i + len, st < 0 ? -1 : 0);
    return std::min<int64_t>(i, st < 0 ? len - 1 : len);
  };
  int64_t lo = adjust(e.b.get(), start, st < 0 ? len - 1 : 0);
  int64_t hi = adjust(e.c.get(), stop, st < 0 ? -1 : len);
  std::vector<int64_t> picks;
  for (int64_t i = lo; st > 0 ? i < hi : i > hi;) {
    picks.push_back(i);
    if (__builtin_add_overflow(i, st, &i)) break;
  }
  if (obj.is_string()) {
    std::string out;
    for (int64_t i : picks) out += chars[size_t(i)];
    return Value(std::move(out));
  }
  std::vector<Value> items;
  for (int64_t i : picks) items.push_back(obj.as_list().items[size_t(i)]);
  return Value::list(std::move(items), obj.as_list().tuple);
}

}  // namespace

std::vector<Value> iterate(const Value& v) {
  switch (v.type()) {
    case Value::Type::Undefined:
      return {};
    case Value::Type::List:
      return v.as_list().items;
    case Value::Type::String: {
      std::vector<Value> out;
      for (std::string_view c : utf8_chars(v.as_string())) out.emplace_back(c);
      return out;
    }
    case Value::Type::Dict:
      if (!v.is_namespace()) {
        std::vector<Value> out;
        for (const auto& [k, x] : v.as_dict().items) out.emplace_back(k);
        return out;
      }
      break;
    default:
      break;
  }
  fail(fmt::format("'{}' object is not iterable", v.type_name()));
}

Value get_attr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (name.empty() || name[0] == '_') return Value::undefined(name);  // the sandbox hides these
  if (obj.is_namespace()) {
    const Value* v = obj.as_dict().find(name);
    return v ? *v : Value::undefined(name);
  }
  Value m = method(obj, name);  // Python's getattr comes first: d.items is the method
  if (!m.is_undefined() || !obj.is_dict()) return m;
  const Value* v = obj.as_dict().find(name);
  return v ? *v : Value::undefined(name);
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (obj.is_dict()) {
    if (!key.is_string()) return Value::undefined();
    const Value* v = obj.as_dict().find(key.as_string());
    if (v) return *v;
    return obj.is_namespace() ? Value::undefined(key.as_string()) : get_attr(obj, key.as_string());
  }
  if (obj.is_generator()) return Value::undefined();
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t i = key.as_int();
    if (obj.is_list()) {
      const auto& items = obj.as_list().items;
      if (i < 0) i += int64_t(items.size());
      return i >= 0 && i < int64_t(items.size()) ? items[size_t(i)] : Value::undefined();
    }
    std::vector<std::string_view> chars = utf8_chars(obj.as_string());
    if (i < 0) i += int64_t(chars.size());
    return i >= 0 && i < int64_t(chars.size()) ? Value(chars[size_t(i)]) : Value::undefined();
  }
  if (key.is_string()) return get_attr(obj, key.as_string());
  return Value::undefined();
}

Value Evaluator::eval(const Expr& e) {
  Depth depth(*this, kMaxEvalDepth);
  try {
    Value v = eval_inner(e);
    if (v.is_string()) {
      check_size(v.as_string().size());
      charge(1 + v.as_string().size() / 256);
    } else if (v.is_list()) {
      charge(1 + v.as_list().items.size());
    } else {
      charge(1);
    }
    return v;
  } catch (const TemplateError& err) {
    throw Error(fmt::format("template: line {}: {}", e.line, err.what()));
  }
}

Value Evaluator::call(const Value& f, CallArgs& args) {
  if (f.is_undefined()) fail_undefined(f);
  if (!f.is_function()) fail(fmt::format("'{}' object is not callable", f.type_name()));
  args.ev = this;
  return f.as_function().call(args);
}

CallArgs Evaluator::eval_args(const Expr& e) {
  CallArgs a;
  a.ev = this;
  a.line = e.line;
  for (const ExprPtr& x : e.items) a.args.push_back(eval(*x));
  for (const auto& [k, x] : e.kwargs) a.kwargs.emplace_back(k, eval(*x));
  return a;
}

Value Evaluator::eval_inner(const Expr& e) {
  using EK = Expr::Kind;
  switch (e.kind) {
    case EK::Literal:
      return e.value;
    case EK::Name: {
      const Value* v = scope_->find(e.name);
      return v ? *v : Value::undefined(e.name);
    }
    case EK::List:
    case EK::Tuple: {
      std::vector<Value> items;
      for (const ExprPtr& x : e.items) items.push_back(eval(*x));
      return Value::list(std::move(items), e.kind == EK::Tuple);
    }
    case EK::Dict: {
      std::vector<std::pair<std::string, Value>> items;
      for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
        Value k = eval(*e.items[i]);
        if (!k.is_string()) fail("dict keys must be strings here");
        items.emplace_back(k.as_string(), eval(*e.items[i + 1]));
      }
      return Value::dict(std::move(items));
    }
    case EK::GetAttr:
      return get_attr(eval(*e.a), e.name);
    case EK::GetItem: {
      Value obj = eval(*e.a);
      return get_item(obj, eval(*e.b));
    }
    case EK::Slice: {
      Value obj = eval(*e.a);
      Value b = e.b ? eval(*e.b) : Value(), c = e.c ? eval(*e.c) : Value(), d = e.d ? eval(*e.d) : Value();
      return slice(obj, b, c, d, e);
    }
    case EK::Call: {
      Value f = eval(*e.a);
      CallArgs args = eval_args(e);
      return call(f, args);
    }
    case EK::Filter: {
      Value v = eval(*e.a);
      CallArgs args = eval_args(e);
      return apply_filter(*this, e.name, v, args);
    }
    case EK::Test: {
      Value v = eval(*e.a);
      CallArgs args = eval_args(e);
      return Value(apply_test(*this, e.name, v, args) != e.negate);
    }
    case EK::Not:
      return Value(!eval(*e.a).truthy());
    case EK::Neg:
    case EK::Pos: {
      Value v = eval(*e.a);
      if (v.is_undefined()) fail_undefined(v);
      if (!v.is_number())
        fail(fmt::format("bad operand type for unary {}: '{}'", e.kind == EK::Neg ? '-' : '+', v.type_name()));
      if (e.kind == EK::Pos) return v.is_bool() ? Value(v.as_int()) : v;
      if (v.is_float()) return Value(-v.as_float());
      if (v.as_int() == INT64_MIN) fail("integer overflow");
      return Value(-v.as_int());
    }
    case EK::And: {
      Value a = eval(*e.a);
      return a.truthy() ? eval(*e.b) : a;
    }
    case EK::Or: {
      Value a = eval(*e.a);
      return a.truthy() ? a : eval(*e.b);
    }
    case EK::Binary:
      return eval_binary(e);
    case EK::Compare:
      return eval_compare(e);
    case EK::Cond:
      if (eval(*e.a).truthy()) return eval(*e.b);
      return e.c ? eval(*e.c) : Value::undefined();
    case EK::BlockResult:
      return block_result_;
  }
  return Value();
}

// a op b op c ... as Python chains it: (a op b) and (b op c), stopping at the first false.
Value Evaluator::eval_compare(const Expr& e) {
  Value left = eval(*e.a);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval(*e.items[i]);
    const std::string& op = e.ops[i];
    bool r;
    if (op == "==")
      r = equal(left, right);
    else if (op == "!=")
      r = !equal(left, right);
    else if (op == "in")
      r = contains(right, left);
    else if (op == "not in")
      r = !contains(right, left);
    else {
      int c = compare(left, right);
      r = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
    }
    if (!r) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

}  // namespace vkllm::jinja
