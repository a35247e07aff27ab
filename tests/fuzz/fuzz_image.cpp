// libFuzzer target: decode_image on arbitrary bytes (JPEG, PNG, GIF, BMP through an instrumented
// copy of stb_image, WebP through libwebp), then the preprocessing of what decodes for a
// smart-resizing and a fixed-size projector. Any crash, sanitizer report, hang or exception other
// than vkllm::Error is a bug. Seeds: fuzz_image_seeds DIR writes a few valid images of each format.
#include <cstdint>
#include <span>

#include "arch/projector.h"
#include "error.h"
#include "image/image_decode.h"
#include "image/image_preprocess.h"

namespace {

vkllm::ProjectorConfig projector(vkllm::ProjectorType type) {
  vkllm::ProjectorConfig c;
  c.type = type;
  c.patch_size = 4, c.n_merge = 2, c.image_size = 32;
  c.sizing = type == vkllm::ProjectorType::Gemma3 ? vkllm::ImageSizing::Fixed : vkllm::ImageSizing::Smart;
  c.filter = type == vkllm::ProjectorType::Gemma3 ? vkllm::ResizeFilter::Bilinear : vkllm::ResizeFilter::Bicubic;
  c.min_pixels = 8 * 64, c.max_pixels = 1024 * 64;  // qwen's token budget at these patch sizes, smaller
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkllm;
  static const ProjectorConfig smart = projector(ProjectorType::Qwen3vlMerger),
                               fixed = projector(ProjectorType::Gemma3);
  // Smaller limits than the defaults keep one input's work bounded; the checks are the same code.
  ImageLimits limits{.max_side = 4096, .max_pixels = 4'000'000, .max_bytes = 1 << 20};
  try {
    RgbImage img = decode_image(std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz", limits);
    if (img.rgb.size() != size_t(img.width) * img.height * 3) __builtin_trap();
    for (const ProjectorConfig* c : {&smart, &fixed}) {
      VisionInput in = preprocess_image(img, *c);
      if (in.pixels.size() != size_t(3) * in.grid.width * in.grid.height) __builtin_trap();
    }
  } catch (const Error&) {
  }
  return 0;
}
