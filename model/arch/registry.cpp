// The registry: every family vkllm runs. Adding one is a file in model/arch/ and a line here.
#include <fmt/format.h>

#include "arch/architecture.h"
#include "error.h"

namespace vkllm {

extern const Architecture llama_architecture, mistral_architecture, qwen2_architecture, qwen2moe_architecture,
    qwen3_architecture, qwen3moe_architecture, gemma2_architecture, gemma3_architecture, phi3_architecture,
    deepseek2_architecture, qwen35_architecture, qwen35moe_architecture, gpt_oss_architecture, gemma4_architecture,
    mistral3_architecture, smollm3_architecture, nemotron_h_architecture, nemotron_h_moe_architecture,
    lfm2_architecture, lfm2moe_architecture, granitehybrid_architecture;

namespace {

constexpr const Architecture* kAll[] = {&llama_architecture,     &mistral_architecture,    &qwen2_architecture,
                                        &qwen2moe_architecture,  &qwen3_architecture,      &qwen3moe_architecture,
                                        &gemma2_architecture,    &gemma3_architecture,     &phi3_architecture,
                                        &deepseek2_architecture, &qwen35_architecture,     &qwen35moe_architecture,
                                        &gpt_oss_architecture,   &gemma4_architecture,     &mistral3_architecture,
                                        &smollm3_architecture,   &nemotron_h_architecture, &nemotron_h_moe_architecture,
                                        &lfm2_architecture,      &lfm2moe_architecture,    &granitehybrid_architecture};

}  // namespace

std::span<const Architecture* const> architectures() { return kAll; }

const Architecture* find_architecture(std::string_view gguf_name) {
  for (const Architecture* a : kAll)
    for (std::string_view n : a->gguf_names)
      if (n == gguf_name) return a;
  return nullptr;
}

const Architecture& architecture(std::string_view name) {
  for (const Architecture* a : kAll)
    if (a->name == name) return *a;
  throw Error(fmt::format("unknown architecture '{}' (known: {})", name, known_architectures()));
}

std::string known_architectures() {
  std::string s;
  for (const Architecture* a : kAll)
    for (std::string_view n : a->gguf_names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace vkllm
