// Images to the encoder's input (image/): every format decodes, bad files get one clear error,
// Pillow's resampling gives the values worked out by hand, and preprocessing fits, pads and
// normalises as llama.cpp does. Test images are written here (stb_image_write, libwebp), beside a
// real JPEG (nodejs's documentation) and PNG (git's gitweb logo) from Debian packages.
#include <stb_image_write.h>
#include <webp/encode.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include "catch.h"
#include "cli.h"
#include "error.h"
#include "fixture/projector_fixture.h"
#include "harness.h"
#include "image/image_decode.h"
#include "image/image_preprocess.h"

using namespace vkllm;
using test::error_of;

namespace {

// A w x h test pattern: red rises along x, green along y, blue is their parity.
RgbImage pattern(uint32_t w, uint32_t h) {
  RgbImage img{w, h, std::vector<uint8_t>(size_t(w) * h * 3)};
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      uint8_t* p = &img.rgb[(size_t(y) * w + x) * 3];
      p[0] = uint8_t(x * 255 / std::max(w - 1, 1u)), p[1] = uint8_t(y * 255 / std::max(h - 1, 1u)),
      p[2] = (x + y) % 2 ? 255 : 0;
    }
  return img;
}

std::vector<std::byte> encode(const RgbImage& img, ImageFormat f) {
  std::vector<std::byte> out;
  int w = int(img.width), h = int(img.height);
  if (f == ImageFormat::Png) stbi_write_png_to_func(vkllm::test::append_bytes, &out, w, h, 3, img.rgb.data(), w * 3);
  if (f == ImageFormat::Bmp) stbi_write_bmp_to_func(vkllm::test::append_bytes, &out, w, h, 3, img.rgb.data());
  if (f == ImageFormat::Jpeg) stbi_write_jpg_to_func(vkllm::test::append_bytes, &out, w, h, 3, img.rgb.data(), 100);
  if (f == ImageFormat::WebP) {
    uint8_t* bytes = nullptr;
    size_t n = WebPEncodeLosslessRGB(img.rgb.data(), w, h, w * 3, &bytes);
    out.assign(reinterpret_cast<std::byte*>(bytes), reinterpret_cast<std::byte*>(bytes) + n);
    WebPFree(bytes);
  }
  return out;
}

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// A 1x1 GIF whose one pixel is colour 0 of its table, red.
const std::string_view kRedGif{
    "GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\x00\x00\x00\x00\x00,"
    "\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00;",
    35};

// A PNG header (signature and IHDR) claiming w x h, with no pixel data after it.
std::vector<std::byte> png_header(uint32_t w, uint32_t h) {
  std::vector<std::byte> png = encode(pattern(2, 2), ImageFormat::Png);
  for (int i = 0; i < 4; ++i) png[16 + i] = std::byte(w >> (24 - 8 * i)), png[20 + i] = std::byte(h >> (24 - 8 * i));
  png.resize(33);
  return png;
}

}  // namespace

TEST_CASE("PNG, BMP, WebP, GIF and JPEG images decode to their pixels", "[image]") {
  RgbImage img = pattern(13, 7);
  for (ImageFormat f : {ImageFormat::Png, ImageFormat::Bmp, ImageFormat::WebP}) {
    INFO(to_string(f));
    std::vector<std::byte> file = encode(img, f);
    CHECK(sniff_image_format(file) == f);
    RgbImage back = decode_image(file, "test");
    CHECK((back.width == 13 && back.height == 7));
    CHECK(back.rgb == img.rgb);
  }
  RgbImage jpeg = decode_image(encode(img, ImageFormat::Jpeg), "test.jpg");
  REQUIRE((jpeg.width == 13 && jpeg.height == 7));
  int worst = 0;
  for (size_t i = 0; i < img.rgb.size(); ++i) worst = std::max(worst, std::abs(int(jpeg.rgb[i]) - int(img.rgb[i])));
  CHECK(worst < 100);  // lossy, and the blue checkerboard is the worst case for it
  RgbImage gif = decode_image(bytes_of(kRedGif), "red.gif");
  CHECK((gif.width == 1 && gif.height == 1 && gif.rgb == std::vector<uint8_t>{255, 0, 0}));
}

TEST_CASE("a real JPEG and PNG from Debian packages decode", "[image]") {
  const char* png = "/usr/share/gitweb/static/git-logo.png";  // git
  REQUIRE(std::filesystem::exists(png));
  RgbImage logo = load_image_file(png);
  CHECK((logo.width == 72 && logo.height == 27));
  const char* jpg = "/usr/share/doc/nodejs/thin-white-stripe.jpg";  // nodejs, which npm brings
  if (!std::filesystem::exists(jpg)) {
    WARN("nodejs is not installed: the real-JPEG check is skipped");
    return;
  }
  RgbImage stripe = load_image_file(jpg);
  CHECK((stripe.width == 493 && stripe.height == 58));
}

