// The reference's storage types: hand-made blocks decoded to values worked out by hand from
// docs/formats.md §2 (this proves the byte layouts), f16/bf16 rounding, and quantiser round trips.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "catch.h"
#include "fixture/fixture.h"
#include "gguf/writer.h"
#include "quant_blocks.h"
#include "reference/iq3s_grid.h"
#include "weight_cases.h"

using namespace vkllm;

TEST_CASE("reference dequantises hand-made blocks of every type", "[quant]") {
  for (const test::HandBlock& hb : test::hand_blocks()) {
    size_t n = test::is_float(hb.type) ? hb.bytes.size() / (hb.type == DType::F32 ? 4 : 2) : info(hb.type).block_values;
    std::vector<float> y(n);
    ref::dequantize_row(hb.type, hb.bytes.data(), y.data(), n);
    for (auto [i, v] : hb.expect) {
      INFO(fmt::format("{} value {}", test::type_name(hb.type), i));
      CHECK(y[i] == v);
    }
  }
}

TEST_CASE("f16 and bf16 conversions round to nearest even", "[quant]") {
  CHECK(ref::float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);      // tie: to even
  CHECK(ref::float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);  // tie: to even (up)
  CHECK(ref::float_to_half(65519.0f) == 0x7BFF);
  CHECK(ref::float_to_half(65520.0f) == 0x7C00);
  CHECK(ref::float_to_half(std::ldexp(1.0f, -25)) == 0x0000);      // half the smallest subnormal
  CHECK(ref::float_to_half(3 * std::ldexp(1.0f, -25)) == 0x0002);  // 1.5 quanta: to even
  CHECK(ref::float_to_half(-2.0f) == 0xC000);
  for (uint32_t h = 0; h < 65536; ++h) {
    bool nan = (h & 0x7C00) == 0x7C00 && (h & 1023);
    if (!nan && ref::float_to_half(ref::half_to_float(uint16_t(h))) != h) FAIL(fmt::format("f16 {:#06x}", h));
  }
  CHECK(ref::float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
  CHECK(ref::float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);
  CHECK(ref::bf16_to_float(0xC0A0) == -5.0f);
}

TEST_CASE("reference quantisers round-trip within their step size", "[quant]") {
  // Uniform values in [-1, 1]: NMSE of round-to-nearest is about step^2/12 / (1/3). MXFP4 (ggml's
  // rule) also clips a block's values above 1.5·2^floor(log2 amax): about 0.02.
  const std::pair<DType, double> bounds[] = {
      {DType::F32, 0},       {DType::F16, 1e-7},    {DType::BF16, 1e-5},   {DType::Q8_0, 1e-4},  {DType::Q6_K, 1e-3},
      {DType::Q5_0, 3e-3},   {DType::Q5_1, 3e-3},   {DType::Q5_K, 3e-3},   {DType::Q4_0, 1e-2},  {DType::Q4_1, 1e-2},
      {DType::Q4_K, 1e-2},   {DType::IQ4_NL, 1e-2}, {DType::IQ4_XS, 1e-2}, {DType::IQ3_S, 3e-2}, {DType::Q3_K, 3e-2},
      {DType::Q2_K, 1.2e-1}, {DType::MXFP4, 3e-2}};
  for (auto [t, bound] : bounds) {
    size_t rows = 4, K = 512;
    std::vector<float> f = test::random_floats(rows * K, 5);
    std::vector<uint8_t> q = ref::quantize(t, f.data(), rows, K);
    CHECK(q.size() == rows * row_bytes(t, K));
    std::vector<float> back = ref::dequantize(t, q.data(), rows, K);
    test::check_nmse(back, f, bound, "quantise round trip " + test::type_name(t));
  }
}

TEST_CASE("the IQ3_S grid holds ggml's published entries", "[quant]") {
  // Entries quoted in docs/formats.md §2.4 from ggml-common.h's iq3s_grid.
  CHECK(ref::kIq3sGrid[0] == 0x01010101);
  CHECK(ref::kIq3sGrid[1] == 0x01010103);
  CHECK(ref::kIq3sGrid[8] == 0x01010309);
  CHECK(ref::kIq3sGrid[255] == 0x05090501);
  CHECK(ref::kIq3sGrid[256] == 0x05090507);
  CHECK(ref::kIq3sGrid[257] == 0x05090705);
  CHECK(ref::kIq3sGrid[319] == 0x07070903);
  CHECK(ref::kIq3sGrid[511] == 0x0f0f0101);
  // And its shape: 512 distinct entries in increasing order, every byte an odd value 1..15.
  for (int i = 0; i < 512; ++i) {
    INFO(fmt::format("entry {} = {:#010x}", i, ref::kIq3sGrid[i]));
    if (i > 0) CHECK(ref::kIq3sGrid[i - 1] < ref::kIq3sGrid[i]);
    for (int j = 0; j < 4; ++j) {
      uint32_t b = ref::kIq3sGrid[i] >> (8 * j) & 255;
      CHECK((b % 2 == 1 && b <= 15));
    }
  }
}

// Hidden (not in the default run): the reference's dequantisation against gguf-py's, an independent
// implementation from llama.cpp (scripts/crosscheck_quants; needs VKLLM_GGUF_PY and python3-numpy).
TEST_CASE("reference dequantisation agrees with gguf-py", "[.crosscheck]") {
  const char* gguf_py = std::getenv("VKLLM_GGUF_PY");
  if (!gguf_py) {
    WARN("VKLLM_GGUF_PY (llama.cpp's gguf-py directory) is not set: skipped");
    return;
  }
  GgufWriter w;
  std::mt19937 rng(17);
  for (DType t : test::weight_types()) {
    const uint64_t rows = 8, K = 1024;
    std::vector<std::byte> q = random_tensor_bytes(t, rows * K, 1.0f, rng);
    std::vector<float> f = ref::dequantize(t, q.data(), rows, K);
    std::vector<std::byte> fb(f.size() * 4);
    std::memcpy(fb.data(), f.data(), fb.size());
    w.add_tensor(test::type_name(t) + ".q", {K, rows}, t, q);
    w.add_tensor(test::type_name(t) + ".f", {K, rows}, DType::F32, fb);
  }
  std::string path = fmt::format("/tmp/vkllm_crosscheck_{}.gguf", getpid());
  w.save(path);
  int rc = std::system(fmt::format("{}/scripts/crosscheck_quants {} {}", VKLLM_SOURCE_DIR, gguf_py, path).c_str());
  std::remove(path.c_str());
  CHECK(rc == 0);
}
