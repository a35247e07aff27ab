// libFuzzer target: reading replies (model/text/chat: every family's tool-call parser, reasoning
// split, harmony). Byte 0 picks the family, byte 1 the options (reasoning split, reasoning open,
// tools offered); the rest is the reply. It is read whole, and as a stream: when the whole reply
// reads as tool calls, the result for each prefix must only extend the one before, and the whole
// reply's the last (content and reasoning grow, calls keep their names and their arguments
// grow), which is what the server's deltas rely on. A crash or a sanitizer report is a bug.
#include <cstdint>
#include <string_view>

#include "error.h"
#include "text/chat/chat_output.h"

namespace {

using namespace vkllm;

constexpr ToolCallFormat kFormats[] = {
    ToolCallFormat::Generic,     ToolCallFormat::Hermes,  ToolCallFormat::QwenXml,    ToolCallFormat::Llama3,
    ToolCallFormat::MistralNemo, ToolCallFormat::Mistral, ToolCallFormat::DeepSeekR1, ToolCallFormat::DeepSeekV31,
    ToolCallFormat::GptOss,      ToolCallFormat::Granite, ToolCallFormat::Gemma4,     ToolCallFormat::NemotronV2,
    ToolCallFormat::Lfm2,        ToolCallFormat::Unknown};
constexpr Reasoning kReasoning[] = {Reasoning::Think, Reasoning::None, Reasoning::MistralThink, Reasoning::Gemma4};

bool extends(const ChatReply& before, const ChatReply& now) {
  if (!now.content.starts_with(before.content) || !now.reasoning.starts_with(before.reasoning)) return false;
  if (now.tool_calls.size() < before.tool_calls.size()) return false;
  for (size_t i = 0; i < before.tool_calls.size(); ++i)
    if (now.tool_calls[i].name != before.tool_calls[i].name ||
        !now.tool_calls[i].arguments.starts_with(before.tool_calls[i].arguments))
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  static const nlohmann::ordered_json tools = nlohmann::ordered_json::parse(
      R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties":
          {"a": {"type": "string"}, "n": {"type": "integer"}, "e": {"enum": ["x", "y"]}}}}}])");
  ToolCallFormat f = kFormats[data[0] % std::size(kFormats)];
  ChatFormat format{.tools = f, .reasoning = kReasoning[(data[0] / 16) % 4]};
  std::string opened = (data[1] & 2) != 0 ? std::string(format.reasoning_open()) + "\n" : "";
  ChatReplyOptions o{.format = format,
                     .split_reasoning = (data[1] & 1) != 0,
                     .reasoning_open = opened,
                     .tool_calls = (data[1] & 4) != 0,
                     .tools = &tools};
  std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  try {
    ChatReply whole = parse_chat_reply(text, o, false);
    // A reply that reads as calls must have streamed consistently; a reply that turns out not to
    // be calls may retract what a prefix showed (the server then keeps what it sent).
    bool calls = !whole.tool_calls.empty();
    ChatReply before;
    size_t step = text.size() > 512 ? text.size() / 256 : 1;  // every prefix of short replies
    for (size_t n = 0; n <= text.size(); n += step) {
      ChatReply now = parse_chat_reply(text.substr(0, n), o, true);
      if (calls && !extends(before, now)) __builtin_trap();
      before = std::move(now);
    }
    if (calls && !extends(before, whole)) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
