// The syntax tree of a template: expressions and statements, each one plain struct with the
// fields its kinds use (named per kind below), owned by unique_ptr.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja/value.h"

namespace vkllm::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Expr {
  enum class Kind {
    Literal,      // value
    Name,         // name
    List,         // items
    Tuple,        // items
    Dict,         // items: key, value, key, value, ...
    GetAttr,      // a.name
    GetItem,      // a[b]
    Slice,        // a[b:c:d]; absent parts are null
    Call,         // a(items, kwargs)
    Filter,       // a | name(items, kwargs); a is null in a filter block's head
    Test,         // a is [not: negate] name(items)
    Not,          // not a
    Neg,          // -a
    Pos,          // +a
    And,          // a and b
    Or,           // a or b
    Binary,       // a name b: + - * / // % ** ~
    Compare,      // a ops[0] items[0] ops[1] items[1] ...: == != < <= > >= in, "not in"
    Cond,         // b if a else c (c may be null)
    BlockResult,  // what a filter block or a filtered set block captured
  };
  Kind kind;
  int line = 0;
  int height = 1;  // of the subtree; bounded by the parser
  Value value;
  std::string name;
  ExprPtr a, b, c, d;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
  bool negate = false;
};

struct Stmt {
  enum class Kind {
    Text,         // text
    Output,       // {{ expr }}
    If,           // branches (cond, body), else_body
    For,          // targets in expr [if cond] body [else else_body]
    Set,          // targets = expr, or attr: targets[0].attr = expr
    SetBlock,     // targets[0] = captured body, through expr's filters (expr may be null)
    Macro,        // targets[0](params) body
    FilterBlock,  // body through expr (a Filter chain ending in BlockResult)
    With,         // params as new variables, body
    Break,
    Continue,
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr, cond;
  std::vector<std::string> targets;
  std::string attr;
  Body body, else_body;
  std::vector<std::pair<ExprPtr, Body>> branches;
  std::vector<std::pair<std::string, ExprPtr>> params;  // default values may be null
};

}  // namespace vkllm::jinja
