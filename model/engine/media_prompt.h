// Prompts with images, as llama.cpp's libmtmd cuts them (mtmd_tokenize): the text is cut at each
// media marker; each piece is tokenized on its own (special tokens parsed, no BOS), each image is
// wrapped in its projector's begin and end text (ProjectorConfig::image_begin/end:
// "<|vision_start|>" ... "<|vision_end|>" for Qwen), and BOS leads the whole when the model adds
// one. No GPU here: the server's request reading (and its fuzzer) use it alone;
// engine/image_prompt.h evaluates the parts.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "arch/projector.h"
#include "image/image_preprocess.h"
#include "text/tokenizer.h"

namespace vkllm {

// llama.cpp's default media marker (mtmd_default_marker).
inline constexpr std::string_view kMediaMarker = "<__media__>";

// A prompt cut into text and images, in order.
struct PromptPart {
  std::vector<int32_t> tokens;  // text
  int image = -1;               // >= 0: the image of that index, in place of tokens
};

// Throws when the markers and n_images disagree ("the prompt has 2 image markers for 1 image").
std::vector<PromptPart> split_image_prompt(const Tokenizer& tok, const ProjectorConfig& c, std::string_view prompt,
                                           size_t n_images, bool add_special = true);
// How many tokens the parts take in the context (an image: its grid's tokens).
uint32_t prompt_tokens(std::span<const PromptPart> parts, std::span<const VisionInput> images);

}  // namespace vkllm
