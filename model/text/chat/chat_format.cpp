// Recognising a family's reply syntax from the markup its template writes.
#include "text/chat/chat_format.h"

namespace vkllm {

const char* to_string(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::Hermes:
      return "hermes";
    case ToolCallFormat::QwenXml:
      return "qwen-xml";
    case ToolCallFormat::Llama3:
      return "llama3";
    case ToolCallFormat::MistralNemo:
      return "mistral-nemo";
    case ToolCallFormat::Mistral:
      return "mistral";
    case ToolCallFormat::DeepSeekR1:
      return "deepseek-r1";
    case ToolCallFormat::DeepSeekV31:
      return "deepseek-v3.1";
    case ToolCallFormat::GptOss:
      return "gpt-oss";
    case ToolCallFormat::Granite:
      return "granite";
    default:
      return "generic";
  }
}

ChatFormat ChatFormat::detect(std::string_view src) {
  auto has = [&](std::string_view s) { return src.find(s) != std::string_view::npos; };
  ChatFormat f;
  if (has("<|channel|>") && has("<|message|>"))
    f.tools = ToolCallFormat::GptOss;
  else if (has("<function=") && has("<parameter="))
    f.tools = ToolCallFormat::QwenXml;
  else if (has("<｜tool▁calls▁begin｜>") || has("<｜tool▁call▁begin｜>"))
    f.tools = has("```json") ? ToolCallFormat::DeepSeekR1 : ToolCallFormat::DeepSeekV31;
  else if (has("[TOOL_CALLS]"))
    f.tools = has("[ARGS]") ? ToolCallFormat::Mistral : ToolCallFormat::MistralNemo;
  else if (has("<|tool_call|>"))
    f.tools = ToolCallFormat::Granite;
  else if (has("<tool_call>") || has("<|im_start|>"))  // ChatML families write Hermes calls
    f.tools = ToolCallFormat::Hermes;
  else if (has("<|python_tag|>") || (has("<|start_header_id|>") && has("\"parameters\"")))
    f.tools = ToolCallFormat::Llama3;
  f.think_tags = !f.harmony() && has("<think>");
  return f;
}

bool prompt_opens_reasoning(const ChatFormat& f, std::string_view prompt) {
  if (!f.think_tags) return false;
  size_t end = prompt.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return false;
  std::string_view body = prompt.substr(0, end + 1);
  return body.ends_with("<think>");
}

}  // namespace vkllm
