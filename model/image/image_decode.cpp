// Image decoding (image_decode.h): the header's size first, then the pixels.
#include "image/image_decode.h"

#include <fmt/format.h>
#include <stb_image.h>
#include <webp/decode.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>

#include "error.h"

namespace vkllm {

namespace {

bool starts_with(std::span<const std::byte> b, std::string_view magic, size_t at = 0) {
  if (b.size() < at + magic.size()) return false;
  return std::memcmp(b.data() + at, magic.data(), magic.size()) == 0;
}

void check_size(const std::string& name, ImageFormat f, int64_t w, int64_t h, const ImageLimits& limits) {
  if (w <= 0 || h <= 0)
    throw Error(fmt::format("{}: the {} image is {}x{} pixels: it has no pixels", name, to_string(f), w, h));
  if (w > limits.max_side || h > limits.max_side || uint64_t(w) * uint64_t(h) > limits.max_pixels)
    throw Error(fmt::format("{}: the {} image is {}x{} pixels, over the limit of {} per side and {} in all", name,
                            to_string(f), w, h, limits.max_side, limits.max_pixels));
}

uint32_t be(std::span<const std::byte> b, size_t at, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | std::to_integer<uint32_t>(b[at + i]);
  return v;
}
uint32_t le(std::span<const std::byte> b, size_t at, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | std::to_integer<uint32_t>(b[at + i]);
  return v;
}

// The size the header claims, read here so that a size stb_image would refuse is reported as a
// size (it says only "unknown image type" then); nullopt where the header is too short to say.
std::optional<std::pair<int64_t, int64_t>> claimed_size(std::span<const std::byte> b, ImageFormat f) {
  switch (f) {
    case ImageFormat::Png:  // IHDR, the first chunk: width and height, big-endian
      if (b.size() >= 24) return std::pair{int64_t(be(b, 16, 4)), int64_t(be(b, 20, 4))};
      break;
    case ImageFormat::Gif:  // the logical screen
      if (b.size() >= 10) return std::pair{int64_t(le(b, 6, 2)), int64_t(le(b, 8, 2))};
      break;
    case ImageFormat::Bmp:  // BITMAPINFOHEADER's width and height (negative: top-down rows)
      if (b.size() >= 26 && le(b, 14, 4) >= 40)
        return std::pair{int64_t(int32_t(le(b, 18, 4))), std::abs(int64_t(int32_t(le(b, 22, 4))))};
      break;
    case ImageFormat::Jpeg:  // the first start-of-frame segment: height, then width
      for (size_t at = 2; at + 9 <= b.size();) {
        if (std::to_integer<uint8_t>(b[at]) != 0xFF) break;
        uint32_t marker = std::to_integer<uint32_t>(b[at + 1]);
        if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC)
          return std::pair{int64_t(be(b, at + 7, 2)), int64_t(be(b, at + 5, 2))};
        at += 2 + be(b, at + 2, 2);
      }
      break;
    default:
      break;
  }
  return std::nullopt;
}

// Debian's stb_image (2022) builds a JPEG Huffman table without checking that its 16 code counts
// add up to at most 256, the size of its arrays: a table of more writes past them (found by
// fuzz_image; newer stb checks it). Every FF C4 of the file, wherever stb's reader could take it for
// a DHT segment (entropy-coded data holds no FF C4: an FF there is stuffed with 00), is read as
// stb reads it; a table of more than 256 codes is refused.
void check_jpeg_huffman_tables(std::span<const std::byte> b, const std::string& name) {
  auto at = [&](size_t i) { return i < b.size() ? std::to_integer<uint32_t>(b[i]) : 0u; };  // 0 past the end, as stb
  for (size_t p = 0; p + 1 < b.size(); ++p) {
    if (at(p) != 0xFF || at(p + 1) != 0xC4) continue;
    int64_t left = int64_t(at(p + 2) << 8 | at(p + 3)) - 2;
    for (size_t q = p + 4; left > 0 && q < b.size();) {
      uint32_t codes = 0;
      for (int i = 0; i < 16; ++i) codes += at(q + 1 + i);
      if (codes > 256)
        throw Error(
            fmt::format("{}: the JPEG image is corrupt (a Huffman table of {} codes; at most 256)", name, codes));
      left -= 17 + int64_t(codes), q += 17 + codes;
    }
  }
}

// stb_image grows its buffer for a PNG chunk to the length the chunk claims before it reads the
// chunk (fuzz_image: 310 bytes that asked for 2 GiB). Every chunk must fit in the file.
void check_png_chunks(std::span<const std::byte> b, const std::string& name) {
  for (size_t at = 8; at + 8 <= b.size();) {
    uint64_t length = be(b, at, 4);
    bool end = be(b, at + 4, 4) == 0x49454E44;  // IEND
    if (length + 12 > b.size() - at)
      throw Error(fmt::format("{}: the PNG image is truncated or corrupt (a chunk of {} bytes where {} remain)", name,
                              length, b.size() - at - std::min<size_t>(b.size() - at, 12)));
    if (end) return;
    at += 12 + length;
  }
}

RgbImage decode_stb(std::span<const std::byte> bytes, const std::string& name, ImageFormat f,
                    const ImageLimits& limits) {
  if (f == ImageFormat::Png) check_png_chunks(bytes, name);
  if (auto size = claimed_size(bytes, f)) check_size(name, f, size->first, size->second, limits);
  if (f == ImageFormat::Jpeg) check_jpeg_huffman_tables(bytes, name);
  const auto* p = reinterpret_cast<const stbi_uc*>(bytes.data());
  int len = int(bytes.size()), w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(p, len, &w, &h, &channels))
    throw Error(fmt::format("{}: cannot read the {} image's header ({})", name, to_string(f), stbi_failure_reason()));
  check_size(name, f, w, h, limits);
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(stbi_load_from_memory(p, len, &w, &h, &channels, 3),
                                                   stbi_image_free);
  if (!pixels)
    throw Error(fmt::format("{}: cannot decode the {} image ({})", name, to_string(f), stbi_failure_reason()));
  check_size(name, f, w, h, limits);  // what the pixels say, should the decoder disagree with the header
  RgbImage img{uint32_t(w), uint32_t(h), {}};
  img.rgb.assign(pixels.get(), pixels.get() + size_t(w) * size_t(h) * 3);
  return img;
}

