// The family `vkllm info` and chat's /show name for a chat template (text/template_family.h), on
// the real templates of tests/data/templates.
#include <fstream>
#include <sstream>

#include "catch.h"
#include "text/chat_template.h"
#include "text/template_family.h"

namespace {

std::string family_of(const std::string& file) {
  std::ifstream in(std::string(VKLLM_SOURCE_DIR) + "/tests/data/templates/" + file);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return vkllm::chat_template_family(ss.str());
}

}  // namespace

TEST_CASE("chat template families are told by their turn markers", "[chat_template]") {
  CHECK(family_of("Qwen-Qwen2.5-7B-Instruct.jinja") == "ChatML");
  CHECK(family_of("HuggingFaceTB-SmolLM3-3B.jinja") == "ChatML");
  CHECK(family_of("meta-llama-Llama-3.1-8B-Instruct.jinja") == "Llama 3");
  CHECK(family_of("google-gemma-2-2b-it.jinja") == "Gemma");
  CHECK(family_of("google-gemma-4-31B-it.jinja") == "Gemma 4");
  CHECK(family_of("microsoft-Phi-3.5-mini-instruct.jinja") == "Phi-3");
  CHECK(family_of("openai-gpt-oss-120b.jinja") == "Harmony (gpt-oss)");
  CHECK(family_of("deepseek-ai-DeepSeek-V3.1.jinja") == "DeepSeek");
  CHECK(family_of("mistralai-Mistral-Nemo-Instruct-2407.jinja") == "Mistral [INST]");
  CHECK(family_of("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja") == "Command R");
  CHECK(family_of("ibm-granite-granite-4.0.jinja") == "Granite");
  CHECK(family_of("GLM-4.6.jinja") == "GLM");
  CHECK(family_of("moonshotai-Kimi-K2.jinja") == "Kimi");
  CHECK(family_of("NVIDIA-Nemotron-Nano-v2.jinja") == "Nemotron-H v2");
  CHECK(family_of("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja") == "ChatML");
  CHECK(family_of("LFM2.5-8B-A1B.jinja") == "ChatML");
  CHECK(vkllm::chat_template_family(vkllm::kChatMlTemplate) == "ChatML");
  CHECK(vkllm::chat_template_family("{{ messages[0].content }}") == "unrecognised");
}
