// Lexer: template source -> tokens, with jinja2's whitespace control applied to the text between
// tags as Hugging Face configures it (trim_blocks, lstrip_blocks, `-` and `+` markers, newlines
// normalised to \n and one trailing newline dropped). Comments vanish; {% raw %} becomes text.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace vkllm::jinja {

struct Token {
  enum class Kind { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, End };
  Kind kind;
  std::string text;  // the text, name, operator, unescaped string or number's digits
  int line;
};

// Throws vkllm::Error "template: line L: ..." on an unterminated tag, comment or string, or an
// unexpected character.
std::vector<Token> tokenize(std::string_view source);

}  // namespace vkllm::jinja
