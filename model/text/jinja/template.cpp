// jinja::Template: parse once, render many times; each render gets fresh scopes and budgets.
#include "text/jinja/template.h"

#include <fmt/format.h>

#include "error.h"
#include "text/jinja/builtins.h"
#include "text/jinja/parser.h"

namespace vkllm::jinja {

Template Template::parse(std::string_view source) {
  size_t bad = invalid_utf8(source);
  if (bad != std::string_view::npos) throw Error(fmt::format("template: invalid UTF-8 at byte {}", bad));
  Template t;
  t.body_ = std::make_shared<const Body>(parse_template(source));
  return t;
}

std::string Template::render(const std::vector<std::pair<std::string, Value>>& variables, const Limits& limits) const {
  auto globals = std::make_shared<Scope>();
  add_builtin_globals(*globals);
  auto scope = std::make_shared<Scope>(globals);
  for (const auto& [name, value] : variables) scope->set(name, value);
  Evaluator ev(limits);
  try {
    return ev.render(*body_, scope);
  } catch (const TemplateError& e) {  // raised outside any statement (cannot happen; kept as a net)
    throw Error(std::string("template: ") + e.what());
  }
}

}  // namespace vkllm::jinja
