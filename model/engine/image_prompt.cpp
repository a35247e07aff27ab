// Prompts with images (image_prompt.h).
#include "engine/image_prompt.h"

#include <fmt/format.h>

#include "error.h"
#include "graph/vision_encoder.h"

namespace vkllm {

std::span<const float> eval_image_prompt(Engine& engine, VisionEncoder& encoder, std::span<const PromptPart> parts,
                                         std::span<const VisionInput> images) {
  const ProjectorConfig& c = encoder.config();
  ENSURE(
      c.embd_width() == engine.config().dim,
      fmt::format("the projector gives rows of {} values and the model takes {}: the two files do not belong together",
                  c.embd_width(), engine.config().dim));
  std::span<const float> logits;
  for (const PromptPart& p : parts) {
    if (p.image < 0) {
      logits = engine.eval(p.tokens);
      continue;
    }
    const VisionInput& in = images[size_t(p.image)];
    std::vector<float> rows = encoder.encode(in.grid, in.pixels);
    engine.eval_image(rows, in.grid.tokens_x, in.grid.tokens_y, c.image_attention(engine.config().dim));
  }
  return logits;
}

}  // namespace vkllm
