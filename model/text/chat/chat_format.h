// ChatFormat: how a model family writes tool calls and reasoning in its replies, recognised from
// its chat template (the markup the template renders for past calls is what the model learnt to
// write). One enum value per tool-call syntax:
//   Hermes       <tool_call>{"name": ..., "arguments": {...}}</tool_call>    Hermes, Qwen2.5, Qwen3, Granite 4
//   QwenXml      <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>
//                                                                          Qwen3-Coder, Qwen3.5, Nemotron-3
//   Llama3       {"name": ..., "parameters": {...}}                          Llama 3.1 / 3.2 / 3.3
//   MistralNemo  [TOOL_CALLS][{"name": ..., "arguments": {...}, "id": ...}] Mistral Nemo
//   Mistral      [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}                      Mistral Small 3.2, Devstral, Ministral 3
//   DeepSeekR1   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME ```json ...```
//   DeepSeekV31  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}
//   GptOss       harmony: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}
//   Granite      <|tool_call|>[{"name": ..., "arguments": {...}}]              Granite 3.x
//   Gemma4       <|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|>     Gemma 4
//   NemotronV2   <TOOLCALL>[{"name": ..., "arguments": {...}}]</TOOLCALL>      Nemotron Nano v2 (Nemotron-H)
//   Lfm2         <|tool_call_start|>[NAME(key="text", n=1)]<|tool_call_end|>   LFM2, LFM2.5 (Python calls)
//   Generic      {"tool_calls": [{"name": ..., "arguments": {...}}]}           a template that renders no calls
//   Unknown      the template writes calls in a syntax vkllm does not read (GLM-4, MiniMax, Ling,
//                MiniCPM, Apriel, Seed-OSS, Functionary, Kimi K2, Command R, or any other that renders
//                tool_calls in no known markup): served without a tool reader, requests with tools refused.
// Reasoning: <think>...</think> where the template knows the tags, Ministral/Magistral's
// [THINK]...[/THINK], Gemma 4's <|channel>thought...<channel|>, gpt-oss's analysis channel.
#pragma once
#include <string>
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
  Granite,
  Gemma4,
  NemotronV2,
  Lfm2,
  Unknown
};

enum class Reasoning { None, Think, MistralThink, Gemma4 };

const char* to_string(ToolCallFormat f);

struct ChatFormat {
  ToolCallFormat tools = ToolCallFormat::Generic;
  Reasoning reasoning = Reasoning::None;
  std::string unknown;  // tools == Unknown: the template's family, for messages ("GLM-4")
  bool harmony() const { return tools == ToolCallFormat::GptOss; }
  bool reasons() const { return reasoning != Reasoning::None || harmony(); }
  // The tags around a reasoning block ("<think>", "</think>"); empty without them.
  std::string_view reasoning_open() const;
  std::string_view reasoning_close() const;
  // The call marker that ends reasoning as its closing tag does, for a family that calls tools
  // from inside its reasoning without closing it (Qwen3.5's "<tool_call>", as llama.cpp reads
  // it: the reasoning ends at whichever comes first); empty for the others.
  std::string_view call_in_reasoning() const;

  // From a chat template's source; vkllm's ChatML fallback gets Hermes.
  static ChatFormat detect(std::string_view template_source);
};

// Whether a rendered prompt leaves the model inside its reasoning (DeepSeek-R1's and Qwen3.5's
// templates end the generation prompt with <think>): the reply then starts with reasoning and no
// opening tag. Returns the prompt's tail from the opening tag on ("<think>\n"), empty when it
// does not (what reasoning_format none gives back in front of the reply).
std::string prompt_opens_reasoning(const ChatFormat& f, std::string_view prompt);
// Whether a rendered prompt ends with a closed reasoning block (Qwen3's and Gemma 4's templates
// with thinking off write an empty one): the reply is not to reason.
bool prompt_closes_reasoning(const ChatFormat& f, std::string_view prompt);

}  // namespace vkllm