TEST_CASE("bad images get one clear error", "[image]") {
  CHECK(error_of([] { decode_image({}, "a.png"); }) == "a.png: the image is empty (0 bytes)");
  CHECK(error_of([] { decode_image(bytes_of("hello, world"), "a.txt"); }) ==
        "a.txt: not an image vkllm reads (JPEG, PNG, GIF, BMP or WebP)");
  std::vector<std::byte> png = encode(pattern(64, 64), ImageFormat::Png);
  std::vector<std::byte> cut(png.begin(), png.begin() + png.size() / 2);
  CHECK(error_of([&] { decode_image(cut, "cut.png"); }).starts_with("cut.png: the PNG image is truncated or corrupt"));
  CHECK(error_of([] { decode_image(png_header(100000, 100000), "huge.png"); }) ==
        "huge.png: the PNG image is 100000x100000 pixels, over the limit of 16384 per side and 40000000 in all");
  CHECK(error_of([] { decode_image(png_header(10000, 10000), "bomb.png"); }).find("over the limit") !=
        std::string::npos);
  CHECK(error_of([] { decode_image(png_header(0, 0), "empty.png"); }) ==
        "empty.png: the PNG image is 0x0 pixels: it has no pixels");
  std::vector<std::byte> webp = encode(pattern(32, 32), ImageFormat::WebP);
  webp.resize(webp.size() - 10);
  CHECK(error_of([&] { decode_image(webp, "cut.webp"); }) == "cut.webp: cannot decode the WebP image");
  std::vector<std::byte> gif = bytes_of(kRedGif);
  gif[6] = gif[7] = std::byte(0xFF);  // the screen claims 65535 pixels across
  gif.resize(20);
  CHECK(error_of([&] { decode_image(gif, "lying.gif"); }).starts_with("lying.gif: "));
  CHECK(error_of([] { load_image_file("/nonexistent.png"); }).starts_with("/nonexistent.png: cannot open the image"));
  // fuzz_image's first finding: a Huffman table of more than 256 codes, which Debian's stb_image
  // would build past its arrays.
  std::string crash = VKLLM_SOURCE_DIR "/tests/data/images/jpeg-huffman-257-codes.jpg";
  CHECK(error_of([&] { load_image_file(crash); }).find("the JPEG image is corrupt (a Huffman table of") !=
        std::string::npos);
  // Its second: a PNG chunk claiming 1.8 GB, which stb would allocate before reading it.
  std::string bomb = VKLLM_SOURCE_DIR "/tests/data/images/png-chunk-claims-1.8-gb.png";
  CHECK(error_of([&] { load_image_file(bomb); }).find("the PNG image is truncated or corrupt (a chunk of") !=
        std::string::npos);
}

TEST_CASE("resizing follows Pillow's filters", "[image]") {
  // 4 pixels to 2, bilinear: the filter widens to 2 and output 0 weighs inputs 0..2 as 3:3:1,
  // output 1 inputs 1..3 as 1:3:3.
  RgbImage row{4, 1, {0, 0, 0, 70, 70, 70, 140, 140, 140, 210, 210, 210}};
  RgbImage half = resize_image(row, 2, 1, ResizeFilter::Bilinear);
  CHECK(half.rgb == std::vector<uint8_t>{50, 50, 50, 160, 160, 160});
  RgbImage flat{5, 3, std::vector<uint8_t>(45, 77)};
  for (ResizeFilter f : {ResizeFilter::Bilinear, ResizeFilter::Bicubic}) {
    RgbImage up = resize_image(flat, 11, 8, f), down = resize_image(flat, 2, 2, f);
    CHECK(up.rgb == std::vector<uint8_t>(11 * 8 * 3, 77));
    CHECK(down.rgb == std::vector<uint8_t>(2 * 2 * 3, 77));
  }
  // Fitting 4x2 into 8x8: scaled by 2 to 8x4, centred, black above and below.
  RgbImage fitted = fit_image(RgbImage{4, 2, std::vector<uint8_t>(24, 200)}, 8, 8, ResizeFilter::Bicubic);
  for (uint32_t y = 0; y < 8; ++y) CHECK(fitted.rgb[y * 8 * 3] == (y >= 2 && y < 6 ? 200 : 0));
}

TEST_CASE("preprocessing normalises into the projector's grid", "[image]") {
  ProjectorConfig c = projector_fixture_config(projector_preset("tiny-qwen3vl"));
  RgbImage white{32, 24, std::vector<uint8_t>(32 * 24 * 3, 255)};
  VisionInput in = preprocess_image(white, c);
  CHECK((in.grid.width == 32 && in.grid.height == 24 && in.grid.tokens() == 12));
  REQUIRE(in.pixels.size() == 3 * 32 * 24);
  CHECK(in.pixels.front() == 1.0f);  // (1 - 0.5) / 0.5
  ProjectorConfig g = projector_fixture_config(projector_preset("tiny-gemma3"));
  VisionInput wide = preprocess_image(RgbImage{64, 16, std::vector<uint8_t>(64 * 16 * 3, 255)}, g);
  CHECK((wide.grid.width == 32 && wide.grid.height == 32));
  CHECK(wide.pixels[0] == -1.0f);           // the black band above the image
  CHECK(wide.pixels[16 * 32 + 5] == 1.0f);  // the image itself, rows 12..19
}
