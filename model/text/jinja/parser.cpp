// Parser: recursive descent over the token list, one function per precedence level as in
// jinja2/parser.py, so `-x|abs`, `not a in b` and `a ~ b|upper` group as jinja2 groups them.
#include "text/jinja/parser.h"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <utility>

#include "error.h"
#include "text/jinja/lexer.h"

namespace vkllm::jinja {

namespace {

using K = Token::Kind;
using EK = Expr::Kind;
using SK = Stmt::Kind;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Body parse() {
    Body body = subparse({});
    if (cur().kind != K::End) fail_at(cur(), "unexpected end tag");
    return body;
  }

 private:
  struct Depth {  // counts nesting; past kMaxNesting the template is refused
    explicit Depth(Parser& p) : p(p) {
      if (++p.depth_ > kMaxNesting) p.fail_at(p.cur(), fmt::format("nesting deeper than {} levels", kMaxNesting));
    }
    ~Depth() { --p.depth_; }
    Parser& p;
  };

  const Token& cur() const { return t_[i_]; }
  const Token& peek(size_t n = 1) const { return t_[std::min(i_ + n, t_.size() - 1)]; }
  void next() {
    if (i_ + 1 < t_.size()) ++i_;
  }
  bool is_op(std::string_view op) const { return cur().kind == K::Op && cur().text == op; }
  bool is_name(std::string_view n) const { return cur().kind == K::Name && cur().text == n; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(std::string_view n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail_at(const Token& t, const std::string& what) const {
    throw Error(fmt::format("template: line {}: {}", t.line, what));
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case K::End:
        return "end of template";
      case K::BlockEnd:
        return "end of statement block";
      case K::VarEnd:
        return "end of print statement";
      case K::Text:
        return "text";
      default:
        return "'" + t.text + "'";
    }
  }
  [[noreturn]] void unexpected() const { fail_at(cur(), "unexpected " + describe(cur())); }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail_at(cur(), fmt::format("expected '{}', got {}", op, describe(cur())));
  }
  std::string expect_name() {
    if (cur().kind != K::Name) fail_at(cur(), "expected a name, got " + describe(cur()));
    std::string n = cur().text;
    next();
    return n;
  }
  void expect_block_end() {
    if (cur().kind != K::BlockEnd) fail_at(cur(), "expected end of statement block, got " + describe(cur()));
    next();
  }

  ExprPtr node(EK kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
  }
  ExprPtr done(ExprPtr e) {  // the subtree's height, bounded
    int h = 0;
    for (const ExprPtr* c : {&e->a, &e->b, &e->c, &e->d})
      if (*c) h = std::max(h, (*c)->height);
    for (const ExprPtr& c : e->items)
      if (c) h = std::max(h, c->height);
    for (const auto& [k, c] : e->kwargs)
      if (c) h = std::max(h, c->height);
    e->height = h + 1;
    if (e->height > kMaxExprHeight) fail_at(cur(), fmt::format("an expression nests deeper than {}", kMaxExprHeight));
    return e;
  }

  Body subparse(std::initializer_list<std::string_view> end_tags);
  StmtPtr statement();
  StmtPtr parse_for(int line);
  StmtPtr parse_if(int line);
  StmtPtr parse_set(int line);
  StmtPtr parse_macro(int line);
  StmtPtr parse_filter_block(int line);
  StmtPtr parse_with(int line);
  Body body_until(std::initializer_list<std::string_view> end_tags, std::string* which);
  std::vector<std::string> assign_targets();

