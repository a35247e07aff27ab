// ops::copy_strided vs ref::copy_strided: the MLA layout moves and odd shapes, every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/copy.h"

using namespace vkllm;

TEST_CASE("copy_strided matches the reference", "[copy]") {
  struct Case {
    ref::CopySpec s;
    size_t src_n, dst_n;
  };
  // (tokens, heads, 192) rope tails -> packed (tokens, heads, 64); one row; a wide odd slice.
  const Case cases[] = {
      {{.rows = 5,
        .cols = 3,
        .len = 64,
        .src_row_stride = 3 * 192,
        .src_col_stride = 192,
        .src_offset = 128,
        .dst_row_stride = 3 * 64,
        .dst_col_stride = 64},
       5 * 3 * 192,
       5 * 3 * 64},
      {{.rows = 1, .cols = 1, .len = 1, .src_offset = 6, .dst_offset = 2}, 7, 3},
      {{.rows = 7, .cols = 1, .len = 1001, .src_row_stride = 1003, .dst_row_stride = 1001}, 7 * 1003, 7 * 1001},
  };
  test::for_each_profile([&](const Profile& profile) {
    for (const Case& c : cases) {
      auto src = test::random_floats(c.src_n, 3);
      std::vector<float> want(c.dst_n, -7.0f);
      ref::copy_strided(want.data(), src.data(), c.s);
      Buffer gs = test::to_gpu(src), gd = test::to_gpu(std::vector<float>(c.dst_n, -7.0f));
      Stream s(test::gpu());
      ops::copy_strided(s, gs, gd,
                        {uint32_t(c.s.rows), uint32_t(c.s.cols), uint32_t(c.s.len), uint32_t(c.s.src_row_stride),
                         uint32_t(c.s.src_col_stride), uint32_t(c.s.src_offset), uint32_t(c.s.dst_row_stride),
                         uint32_t(c.s.dst_col_stride), uint32_t(c.s.dst_offset)});
      s.submit_wait();
      test::check_nmse(test::from_gpu(gd), want, 0.0,
                       fmt::format("copy {}x{}x{} profile={}", c.s.rows, c.s.cols, c.s.len, profile.name));
    }
  });
}

TEST_CASE("copy_strided refuses slices past the end", "[copy]") {
  Buffer a = test::to_gpu(std::vector<float>(10)), b = test::to_gpu(std::vector<float>(10));
  Stream s(test::gpu());
  REQUIRE_THROWS_WITH(
      ops::copy_strided(s, a, b, {.rows = 2, .cols = 1, .len = 6, .src_row_stride = 6, .dst_row_stride = 5}),
      Catch::Contains("past the end"));
}
