// libFuzzer target: the Jinja2 engine on arbitrary template text and conversations. The input is
// the template source, then (after the first NUL byte, if any) a JSON conversation (or, when it
// is not JSON, one user message holding those bytes). Anything but a vkllm::Error (a crash, a
// sanitizer report, a hang past the limits) is a bug.
#include <cstdint>
#include <string_view>

#include "error.h"
#include "text/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkllm;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t nul = input.find('\0');
  std::string_view source = input.substr(0, nul);
  std::string_view rest = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(rest, nullptr, false);
  if (messages.is_discarded())
    messages = nlohmann::ordered_json::array(
        {{{"role", "system"}, {"content", "S"}}, {{"role", "user"}, {"content", std::string(rest)}}});
  try {
    ChatTemplate t = ChatTemplate::parse(source);
    ChatTemplate::Options o{.bos_token = "<s>", .eos_token = "</s>", .now = 1736936400};
    o.limits = {.max_output = 1 << 20, .max_steps = 200'000, .max_call_depth = 32};
    o.tools = nlohmann::ordered_json::parse(
        R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}])");
    volatile size_t sink = t.render(messages, o).size();
    o.add_generation_prompt = false;
    o.extra = {{"enable_thinking", false}};
    sink = sink + t.render(messages, o).size();
  } catch (const Error&) {
  }
  return 0;
}