  ExprPtr tuple(bool with_condexpr = true, bool explicit_parens = false);
  ExprPtr expression(bool with_condexpr = true) { return with_condexpr ? condexpr() : or_expr(); }
  ExprPtr condexpr();
  ExprPtr or_expr();
  ExprPtr and_expr();
  ExprPtr not_expr();
  ExprPtr compare();
  ExprPtr math1();
  ExprPtr concat();
  ExprPtr math2();
  ExprPtr pow();
  ExprPtr unary(bool with_filter = true);
  ExprPtr primary();
  ExprPtr postfix(ExprPtr e);
  ExprPtr filter_expr(ExprPtr e);
  ExprPtr subscript(ExprPtr e);
  ExprPtr slice_or_index();
  ExprPtr call(ExprPtr e);
  void call_args(Expr& e);
  ExprPtr filter(ExprPtr e, bool start_inline);
  ExprPtr test(ExprPtr e);
  ExprPtr binary(EK kind, std::string op, ExprPtr a, ExprPtr b, int line) {
    ExprPtr e = node(kind, line);
    e->name = std::move(op);
    e->a = std::move(a);
    e->b = std::move(b);
    return done(std::move(e));
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;
  int loops_ = 0;  // for loops around the statement being parsed (0 again inside a macro)
};

// Statements until one of end_tags opens a block (left unconsumed: at the tag's name).
Body Parser::subparse(std::initializer_list<std::string_view> end_tags) {
  Depth depth(*this);
  Body body;
  for (;;) {
    const Token& t = cur();
    if (t.kind == K::End) {
      if (end_tags.size()) fail_at(t, fmt::format("unexpected end of template: missing '{}'", *(end_tags.end() - 1)));
      return body;
    }
    if (t.kind == K::Text) {
      auto s = std::make_unique<Stmt>();
      s->kind = SK::Text;
      s->line = t.line;
      s->text = t.text;
      body.push_back(std::move(s));
      next();
    } else if (t.kind == K::VarBegin) {
      auto s = std::make_unique<Stmt>();
      s->kind = SK::Output;
      s->line = t.line;
      next();
      s->expr = tuple();
      if (cur().kind != K::VarEnd) fail_at(cur(), "expected end of print statement, got " + describe(cur()));
      next();
      body.push_back(std::move(s));
    } else if (t.kind == K::BlockBegin) {
      next();
      if (cur().kind == K::Name &&
          std::find(end_tags.begin(), end_tags.end(), std::string_view(cur().text)) != end_tags.end())
        return body;
      body.push_back(statement());
    } else {
      unexpected();
    }
  }
}

// The statements of a block up to one of end_tags; consumes that tag's name and returns it.
Body Parser::body_until(std::initializer_list<std::string_view> end_tags, std::string* which) {
  Body body = subparse(end_tags);
  if (which) *which = cur().text;
  next();
  return body;
}

StmtPtr Parser::statement() {
  const Token& t = cur();
  if (t.kind != K::Name) fail_at(t, "expected a statement name, got " + describe(t));
  int line = t.line;
  std::string name = t.text;
  next();
  if (name == "for") return parse_for(line);
  if (name == "if") return parse_if(line);
  if (name == "set") return parse_set(line);
  if (name == "macro") return parse_macro(line);
  if (name == "filter") return parse_filter_block(line);
  if (name == "with") return parse_with(line);
  if (name == "break" || name == "continue") {
    if (loops_ == 0) fail_at(t, fmt::format("'{}' outside of a loop", name));
    auto s = std::make_unique<Stmt>();
    s->kind = name == "break" ? SK::Break : SK::Continue;
    s->line = line;
    expect_block_end();
    return s;
  }
  if (name == "generation") {  // Hugging Face's AssistantTracker tag: renders its body
    expect_block_end();
    auto s = std::make_unique<Stmt>();
    s->kind = SK::With;
    s->line = line;
    s->body = body_until({"endgeneration"}, nullptr);
    expect_block_end();
    return s;
  }
  static const char* const known[] = {"call", "include", "import", "from", "extends", "block", "autoescape", "do"};
  for (const char* k : known)
    if (name == k) fail_at(t, fmt::format("the '{}' statement is not supported", name));
  fail_at(t, fmt::format("unknown tag '{}'", name));
}

std::vector<std::string> Parser::assign_targets() {
  std::vector<std::string> names;
  bool parens = skip_op("(");
  do {
    if (parens && is_op(")")) break;
    names.push_back(expect_name());
  } while (skip_op(","));
  if (parens) expect_op(")");
  return names;
}

StmtPtr Parser::parse_for(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = SK::For;
  s->line = line;
  s->targets = assign_targets();
  if (!skip_name("in")) fail_at(cur(), "expected 'in', got " + describe(cur()));
  s->expr = tuple(false);
  if (skip_name("if")) s->cond = expression();
  if (is_name("recursive")) fail_at(cur(), "recursive for loops are not supported");
  expect_block_end();
  std::string which;
  ++loops_;
  s->body = body_until({"endfor", "else"}, &which);
  --loops_;
  if (which == "else") {
    expect_block_end();
    s->else_body = body_until({"endfor"}, nullptr);
  }
  expect_block_end();
  return s;
}

StmtPtr Parser::parse_if(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = SK::If;
  s->line = line;
  for (;;) {
    ExprPtr cond = tuple(false);
    expect_block_end();
    std::string which;
    Body body = body_until({"elif", "else", "endif"}, &which);
    s->branches.emplace_back(std::move(cond), std::move(body));
    if (which == "elif") continue;
    if (which == "else") {
      expect_block_end();
      s->else_body = body_until({"endif"}, nullptr);
    }
    expect_block_end();
    return s;
  }
}

StmtPtr Parser::parse_set(int line) {
  auto s = std::make_unique<Stmt>();
  s->line = line;
  if (cur().kind == K::Name && peek().kind == K::Op && peek().text == "." && peek(2).kind == K::Name) {
    s->targets.push_back(expect_name());
    next();
    s->attr = expect_name();
  } else {
    s->targets = assign_targets();
  }
  if (skip_op("=")) {
    s->kind = SK::Set;
    s->expr = tuple();
    expect_block_end();
    return s;
  }
  if (!s->attr.empty() || s->targets.size() != 1) fail_at(cur(), "expected '='");
  s->kind = SK::SetBlock;
  if (is_op("|")) s->expr = filter(node(EK::BlockResult, line), false);
  expect_block_end();
  s->body = body_until({"endset"}, nullptr);
  expect_block_end();
  return s;
}

StmtPtr Parser::parse_macro(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = SK::Macro;
  s->line = line;
  s->targets.push_back(expect_name());
  expect_op("(");
  while (!is_op(")")) {
    if (!s->params.empty()) expect_op(",");
    if (is_op(")")) break;
    std::string name = expect_name();
    ExprPtr def;
    if (skip_op("="))
      def = expression();
    else if (!s->params.empty() && s->params.back().second)
      fail_at(cur(), "non-default argument follows default argument");
    s->params.emplace_back(std::move(name), std::move(def));
  }
  next();
  expect_block_end();
  int loops = std::exchange(loops_, 0);
  s->body = body_until({"endmacro"}, nullptr);
  loops_ = loops;
  if (cur().kind == K::Name) next();  // {% endmacro name %}
  expect_block_end();
  return s;
}

StmtPtr Parser::parse_filter_block(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = SK::FilterBlock;
  s->line = line;
  s->expr = filter(node(EK::BlockResult, line), true);
  expect_block_end();
  s->body = body_until({"endfilter"}, nullptr);
  expect_block_end();
  return s;
}

StmtPtr Parser::parse_with(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = SK::With;
  s->line = line;
  while (cur().kind != K::BlockEnd) {
    if (!s->params.empty()) expect_op(",");
    std::string name = expect_name();
    expect_op("=");
    s->params.emplace_back(std::move(name), expression());
  }
  next();
  s->body = body_until({"endwith"}, nullptr);
  expect_block_end();
  return s;
}

// An expression, or a tuple when commas follow ({{ a, b }}, set a, b = 1, 2, (1, 2)).
ExprPtr Parser::tuple(bool with_condexpr, bool explicit_parens) {
  int line = cur().line;
  std::vector<ExprPtr> items;
  bool comma = false;
  for (;;) {
    if (!items.empty()) {
      if (!skip_op(",")) break;
      comma = true;
    }
    if (cur().kind == K::VarEnd || cur().kind == K::BlockEnd || is_op(")") || (is_name("if") && !with_condexpr)) break;
    items.push_back(expression(with_condexpr));
  }
  if (items.size() == 1 && !comma) return std::move(items[0]);
  if (items.empty() && !explicit_parens) fail_at(cur(), "expected an expression, got " + describe(cur()));
  ExprPtr e = node(EK::Tuple, line);
  e->items = std::move(items);
  return done(std::move(e));
}

ExprPtr Parser::condexpr() {
  Depth depth(*this);
  ExprPtr e = or_expr();
  while (is_name("if")) {
    int line = cur().line;
    next();
    ExprPtr c = node(EK::Cond, line);
    c->b = std::move(e);
    c->a = or_expr();
    if (skip_name("else")) c->c = condexpr();
    e = done(std::move(c));
  }
  return e;
}

ExprPtr Parser::or_expr() {
  ExprPtr e = and_expr();
  while (is_name("or")) {
    int line = cur().line;
    next();
    e = binary(EK::Or, "or", std::move(e), and_expr(), line);
  }
  return e;
}

ExprPtr Parser::and_expr() {
  ExprPtr e = not_expr();
  while (is_name("and")) {
    int line = cur().line;
    next();
    e = binary(EK::And, "and", std::move(e), not_expr(), line);
  }
  return e;
}

ExprPtr Parser::not_expr() {
  if (!is_name("not")) return compare();
  Depth depth(*this);
  ExprPtr e = node(EK::Not, cur().line);
  next();
  e->a = not_expr();
  return done(std::move(e));
}

ExprPtr Parser::compare() {
  int line = cur().line;
  ExprPtr first = math1();
  ExprPtr e;
  for (;;) {
    std::string op;
    if (cur().kind == K::Op && (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" ||
                                cur().text == ">" || cur().text == ">=")) {
      op = cur().text;
      next();
    } else if (is_name("in")) {
      op = "in";
      next();
    } else if (is_name("not") && peek().kind == K::Name && peek().text == "in") {
      op = "not in";
      next();
      next();
    } else {
      break;
    }
    if (!e) {
      e = node(EK::Compare, line);
      e->a = std::move(first);
    }
    e->ops.push_back(op);
    e->items.push_back(math1());
  }
  return e ? done(std::move(e)) : std::move(first);
}

ExprPtr Parser::math1() {
  ExprPtr e = concat();
  while (is_op("+") || is_op("-")) {
    std::string op = cur().text;
    int line = cur().line;
    next();
    e = binary(EK::Binary, op, std::move(e), concat(), line);
  }
  return e;
}

ExprPtr Parser::concat() {
  ExprPtr e = math2();
  while (is_op("~")) {
    int line = cur().line;
    next();
    e = binary(EK::Binary, "~", std::move(e), math2(), line);
  }
  return e;
}

ExprPtr Parser::math2() {
  ExprPtr e = pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    std::string op = cur().text;
    int line = cur().line;
    next();
    e = binary(EK::Binary, op, std::move(e), pow(), line);
  }
  return e;
}

ExprPtr Parser::pow() {
  ExprPtr e = unary();
  while (is_op("**")) {
    int line = cur().line;
    next();
    e = binary(EK::Binary, "**", std::move(e), unary(), line);
  }
  return e;
}

ExprPtr Parser::unary(bool with_filter) {
  Depth depth(*this);
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    e = node(is_op("-") ? EK::Neg : EK::Pos, cur().line);
    next();
    e->a = unary(false);
    e = done(std::move(e));
  } else {
    e = primary();
  }
  e = postfix(std::move(e));
  return with_filter ? filter_expr(std::move(e)) : std::move(e);
}

