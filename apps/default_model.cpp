// Embeds models/default.gguf (path from CMake) in .rodata with the assembler's .incbin, so the
// binary runs the demo without any file beside it.
#include "default_model.h"

__asm__(
    ".section .rodata\n"
    ".balign 64\n"
    ".global vkllm_default_model_begin\n"
    "vkllm_default_model_begin:\n"
    ".incbin \"" VKLLM_DEFAULT_MODEL
    "\"\n"
    ".global vkllm_default_model_end\n"
    "vkllm_default_model_end:\n"
    ".previous\n");

extern "C" const std::byte vkllm_default_model_begin[];
extern "C" const std::byte vkllm_default_model_end[];

namespace vkllm::cli {

std::span<const std::byte> default_model_bytes() { return {vkllm_default_model_begin, vkllm_default_model_end}; }

}  // namespace vkllm::cli
