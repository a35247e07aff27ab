// ops::get_rows vs the reference: hand-made blocks (GPU byte layouts), every type with awkward row
// lengths, repeated and out-of-range ids, under every profile; every IQ3_S grid entry; every MXFP4
// scale and code with rows at every byte offset.
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "catch.h"
#include "quant_blocks.h"
#include "reference/iq3s_grid.h"
#include "weight_cases.h"

using namespace vkllm;

namespace {

std::vector<float> gather(DType t, std::span<const uint8_t> table, const std::vector<int32_t>& ids, uint32_t K) {
  Context& ctx = test::gpu();
  Buffer gt = test::bytes_to_gpu(table, "table");
  Buffer gi(ctx, ids.size() * 4, Memory::Device, "ids");
  gi.upload(std::span<const int32_t>(ids));
  Buffer gy(ctx, ids.size() * K * 4, Memory::Device, "y");
  Stream s(ctx);
  ops::get_rows(s, t, gt, gi, gy, uint32_t(ids.size()), K);
  s.submit_wait();
  return test::from_gpu(gy);
}

}  // namespace

TEST_CASE("get_rows reads hand-made blocks", "[get_rows]") {
  for (const test::HandBlock& hb : test::hand_blocks()) {
    uint32_t K = test::is_float(hb.type) ? uint32_t(hb.bytes.size() / 2) : info(hb.type).block_values;
    std::vector<float> y = gather(hb.type, hb.bytes, {0}, K);
    for (auto [i, v] : hb.expect) {
      INFO(fmt::format("{} value {}", test::type_name(hb.type), i));
      CHECK(y[i] == v);
    }
  }
}

TEST_CASE("get_rows matches the reference for every type", "[get_rows]") {
  test::for_each_profile([&](const Profile& profile) {
    for (DType t : test::weight_types()) {
      for (uint32_t K : test::awkward_k(t)) {
        if (K > 1300 || (profile.name != "llvmpipe" && K != test::awkward_k(t)[1])) continue;
        uint32_t rows = 37;
        test::Weights w = test::random_weights(t, rows, K, 20 + K);
        std::vector<int32_t> ids = {0, 36, 5, 5, 17, -1, 37, 1000};  // the last three are outside
        std::vector<float> want(ids.size() * K, 0.0f);
        ref::get_rows(t, w.stored.data(), ids.data(), want.data(), 5, K);
        // 1e-12, not 0: the GPU may fuse q·d + m into one FMA.
        test::check_nmse(gather(t, w.stored, ids, K), want, 1e-12,
                         fmt::format("get_rows {} K={} profile={}", test::type_name(t), K, profile.name));
      }
    }
  });
}

TEST_CASE("get_rows decodes every entry of the IQ3_S grid", "[get_rows]") {
  // Two rows of four blocks, d = 1 and scale codes 0 (step 1), no signs: group q of block i
  // selects grid entry 64i + q, so the 512 entries come out in order, four values each.
  std::vector<uint8_t> table(8 * 110, 0);
  for (int i = 0; i < 8; ++i) {
    uint8_t* b = table.data() + 110 * i;
    b[0] = 0x00, b[1] = 0x3C;  // d = 1.0
    for (int q = 0; q < 64; ++q) {
      int index = 64 * i + q;
      b[2 + q] = uint8_t(index);
      b[66 + q / 8] |= uint8_t((index >> 8) << (q % 8));  // qh[s] bit 2(g%4) + h = q % 8, s = q / 8
    }
  }
  std::vector<float> y = gather(DType::IQ3_S, table, {0, 1}, 1024);
  int wrong = 0;
  for (int e = 0; e < 2048; ++e)
    if (y[e] != float(ref::kIq3sGrid[e / 4] >> (8 * (e % 4)) & 255)) ++wrong;
  CHECK(wrong == 0);
}

TEST_CASE("get_rows decodes every MXFP4 scale and code, rows at every byte offset", "[get_rows]") {
  // 37 rows of 7 blocks: 119-byte rows start at every offset mod 4, and the table's 4403 bytes end
  // in a partial word. Block i < 256 has e = i and qs[j] = j | (15 - j) << 4 (every code as low and
  // high nibble); the last three blocks e = 127 and random codes.
  const uint32_t rows = 37, blocks = 7, K = 32 * blocks;
  std::vector<uint8_t> table(size_t(rows) * blocks * 17);
  std::mt19937 rng(3);
  for (size_t i = 0; i < size_t(rows) * blocks; ++i) {
    uint8_t* b = table.data() + 17 * i;
    b[0] = uint8_t(i < 256 ? i : 127);
    for (int j = 0; j < 16; ++j) b[1 + j] = uint8_t(i < 256 ? j | (15 - j) << 4 : rng());
  }
  std::vector<int32_t> ids(rows);
  for (uint32_t r = 0; r < rows; ++r) ids[r] = int32_t(rows - 1 - r);
  std::vector<float> got = gather(DType::MXFP4, table, ids, K), want(got.size());
  ref::get_rows(DType::MXFP4, table.data(), ids.data(), want.data(), rows, K);
  // Exact, infinities (e = 255) included. get_rows asks to keep f32 subnormals; a device without
  // shaderDenormPreserveFloat32 may flush them (docs/design.md, Numerics), and a value of a block
  // whose half scale 2^(e - 128) is subnormal (e < 2) then comes out as zero.
  bool preserves = test::gpu().caps().denorm_preserve_f32;
  size_t wrong = 0, flushed = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    size_t block = size_t(ids[i / K]) * blocks + i % K / 32;
    bool flush = !preserves && table[17 * block] < 2 && got[i] == 0;
    flushed += flush;
    if (!flush && wrong++ == 0) WARN(fmt::format("value {}: {} (reference {})", i, got[i], want[i]));
  }
  if (flushed)
    WARN(fmt::format("{} values of subnormal-scale blocks flushed to zero (no denorm preservation)", flushed));
  CHECK(wrong == 0);
}