ExprPtr Parser::primary() {
  const Token& t = cur();
  int line = t.line;
  if (t.kind == K::Name) {
    ExprPtr e = node(EK::Literal, line);
    if (t.text == "true" || t.text == "True")
      e->value = Value(true);
    else if (t.text == "false" || t.text == "False")
      e->value = Value(false);
    else if (t.text == "none" || t.text == "None")
      e->value = Value::none();
    else {
      e->kind = EK::Name;
      e->name = t.text;
    }
    next();
    return e;
  }
  if (t.kind == K::String) {
    std::string s;
    while (cur().kind == K::String) {
      s += cur().text;
      next();
    }
    ExprPtr e = node(EK::Literal, line);
    e->value = Value(std::move(s));
    return e;
  }
  if (t.kind == K::Int || t.kind == K::Float) {
    ExprPtr e = node(EK::Literal, line);
    if (t.kind == K::Int) {
      int64_t v = 0;
      auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (r.ec != std::errc()) fail_at(t, "integer literal out of range: " + t.text);
      e->value = Value(v);
    } else {
      e->value = Value(std::strtod(t.text.c_str(), nullptr));
    }
    next();
    return e;
  }
  if (skip_op("(")) {
    ExprPtr e = tuple(true, true);
    expect_op(")");
    return e;
  }
  if (is_op("[") || is_op("{")) {
    bool dict = is_op("{");
    std::string close = dict ? "}" : "]";
    next();
    ExprPtr e = node(dict ? EK::Dict : EK::List, line);
    while (!is_op(close)) {
      if (!e->items.empty()) expect_op(",");
      if (is_op(close)) break;
      e->items.push_back(expression());
      if (dict) {
        expect_op(":");
        e->items.push_back(expression());
      }
    }
    next();
    return done(std::move(e));
  }
  unexpected();
}

