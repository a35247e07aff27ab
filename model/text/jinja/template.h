// jinja::Template: a parsed Jinja2 template, rendered over variables under Limits. The engine
// behind ChatTemplate (text/chat_template.h), usable for any jinja2 text with Hugging Face's
// settings (trim_blocks, lstrip_blocks, loopcontrols, no autoescape).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/jinja/evaluator.h"

namespace vkllm::jinja {

class Template {
 public:
  // Throws vkllm::Error "template: line L: ..." on syntax errors and invalid UTF-8.
  static Template parse(std::string_view source);
  // Throws vkllm::Error "template: line L: ..." on any runtime failure or limit.
  std::string render(const std::vector<std::pair<std::string, Value>>& variables, const Limits& limits = {}) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace vkllm::jinja
