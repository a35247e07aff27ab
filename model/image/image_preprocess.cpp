// Resizing and normalising (image_preprocess.h). The resampler follows Pillow's Resample.c, the
// algorithm llama.cpp's mtmd-image.cpp reproduces so that its inputs match the Python processors'.
#include "image/image_preprocess.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "error.h"

namespace vkllm {

namespace {

constexpr int kFracBits = 22;  // fixed-point weights: 32 bits less 8 for a pixel, less 2 of headroom

double filter_support(ResizeFilter f) { return f == ResizeFilter::Bicubic ? 2.0 : 1.0; }

// The filters as Pillow defines them (bicubic with a = -0.5).
double filter_weight(ResizeFilter f, double x) {
  x = std::fabs(x);
  if (f == ResizeFilter::Bilinear) return x < 1 ? 1 - x : 0;
  const double a = -0.5;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

// One axis of a resize: for output pixel o, inputs first[o] .. first[o] + count[o] - 1 with
// fixed-point weights weights[o * taps + k].
struct AxisFilter {
  int taps = 0;
  std::vector<int> first, count;
  std::vector<int32_t> weights;
};

AxisFilter axis_filter(int in, int out, ResizeFilter f) {
  double scale = double(in) / out, widen = std::max(scale, 1.0);  // shrinking widens the filter
  double support = filter_support(f) * widen;
  AxisFilter a;
  a.taps = int(std::ceil(support)) * 2 + 1;
  a.first.resize(out), a.count.resize(out), a.weights.assign(size_t(out) * a.taps, 0);
  std::vector<double> w(a.taps);
  for (int o = 0; o < out; ++o) {
    double center = (o + 0.5) * scale;
    int lo = std::max(int(center - support + 0.5), 0), hi = std::min(int(center + support + 0.5), in);
    double sum = 0;
    for (int k = 0; k < hi - lo; ++k) sum += w[k] = filter_weight(f, (k + lo - center + 0.5) / widen);
    for (int k = 0; k < hi - lo; ++k) {
      double v = sum != 0 ? w[k] / sum : w[k];
      a.weights[size_t(o) * a.taps + k] = int32_t(std::ldexp(v, kFracBits) + (v < 0 ? -0.5 : 0.5));  // toward zero
    }
    a.first[o] = lo, a.count[o] = hi - lo;
  }
  return a;
}

uint8_t clip8(int32_t acc) { return uint8_t(std::clamp(acc >> kFracBits, 0, 255)); }

// Resamples along x (stride 3 bytes) or y (stride one row) with the filter of that axis.
RgbImage resample(const RgbImage& src, int out_w, int out_h, const AxisFilter& a, bool along_x) {
  RgbImage dst{uint32_t(out_w), uint32_t(out_h), std::vector<uint8_t>(size_t(out_w) * out_h * 3)};
  const size_t src_row = size_t(src.width) * 3, dst_row = size_t(out_w) * 3;
  for (int y = 0; y < out_h; ++y)
    for (int x = 0; x < out_w; ++x) {
      int o = along_x ? x : y;
      const int32_t* k = &a.weights[size_t(o) * a.taps];
      for (int ch = 0; ch < 3; ++ch) {
        int32_t acc = 1 << (kFracBits - 1);
        for (int t = 0; t < a.count[o]; ++t) {
          int sx = along_x ? a.first[o] + t : x, sy = along_x ? y : a.first[o] + t;
          acc += int32_t(src.rgb[sy * src_row + size_t(sx) * 3 + ch]) * k[t];
        }
        dst.rgb[y * dst_row + size_t(x) * 3 + ch] = clip8(acc);
      }
    }
  return dst;
}

}  // namespace

RgbImage resize_image(const RgbImage& src, uint32_t w, uint32_t h, ResizeFilter filter) {
  ENSURE(src.width > 0 && src.height > 0 && w > 0 && h > 0 && w <= 65536 && h <= 65536,
         fmt::format("cannot resize a {}x{} image to {}x{}", src.width, src.height, w, h));
  RgbImage img = src;
  if (w != src.width) img = resample(img, int(w), int(img.height), axis_filter(int(src.width), int(w), filter), true);
  if (h != src.height) img = resample(img, int(img.width), int(h), axis_filter(int(src.height), int(h), filter), false);
  return img;
}

RgbImage fit_image(const RgbImage& src, uint32_t w, uint32_t h, ResizeFilter filter) {
  if (src.width == w && src.height == h) return src;
  // In float, as llama.cpp computes it (img_tool::resize with PAD_CEIL).
  float scale = std::min(float(w) / float(src.width), float(h) / float(src.height));
  uint32_t nw = std::min(uint32_t(std::ceil(float(src.width) * scale)), w);
  uint32_t nh = std::min(uint32_t(std::ceil(float(src.height) * scale)), h);
  RgbImage inner = resize_image(src, std::max(nw, 1u), std::max(nh, 1u), filter);
  RgbImage out{w, h, std::vector<uint8_t>(size_t(w) * h * 3, 0)};
  uint32_t ox = (w - inner.width) / 2, oy = (h - inner.height) / 2;
  for (uint32_t y = 0; y < inner.height; ++y)
    std::copy_n(&inner.rgb[size_t(y) * inner.width * 3], size_t(inner.width) * 3,
                &out.rgb[(size_t(y + oy) * w + ox) * 3]);
  return out;
}

VisionInput preprocess_image(const RgbImage& img, const ProjectorConfig& c) {
  VisionInput in;
  in.grid = c.grid(img.width, img.height);
  ENSURE(in.grid.tokens() > 0, fmt::format("a {}x{} image gives no image tokens", img.width, img.height));
  RgbImage fitted = fit_image(img, in.grid.width, in.grid.height, c.filter);
  size_t plane = size_t(fitted.width) * fitted.height;
  in.pixels.resize(3 * plane);
  for (size_t i = 0; i < plane; ++i)
    for (int ch = 0; ch < 3; ++ch)
      in.pixels[ch * plane + i] = (float(fitted.rgb[i * 3 + ch]) / 255.0f - c.image_mean[ch]) / c.image_std[ch];
  return in;
}

}  // namespace vkllm
