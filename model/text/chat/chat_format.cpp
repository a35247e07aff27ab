// Recognising a family's reply syntax from the markup its template writes. Families whose tool
// syntax vkllm does not read are recognised first, by markup only they write, so that none of
// them is read as a known syntax it merely resembles (GLM-4 and Ling write <tool_call> but not
// Hermes' JSON; Seed-OSS writes <function= but not Qwen's XML; Functionary writes Llama 3's headers).
#include "text/chat/chat_format.h"

#include <initializer_list>

#include "text/template_family.h"

namespace vkllm {

namespace {

struct UnknownFamily {
  const char* name;
  std::initializer_list<std::string_view> markers;  // all present
};

const UnknownFamily kUnknown[] = {
    {"Ling", {"<arg_key>", "<|role_end|>"}},
    {"GLM-4", {"<arg_key>"}},
    {"MiniMax-M2", {"<minimax:tool_call>"}},
    {"MiniMax-M1", {"<beginning_of_sentence>", "<tool_calls>"}},
    {"MiniCPM", {"<tool_sep>"}},
    {"Apriel", {"<available_tools>"}},
    {"Seed-OSS", {"<seed:tool_call>"}},
    {"Functionary v3.2", {">>>all", "<|start_header_id|>"}},
    {"Functionary v3.1", {"<function=", "<|start_header_id|>"}},
    {"Kimi K2", {"<|tool_calls_section_begin|>"}},
    {"Command R", {"<|START_ACTION|>"}},
};

}  // namespace

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
    case ToolCallFormat::Gemma4:
      return "gemma4";
    case ToolCallFormat::NemotronV2:
      return "nemotron-v2";
    case ToolCallFormat::Lfm2:
      return "lfm2";
    case ToolCallFormat::Unknown:
      return "unknown";
    default:
      return "generic";
  }
}

std::string_view ChatFormat::reasoning_open() const {
  switch (reasoning) {
    case Reasoning::Think:
      return "<think>";
    case Reasoning::MistralThink:
      return "[THINK]";
    case Reasoning::Gemma4:
      return "<|channel>thought";
    default:
      return "";
  }
}

std::string_view ChatFormat::reasoning_close() const {
  switch (reasoning) {
    case Reasoning::Think:
      return "</think>";
    case Reasoning::MistralThink:
      return "[/THINK]";
    case Reasoning::Gemma4:
      return "<channel|>";
    default:
      return "";
  }
}

std::string_view ChatFormat::call_in_reasoning() const {
  return tools == ToolCallFormat::QwenXml && reasoning == Reasoning::Think ? "<tool_call>" : "";
}

ChatFormat ChatFormat::detect(std::string_view src) {
  auto has = [&](std::string_view s) { return src.find(s) != std::string_view::npos; };
  ChatFormat f;
  if (has("<|channel|>") && has("<|message|>")) {
    f.tools = ToolCallFormat::GptOss;
    return f;
  }
  if (has("<|tool_call>") && has("<|turn>")) {
    f.tools = ToolCallFormat::Gemma4;
    f.reasoning = Reasoning::Gemma4;
    return f;
  }
  for (const UnknownFamily& u : kUnknown) {
    bool all = true;
    for (std::string_view m : u.markers) all = all && has(m);
    if (all) {
      f.tools = ToolCallFormat::Unknown;
      f.unknown = u.name;
      break;
    }
  }
  if (f.tools == ToolCallFormat::Unknown)
    ;
  else if (has("<|tool_list_start|>") || has("<|tool_call_start|>") || has("List of tools: ["))  // LFM2, LFM2.5
    f.tools = ToolCallFormat::Lfm2;
  else if (has("<TOOLCALL>"))
    f.tools = ToolCallFormat::NemotronV2;
  else if (has("<function=") && has("<parameter="))
    f.tools = ToolCallFormat::QwenXml;
  else if (has("<｜tool▁calls▁begin｜>") || has("<｜tool▁call▁begin｜>"))
    f.tools = has("```json") ? ToolCallFormat::DeepSeekR1 : ToolCallFormat::DeepSeekV31;
  else if (has("[TOOL_CALLS]"))
    f.tools = has("[ARGS]") ? ToolCallFormat::Mistral : ToolCallFormat::MistralNemo;
  else if (has("<|tool_call|>"))
    f.tools = ToolCallFormat::Granite;
  else if (has("<tool_call>") || (has("<|im_start|>") && !has("tool_calls")))  // ChatML families write Hermes calls
    f.tools = ToolCallFormat::Hermes;
  else if (has("<|python_tag|>") || (has("<|start_header_id|>") && has("\"parameters\"")))
    f.tools = ToolCallFormat::Llama3;
  else if (has("tool_calls")) {  // it renders calls, in markup vkllm does not know
    f.tools = ToolCallFormat::Unknown;
    f.unknown = chat_template_family(src);
  }
  if (has("[THINK]"))
    f.reasoning = Reasoning::MistralThink;
  else if (has("<think>"))
    f.reasoning = Reasoning::Think;
  return f;
}

bool prompt_closes_reasoning(const ChatFormat& f, std::string_view prompt) {
  std::string_view close = f.reasoning_close();
  size_t end = prompt.find_last_not_of(" \t\r\n");
  return !close.empty() && end != std::string_view::npos && prompt.substr(0, end + 1).ends_with(close);
}

std::string prompt_opens_reasoning(const ChatFormat& f, std::string_view prompt) {
  std::string_view open = f.reasoning_open();
  if (open.empty()) return "";
  size_t end = prompt.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos || !prompt.substr(0, end + 1).ends_with(open)) return "";
  return std::string(prompt.substr(end + 1 - open.size()));
}

}  // namespace vkllm
