// Turn markers and the template families they belong to, most specific first (Phi-4 writes
// ChatML's markers too; gpt-oss writes Phi-3's <|end|>).
#include "text/template_family.h"

#include <initializer_list>
#include <utility>

namespace vkllm {

std::string chat_template_family(std::string_view source) {
  struct Family {
    const char* name;
    std::initializer_list<std::string_view> markers;  // all present
  };
  static const Family families[] = {
      {"Harmony (gpt-oss)", {"<|channel|>"}},
      {"Phi-4", {"<|im_sep|>"}},
      {"ChatML", {"<|im_start|>"}},
      {"Llama 3", {"<|start_header_id|>"}},
      {"Gemma", {"<start_of_turn>"}},
      {"Gemma 4", {"<|turn>"}},
      {"Phi-3", {"<|user|>", "<|end|>"}},
      {"GLM", {"[gMASK]"}},
      {"DeepSeek", {"<\xef\xbd\x9cUser\xef\xbd\x9c>"}},  // <｜User｜>, full-width bars
      {"Mistral [INST]", {"[INST]"}},
      {"Command R", {"<|START_OF_TURN_TOKEN|>"}},
      {"Granite", {"<|start_of_role|>"}},
      {"Kimi", {"<|im_user|>"}},
      {"Zephyr", {"<|user|>"}},
      {"Nemotron-H v2", {"<SPECIAL_11>"}},
  };
  for (const Family& f : families) {
    bool all = true;
    for (std::string_view m : f.markers) all = all && source.find(m) != std::string_view::npos;
    if (all) return f.name;
  }
  return "unrecognised";
}

}  // namespace vkllm
