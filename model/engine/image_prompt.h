// Prompts with images evaluated as llama.cpp's libmtmd evaluates them (mtmd_helper_eval_chunks):
// text through Engine::eval and each image's encoder rows through Engine::eval_image (its grid for
// M-RoPE, its attention for gemma). The cutting is engine/media_prompt.h.
#pragma once
#include <span>

#include "engine/engine.h"
#include "engine/media_prompt.h"

namespace vkllm {

class VisionEncoder;

// Evaluates the parts after what the engine holds, encoding each image on the GPU; the logits of
// the last text part's last token (empty when the parts end with an image).
std::span<const float> eval_image_prompt(Engine& engine, VisionEncoder& encoder, std::span<const PromptPart> parts,
                                         std::span<const VisionInput> images);

}  // namespace vkllm