RgbImage decode_webp(std::span<const std::byte> bytes, const std::string& name, const ImageLimits& limits) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(p, bytes.size(), &features) != VP8_STATUS_OK)
    throw Error(fmt::format("{}: cannot read the WebP image's header", name));
  if (features.has_animation) throw Error(fmt::format("{}: animated WebP images are not supported", name));
  check_size(name, ImageFormat::WebP, features.width, features.height, limits);
  int w = 0, h = 0;
  std::unique_ptr<uint8_t, void (*)(void*)> pixels(WebPDecodeRGB(p, bytes.size(), &w, &h), WebPFree);
  if (!pixels) throw Error(fmt::format("{}: cannot decode the WebP image", name));
  check_size(name, ImageFormat::WebP, w, h, limits);
  RgbImage img{uint32_t(w), uint32_t(h), {}};
  img.rgb.assign(pixels.get(), pixels.get() + size_t(w) * size_t(h) * 3);
  return img;
}

}  // namespace

ImageFormat sniff_image_format(std::span<const std::byte> b) {
  if (starts_with(b, "\xFF\xD8\xFF")) return ImageFormat::Jpeg;
  if (starts_with(b, "\x89PNG\r\n\x1A\n")) return ImageFormat::Png;
  if (starts_with(b, "GIF87a") || starts_with(b, "GIF89a")) return ImageFormat::Gif;
  if (starts_with(b, "BM")) return ImageFormat::Bmp;
  if (starts_with(b, "RIFF") && starts_with(b, "WEBP", 8)) return ImageFormat::WebP;
  return ImageFormat::Unknown;
}

std::string_view to_string(ImageFormat f) {
  switch (f) {
    case ImageFormat::Jpeg:
      return "JPEG";
    case ImageFormat::Png:
      return "PNG";
    case ImageFormat::Gif:
      return "GIF";
    case ImageFormat::Bmp:
      return "BMP";
    case ImageFormat::WebP:
      return "WebP";
    case ImageFormat::Unknown:
      break;
  }
  return "unknown";
}

RgbImage decode_image(std::span<const std::byte> bytes, const std::string& name, const ImageLimits& limits) {
  if (bytes.empty()) throw Error(fmt::format("{}: the image is empty (0 bytes)", name));
  if (bytes.size() > limits.max_bytes || bytes.size() > size_t(INT_MAX))
    throw Error(
        fmt::format("{}: the image file is {} bytes, over the limit of {}", name, bytes.size(), limits.max_bytes));
  ImageFormat f = sniff_image_format(bytes);
  if (f == ImageFormat::Unknown)
    throw Error(fmt::format("{}: not an image vkllm reads (JPEG, PNG, GIF, BMP or WebP)", name));
  return f == ImageFormat::WebP ? decode_webp(bytes, name, limits) : decode_stb(bytes, name, f, limits);
}

RgbImage load_image_file(const std::string& path, const ImageLimits& limits) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(fmt::format("{}: cannot open the image: {}", path, std::strerror(errno)));
  std::streamoff size = in.tellg();
  if (size < 0) throw Error(fmt::format("{}: cannot read the image", path));
  if (uint64_t(size) > limits.max_bytes)
    throw Error(fmt::format("{}: the image file is {} bytes, over the limit of {}", path, size, limits.max_bytes));
  std::vector<std::byte> bytes;
  bytes.resize(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw Error(fmt::format("{}: cannot read the image", path));
  return decode_image(bytes, path, limits);
}

}  // namespace vkllm
