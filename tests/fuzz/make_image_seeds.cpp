// Seed corpus for fuzz_image: fuzz_image_seeds DIR writes small valid PNG, BMP, JPEG, GIF and
// WebP images (with an alpha channel, a palette, odd sizes) for the fuzzer to start from.
#include <stb_image_write.h>
#include <webp/encode.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

void write(const std::string& path, const void* data, size_t n) {
  std::ofstream(path, std::ios::binary).write(static_cast<const char*>(data), std::streamsize(n));
}

void to_file(void* ctx, void* data, int size) {
  static_cast<std::vector<char>*>(ctx)->insert(static_cast<std::vector<char>*>(ctx)->end(), static_cast<char*>(data),
                                               static_cast<char*>(data) + size);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_image_seeds DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  for (int w : {1, 7, 33})
    for (int ch : {3, 4}) {
      int h = w % 5 + 2;
      std::vector<unsigned char> px(size_t(w) * h * ch);
      for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<unsigned char>(i * 37);
      std::string stem = dir + "/" + std::to_string(w) + "x" + std::to_string(h) + "c" + std::to_string(ch);
      for (int kind = 0; kind < 3; ++kind) {
        std::vector<char> out;
        if (kind == 0) stbi_write_png_to_func(to_file, &out, w, h, ch, px.data(), w * ch);
        if (kind == 1) stbi_write_bmp_to_func(to_file, &out, w, h, ch, px.data());
        if (kind == 2) stbi_write_jpg_to_func(to_file, &out, w, h, ch, px.data(), 75);
        write(stem + (kind == 0 ? ".png" : kind == 1 ? ".bmp" : ".jpg"), out.data(), out.size());
      }
      uint8_t* webp = nullptr;
      size_t n = ch == 3 ? WebPEncodeRGB(px.data(), w, h, w * 3, 80, &webp)
                         : WebPEncodeLosslessRGBA(px.data(), w, h, w * 4, &webp);
      write(stem + ".webp", webp, n);
      WebPFree(webp);
    }
  static const char gif[] =
      "GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\x00\x00\x00\x00\x00,"
      "\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00;";
  write(dir + "/red.gif", gif, sizeof gif - 1);
  return 0;
}
