// Parser: tokens -> syntax tree, with jinja2's grammar and operator precedence (jinja2/parser.py).
#pragma once
#include <string_view>

#include "text/jinja/nodes.h"

namespace vkllm::jinja {

// Statements and expressions nest at most this deep (the tree is walked recursively).
constexpr int kMaxNesting = 128;
constexpr int kMaxExprHeight = 256;

// Throws vkllm::Error "template: line L: ..." on a syntax error, an unsupported statement or
// nesting past the limits.
Body parse_template(std::string_view source);

}  // namespace vkllm::jinja
