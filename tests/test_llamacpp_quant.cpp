// The reference's storage types against ggml's own C code (llama.cpp's CPU libraries, through the
// oracle; skipped where it was not built), bit for bit:
// - dequantisation (`dequantize`: ggml_get_type_traits(type)->to_float) of every weight type the
//   kernels read: random blocks at three scales (f16 scales down to subnormals); every f16 and
//   bf16 value; MXFP4 also every E8M0 exponent (subnormal and overflowing scales included) with
//   every E2M1 code in both nibbles;
// - quantisation (`quantize-ref`: from_float_ref) where the reference claims ggml's rule: MXFP4
//   (test weights), Q8_0 and Q4_0 (also the quantised KV cache's).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "weight_cases.h"

using namespace vkllm;

namespace {

// Blocks of type t: 64 random ones (64 rows of 32 floats) at each of three scales; for F16 and BF16
// also every one of the 65536 bit patterns (subnormals, infinities and NaNs included); for MXFP4
// two blocks per exponent e = 0 .. 255, one with qs[j] = j | (15 − j) << 4 (every code as low and
// high nibble), one with random codes.
std::vector<std::byte> test_blocks(DType t) {
  std::mt19937 rng(29);
  const DTypeInfo& ti = info(t);
  std::vector<std::byte> out;
  for (float range : {1.0f, 1e-3f, 300.0f}) {
    std::vector<std::byte> b = random_tensor_bytes(t, 64ull * std::max(ti.block_values, 32u), range, rng);
    out.insert(out.end(), b.begin(), b.end());
  }
  if (t == DType::F16 || t == DType::BF16)
    for (uint32_t h = 0; h < 65536; ++h) out.push_back(std::byte(h & 255)), out.push_back(std::byte(h >> 8));
  if (t == DType::MXFP4) {
    std::uniform_int_distribution<int> byte(0, 255);
    for (int e = 0; e < 256; ++e)
      for (bool random : {false, true}) {
        out.push_back(std::byte(e));
        for (int j = 0; j < 16; ++j) out.push_back(std::byte(random ? byte(rng) : j | (15 - j) << 4));
      }
  }
  return out;
}

// Values to quantise: 64 random blocks at each of three scales, an all-zero block, a block of
// amax 2^-120, and for MXFP4 x = j/2 − 8: amax 8 makes the half scale 1, so every half-integer
// between two codes is a tie, which ggml gives to the first code in table order.
std::vector<float> test_values(DType t) {
  uint32_t qk = info(t).block_values;
  std::vector<float> out;
  for (float range : {1.0f, 1e-3f, 300.0f})
    for (float v : test::random_floats(64 * qk, 41, -range, range)) out.push_back(v);
  out.insert(out.end(), qk, 0.0f);
  for (uint32_t j = 0; j < qk; ++j) out.push_back(std::ldexp(j % 3 ? 0.5f : -1.0f, -120));
  if (t == DType::MXFP4)
    for (uint32_t j = 0; j < qk; ++j) out.push_back(float(j) / 2 - 8);
  return out;
}

// What the oracle's `mode` (dequantize, quantize-ref) for type t makes of `in`.
std::vector<char> ggml_convert(const char* mode, DType t, const void* in, size_t bytes) {
  test::TempFile in_file("ggml_in"), out_file("ggml_out");
  in_file.write(std::vector<std::byte>(static_cast<const std::byte*>(in), static_cast<const std::byte*>(in) + bytes));
  test::CliResult r = test::run_program(
      VKLLM_LLAMACPP_ORACLE, fmt::format("{} {} '{}' '{}'", mode, info(t).name, in_file.path, out_file.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream f(out_file.path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Items of `size` bytes of ours and theirs that differ; "" when none does.
std::string differences(const void* ours, const void* theirs, size_t n, size_t size, const char* what) {
  size_t differ = 0, first = n;
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(static_cast<const char*>(ours) + i * size, static_cast<const char*>(theirs) + i * size, size))
      differ += 1, first = std::min(first, i);
  return differ ? fmt::format("{} of {} {} differ, the first {}", differ, n, what, first) : "";
}

}  // namespace

TEST_CASE("reference dequantisation is bit-exact with ggml's", "[quant][llamacpp]") {
  if (std::string why = test::llamacpp_oracle_missing(); !why.empty()) return test::skip(why);
  for (DType t : test::weight_types()) {
    std::vector<std::byte> blocks = test_blocks(t);
    size_t n = blocks.size() / info(t).block_bytes * info(t).block_values;
    std::vector<float> ours(n);
    ref::dequantize_row(t, blocks.data(), ours.data(), n);
    std::vector<char> theirs = ggml_convert("dequantize", t, blocks.data(), blocks.size());
    REQUIRE(theirs.size() == 4 * n);
    std::string diff = differences(ours.data(), theirs.data(), n, 4, "values");
    fmt::print("dequantize {:6s} {:6d} values: {}\n", test::type_name(t), n, diff.empty() ? "bit-identical" : diff);
    INFO(test::type_name(t) << ": " << diff);
    CHECK(diff.empty());
  }
}

TEST_CASE("reference MXFP4, Q8_0 and Q4_0 quantisers are ggml's", "[quant][llamacpp]") {
  if (std::string why = test::llamacpp_oracle_missing(); !why.empty()) return test::skip(why);
  for (DType t : {DType::MXFP4, DType::Q8_0, DType::Q4_0}) {
    std::vector<float> values = test_values(t);
    std::vector<uint8_t> ours = ref::quantize(t, values.data(), 1, values.size());
    std::vector<char> theirs = ggml_convert("quantize-ref", t, values.data(), 4 * values.size());
    REQUIRE(theirs.size() == ours.size());
    size_t n_blocks = values.size() / info(t).block_values;
    std::string diff = differences(ours.data(), theirs.data(), n_blocks, info(t).block_bytes, "blocks");
    fmt::print("quantize {:6s} {:4d} blocks: {}\n", test::type_name(t), n_blocks,
               diff.empty() ? "byte-identical" : diff);
    INFO(test::type_name(t) << ": " << diff);
    CHECK(diff.empty());
  }
}
