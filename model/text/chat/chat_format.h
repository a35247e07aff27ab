// ChatFormat: how a model family writes tool calls and reasoning in its replies, recognised from
// its chat template (the markup the template renders for past calls is what the model learnt to
// write). One enum value per tool-call syntax:
//   Hermes       <tool_call>{"name": ..., "arguments": {...}}</tool_call>    Hermes, Qwen2.5, Qwen3, Granite 4
//   QwenXml      <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>
//                                                                          Qwen3-Coder, Qwen3.5
//   Llama3       {"name": ..., "parameters": {...}}                          Llama 3.1 / 3.2 / 3.3
//   MistralNemo  [TOOL_CALLS][{"name": ..., "arguments": {...}, "id": ...}] Mistral Nemo
//   Mistral      [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}                      Mistral Small 3.2, Devstral
//   DeepSeekR1   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME ```json ...```
//   DeepSeekV31  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}
//   GptOss       harmony: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}
//   Granite      <|tool_call|>[{"name": ..., "arguments": {...}}]              Granite 3.x
//   Generic      {"tool_calls": [{"name": ..., "arguments": {...}}]}           any other template
// Reasoning: <think>...</think> where the template knows the tags; gpt-oss's analysis channel.
#pragma once
#include <string_view>

namespace vkllm {

enum class ToolCallFormat {
  Generic,
  Hermes,
  QwenXml,
  Llama3,
  MistralNemo,
  Mistral,
  DeepSeekR1,
  DeepSeekV31,
  GptOss,
  Granite
};

const char* to_string(ToolCallFormat f);

struct ChatFormat {
  ToolCallFormat tools = ToolCallFormat::Generic;
  bool think_tags = false;  // replies may open with <think>...</think>
  bool harmony() const { return tools == ToolCallFormat::GptOss; }

  // From a chat template's source; vkllm's ChatML fallback gets Hermes.
  static ChatFormat detect(std::string_view template_source);
};

// Whether a rendered prompt leaves the model inside its reasoning (DeepSeek-R1's templates end
// the generation prompt with <think>): the reply then starts with reasoning and no opening tag.
bool prompt_opens_reasoning(const ChatFormat& f, std::string_view prompt);

}  // namespace vkllm
