// ChatTemplate: a model's chat template (tokenizer.chat_template, a Jinja2 program) rendered as
// Hugging Face's apply_chat_template renders it: the same variables (messages, tools, documents,
// add_generation_prompt, bos_token, eos_token, extra keyword arguments) and globals
// (raise_exception, strftime_now), byte for byte. Models without a template get ChatML.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "text/jinja/template.h"

namespace vkllm {

class GgufFile;

class ChatTemplate {
 public:
  // Parses template source; throws vkllm::Error with one line ("template: line L: ...") on
  // syntax errors.
  static ChatTemplate parse(std::string_view source);
  // The model's tokenizer.chat_template, or kChatMlTemplate when the file has none; bos/eos texts
  // from the model's vocabulary ("" when it has none).
  static ChatTemplate from_gguf(const GgufFile& f);

  struct Options {
    std::string bos_token, eos_token;
    bool add_generation_prompt = true;
    nlohmann::ordered_json tools;  // null or an array (a nlohmann::json converts, keys then sorted)
    nlohmann::ordered_json extra;  // extra template variables (e.g. {"enable_thinking": false}); null or object
    int64_t now = 0;               // strftime_now's time, Unix seconds read as UTC; 0: the local clock
    jinja::Limits limits;
  };
  // messages: a JSON array of {role, content, ...} (content a string, null or a list of parts;
  // tool_calls, reasoning_content and other keys pass through). Throws vkllm::Error (one line)
  // on raise_exception, resource limits, unsupported syntax and bad messages. Object keys keep
  // their order (ordered_json), as Python's json does, which `tojson` and `items()` show.
  std::string render(const nlohmann::ordered_json& messages, const Options& options) const;

  const std::string& bos_token() const { return bos_; }  // from_gguf's texts ("" when parsed)
  const std::string& eos_token() const { return eos_; }
  const std::string& source() const { return source_; }
  bool is_fallback() const { return fallback_; }  // from_gguf found no template

 private:
  jinja::Template template_;
  std::string source_, bos_, eos_;
  bool fallback_ = false;
};

// The template used for models that carry none: ChatML (<|im_start|>role\ncontent<|im_end|>\n).
extern const char* const kChatMlTemplate;

}  // namespace vkllm