ExprPtr Parser::postfix(ExprPtr e) {
  for (;;) {
    if (is_op(".") || is_op("["))
      e = subscript(std::move(e));
    else if (is_op("("))
      e = call(std::move(e));
    else
      return e;
  }
}

ExprPtr Parser::filter_expr(ExprPtr e) {
  for (;;) {
    if (is_op("|"))
      e = filter(std::move(e), false);
    else if (is_name("is"))
      e = test(std::move(e));
    else if (is_op("("))
      e = call(std::move(e));
    else
      return e;
  }
}

ExprPtr Parser::subscript(ExprPtr e) {
  int line = cur().line;
  if (skip_op(".")) {
    if (cur().kind == K::Int) {  // x.0 is x[0]
      ExprPtr g = node(EK::GetItem, line);
      g->a = std::move(e);
      g->b = node(EK::Literal, line);
      g->b->value = Value(int64_t(std::strtoll(cur().text.c_str(), nullptr, 10)));
      next();
      return done(std::move(g));
    }
    ExprPtr g = node(EK::GetAttr, line);
    g->a = std::move(e);
    g->name = expect_name();
    return done(std::move(g));
  }
  next();  // [
  ExprPtr index = slice_or_index();
  if (is_op(",")) fail_at(cur(), "tuple subscripts are not supported");
  expect_op("]");
  if (index->kind == EK::Slice) {
    index->a = std::move(e);
    return done(std::move(index));
  }
  ExprPtr g = node(EK::GetItem, line);
  g->a = std::move(e);
  g->b = std::move(index);
  return done(std::move(g));
}

