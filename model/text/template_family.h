// The family of a chat template, recognised by the turn markers its source writes (ChatML's
// <|im_start|>, Llama 3's <|start_header_id|>, Gemma's <start_of_turn>, ...): what `vkllm info`
// and chat's /show template call it. A name for people, never a switch for code: templates are
// always rendered as written.
#pragma once
#include <string>
#include <string_view>

namespace vkllm {

// "ChatML", "Llama 3", "Gemma", "Mistral [INST]", ...; "unrecognised" when no marker is known.
std::string chat_template_family(std::string_view source);

}  // namespace vkllm
