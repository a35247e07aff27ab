// Assistant prefill: a request that ends with the beginning of the assistant's reply
// (continue_final_message, as llama-server and vLLM take it; a trailing assistant turn, as
// llama-server, Ollama and Anthropic's Messages API take it). The model continues that message:
// the prompt is the conversation before it with the generation prompt, then the message's
// reasoning and content written as the family writes them, left open. The reply holds only what
// the model adds.
#pragma once
#include <string>

#include "text/chat/chat_format.h"

namespace vkllm {

struct Prefill {
  std::string reasoning, content;
  bool reasoning_only = false;  // continue the reasoning itself (the content is not begun)
};

struct PrefilledPrompt {
  std::string text;
  // What the reply continues, for the reader (ChatReplyOptions::reasoning_open): the reasoning
  // tag or harmony header left open ("<think>\n", "<|channel|>final<|message|>"), or "".
  std::string opened;
  bool reasoning_off = false;  // the prompt closed an empty reasoning block: the reply does not reason
};

// prompt: the conversation before the message, rendered with the generation prompt; bare: the
// same without it (so that the generation prompt's own reasoning tags can be told apart).
PrefilledPrompt prefill_prompt(const ChatFormat& f, const std::string& prompt, const std::string& bare,
                               const Prefill& p);

}  // namespace vkllm
