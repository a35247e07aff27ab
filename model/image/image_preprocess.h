// An RGB image to the vision encoder's input, as llama.cpp's mtmd-image.cpp prepares it: resized
// into the projector's size (ProjectorConfig::grid) with its aspect kept, centred on black, by
// Pillow's resampling (separable, filter widened when shrinking, 22-bit fixed-point weights,
// 8-bit rounding after each pass); then each value v/255 normalised by the projector's mean and
// std, stored planar.
#pragma once
#include <cstdint>
#include <vector>

#include "arch/projector.h"
#include "image/image_decode.h"

namespace vkllm {

// The encoder's input: (3, height, width) f32, channel planes R, G, B, rows top to bottom.
struct VisionInput {
  ImageGrid grid;
  std::vector<float> pixels;
};

VisionInput preprocess_image(const RgbImage& img, const ProjectorConfig& c);

// Pillow's resize of src to w x h (Image.resize with BILINEAR or BICUBIC).
RgbImage resize_image(const RgbImage& src, uint32_t w, uint32_t h, ResizeFilter filter);
// Into a w x h canvas of black: src resized to fit (each side ceil(side · scale), the smaller of
// the two scales) and centred (llama.cpp's PAD_CEIL).
RgbImage fit_image(const RgbImage& src, uint32_t w, uint32_t h, ResizeFilter filter);

}  // namespace vkllm
