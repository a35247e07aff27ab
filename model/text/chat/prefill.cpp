// The prompt that continues an assistant message, per family (the reasoning written between the
// family's tags as its templates render past reasoning).
#include "text/chat/prefill.h"

namespace vkllm {

namespace {

// How the family writes a reasoning block around its text: before and after.
std::pair<std::string, std::string> reasoning_frame(Reasoning r) {
  switch (r) {
    case Reasoning::Think:
      return {"<think>\n", "\n</think>\n\n"};
    case Reasoning::MistralThink:
      return {"[THINK]", "[/THINK]"};
    case Reasoning::Gemma4:
      return {"<|channel>thought\n", "<channel|>"};
    default:
      return {"", ""};
  }
}

}  // namespace

PrefilledPrompt prefill_prompt(const ChatFormat& f, const std::string& prompt, const std::string& bare,
                               const Prefill& p) {
  PrefilledPrompt out{.text = prompt};
  if (f.harmony()) {  // the prompt ends with <|start|>assistant
    if (p.reasoning_only || !p.reasoning.empty()) {
      out.text += "<|channel|>analysis<|message|>" + p.reasoning;
      if (p.reasoning_only) {
        out.opened = "<|channel|>analysis<|message|>";
        return out;
      }
      out.text += "<|end|><|start|>assistant";
    }
    out.text += "<|channel|>final<|message|>" + p.content;
    out.opened = "<|channel|>final<|message|>";
    return out;
  }
  auto [before, after] = reasoning_frame(f.reasoning);
  if (before.empty()) {
    out.text += p.content;
    return out;
  }
  // The generation prompt may already open (QwQ, Qwen3.5) or close (Qwen3 without thinking,
  // Gemma 4) a reasoning block: it is written again from its tag, with this message's reasoning.
  std::string_view generation = std::string_view(prompt).substr(prompt.starts_with(bare) ? bare.size() : prompt.size());
  size_t at = generation.rfind(f.reasoning_open());
  if (at != std::string_view::npos) out.text.resize(prompt.size() - generation.size() + at);
  if (at != std::string_view::npos || !p.reasoning.empty() || p.reasoning_only) {
    out.text += before + p.reasoning;
    if (p.reasoning_only) {
      out.opened = before;
      return out;
    }
    out.text += after;
  }
  out.text += p.content;
  return out;
}

}  // namespace vkllm
