// Image files to 8-bit RGB pixels: JPEG, PNG, GIF (its first frame), BMP through Debian's libstb
// (stb_image), WebP through libwebp. The format is told by the file's first bytes, and the size its
// header claims is checked against the limits before any pixel is decoded, so a decompression
// bomb or a lying header costs nothing; every failure is one vkllm::Error naming the image.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm {

struct RgbImage {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // (height, width, 3), rows top to bottom
};

struct ImageLimits {
  uint32_t max_side = 16384;         // pixels per side
  uint64_t max_pixels = 40'000'000;  // width x height (an 8K frame is 33 million)
  uint64_t max_bytes = 64ull << 20;  // the encoded file
};

enum class ImageFormat : uint8_t { Unknown, Jpeg, Png, Gif, Bmp, WebP };
ImageFormat sniff_image_format(std::span<const std::byte> bytes);
std::string_view to_string(ImageFormat f);  // "JPEG", ...

// Decodes an encoded image; `name` (a path, "image 2") starts every error message.
RgbImage decode_image(std::span<const std::byte> bytes, const std::string& name, const ImageLimits& limits = {});
// Reads and decodes a file.
RgbImage load_image_file(const std::string& path, const ImageLimits& limits = {});

}  // namespace vkllm