// An index, or a slice with its object (a) still to fill: b, c, d are start, stop and step.
ExprPtr Parser::slice_or_index() {
  int line = cur().line;
  ExprPtr start;
  if (!is_op(":")) {
    start = expression();
    if (!is_op(":")) return start;
  }
  ExprPtr s = node(EK::Slice, line);
  s->b = std::move(start);
  next();  // :
  if (!is_op("]") && !is_op(",") && !is_op(":")) s->c = expression();
  if (skip_op(":") && !is_op("]") && !is_op(",")) s->d = expression();
  return s;
}

void Parser::call_args(Expr& e) {
  expect_op("(");
  while (!is_op(")")) {
    if (!e.items.empty() || !e.kwargs.empty()) expect_op(",");
    if (is_op(")")) break;
    if (is_op("*") || is_op("**")) fail_at(cur(), "*args and **kwargs in calls are not supported");
    if (cur().kind == K::Name && peek().kind == K::Op && peek().text == "=") {
      std::string key = cur().text;
      next();
      next();
      e.kwargs.emplace_back(std::move(key), expression());
    } else {
      if (!e.kwargs.empty()) fail_at(cur(), "positional argument follows keyword argument");
      e.items.push_back(expression());
    }
  }
  next();
}

ExprPtr Parser::call(ExprPtr e) {
  ExprPtr c = node(EK::Call, cur().line);
  c->a = std::move(e);
  call_args(*c);
  return done(std::move(c));
}

ExprPtr Parser::filter(ExprPtr e, bool start_inline) {
  while (is_op("|") || start_inline) {
    if (!start_inline) next();
    start_inline = false;
    ExprPtr f = node(EK::Filter, cur().line);
    f->name = expect_name();
    while (is_op(".") && peek().kind == K::Name) {
      next();
      f->name += "." + expect_name();
    }
    f->a = std::move(e);
    if (is_op("(")) call_args(*f);
    e = done(std::move(f));
  }
  return e;
}

ExprPtr Parser::test(ExprPtr e) {
  ExprPtr t = node(EK::Test, cur().line);
  next();  // is
  t->negate = skip_name("not");
  t->name = expect_name();
  while (is_op(".") && peek().kind == K::Name) {
    next();
    t->name += "." + expect_name();
  }
  t->a = std::move(e);
  const Token& c = cur();
  if (is_op("(")) {
    call_args(*t);
  } else if ((c.kind == K::Name || c.kind == K::String || c.kind == K::Int || c.kind == K::Float || is_op("[") ||
              is_op("{")) &&
             !is_name("else") && !is_name("or") && !is_name("and")) {
    if (is_name("is")) fail_at(c, "you cannot chain multiple tests with is");
    t->items.push_back(postfix(primary()));
  }
  return done(std::move(t));
}

}  // namespace

Body parse_template(std::string_view source) { return Parser(tokenize(source)).parse(); }

}  // namespace vkllm::jinja
