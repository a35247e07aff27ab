// ops::topk_rows vs ref::topk_rows, exactly (indices and values): k from 1 to kTopkMax, rows from
// 1 to vocabulary size, heavy ties (the tie-break select pass), NaN, -0/+0, -inf, every profile.
#include <fmt/format.h>
#include <cmath>
#include <cstring>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

struct TopK {
  std::vector<int32_t> idx;
  std::vector<float> val;
};

TopK gpu_topk(const std::vector<float>& x, uint32_t rows, uint32_t cols, uint32_t k) {
  Context& ctx = test::gpu();
  Buffer gx = test::to_gpu(x);
  Buffer gi(ctx, rows * k * 4, Memory::Device, "idx"), gv(ctx, rows * k * 4, Memory::Device, "val");
  Stream s(ctx);
  ops::topk_rows(s, gx, gi, gv, rows, cols, k);
  s.submit_wait();
  return {gi.download<int32_t>(rows * k), gv.download<float>(rows * k)};
}

TopK ref_topk(const std::vector<float>& x, uint32_t rows, uint32_t cols, uint32_t k) {
  TopK t{std::vector<int32_t>(rows * k), std::vector<float>(rows * k)};
  ref::topk_rows(t.idx.data(), t.val.data(), x.data(), rows, cols, k);
  return t;
}

// Values compare bitwise, so -0 vs +0 and NaN payloads count too.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

}  // namespace

TEST_CASE("topk_rows matches the reference", "[topk]") {
  struct Case {
    uint32_t rows, cols, k;
    float levels;  // values rounded to this many steps per unit: few steps, many ties
  };
  // Paths: the survivors fit the shared list (most), or the selects run over the row (k = 1024
  // on random logits; heavy ties at k = 1024 of 5000).
  const Case cases[] = {{1, 1, 1, 0},       {1, 7, 7, 0},       {3, 33, 5, 1},
                        {2, 1000, 40, 0},   {2, 128256, 40, 0}, {1, 128256, 128, 4},
                        {1, 5000, 1024, 1}, {64, 300, 64, 0},   {1, 128256, 1024, 0}};
  test::for_each_profile([&](const Profile& profile) {
    for (Case c : cases) {
      auto x = test::random_floats(size_t(c.rows) * c.cols, 70, -16, 16);
      if (c.levels > 0)
        for (float& v : x) v = std::round(v * c.levels) / c.levels;
      TopK want = ref_topk(x, c.rows, c.cols, c.k), got = gpu_topk(x, c.rows, c.cols, c.k);
      INFO(fmt::format("topk rows={} cols={} k={} levels={} profile={}", c.rows, c.cols, c.k, c.levels, profile.name));
      CHECK(got.idx == want.idx);
      CHECK(same_bits(got.val, want.val));
    }
  });
}

TEST_CASE("topk_rows orders NaN last and -0 with +0", "[topk]") {
  const float nan = NAN, inf = INFINITY;
  uint32_t cols = 10;
  std::vector<float> x = {nan, -0.0f, 0.0f, -inf, nan, 1, -0.0f, inf, -1, 0.0f};
  // By value: inf (7), 1 (5), the zeros in index order (1, 2, 6, 9), -1 (8), -inf (3), then NaN (0, 4).
  TopK want = ref_topk(x, 1, cols, cols);
  CHECK(want.idx == std::vector<int32_t>{7, 5, 1, 2, 6, 9, 8, 3, 0, 4});
  test::for_each_profile([&](const Profile& profile) {
    for (uint32_t k : {1u, 3u, 4u, 8u, 9u, 10u}) {
      INFO(fmt::format("k={} profile={}", k, profile.name));
      TopK got = gpu_topk(x, 1, cols, k), w = ref_topk(x, 1, cols, k);
      CHECK(got.idx == w.idx);
      CHECK(same_bits(got.val, w.val));
    }
  });
}

TEST_CASE("topk_rows takes the lowest indices of a tie that straddles k", "[topk]") {
  // 128256 equal logits but a few: the k-th value is shared by almost the whole row.
  uint32_t cols = 128256, k = 50;
  std::vector<float> x(cols, -3.5f);
  x[100000] = 2, x[7] = 1, x[128255] = 1;
  TopK want = ref_topk(x, 1, cols, k), got = gpu_topk(x, 1, cols, k);
  CHECK(want.idx[0] == 100000);
  CHECK(want.idx[3] == 0);
  CHECK(got.idx == want.idx);
  CHECK(same_bits(got.val, want.val));
}

TEST_CASE("topk_rows rejects k out of range", "[topk]") {
  Context& ctx = test::gpu();
  Buffer b(ctx, 1 << 16, Memory::Device, "b");
  Stream s(ctx);
  CHECK_THROWS_WITH(ops::topk_rows(s, b, b, b, 1, 10, 11), "topk_rows: k = 11 must be in 1 .. min(cols = 10, 1024)");
  CHECK_THROWS_WITH(ops::topk_rows(s, b, b, b, 1, 5000, 1025),
                    "topk_rows: k = 1025 must be in 1 .. min(cols = 5000, 1024)");
}
