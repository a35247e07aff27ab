// ops::copy_words (the copy bandwidth yardstick of vkllm-bench): every word arrives, bit for bit
// (NaN patterns too), at sizes that end in partial workgroups; the rest of dst is untouched.
#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "harness.h"
#include "ops.h"

using namespace vkllm;

TEST_CASE("copy_words copies every word and nothing more", "[copy]") {
  test::for_each_profile([&](const Profile& profile) {
    for (size_t words : {1, 7, 1024, 4097, 70001}) {
      std::vector<float> src = test::random_floats(4 * words, 5);
      uint32_t nan = 0x7fc01234;
      std::memcpy(&src[0], &nan, 4);
      Buffer gs = test::to_gpu(src), gd = test::to_gpu(std::vector<float>(4 * words + 8, -3.0f));
      Stream s(test::gpu());
      ops::copy_words(s, gs.view(), gd.view(0, 16 * words));
      s.submit_wait();
      std::vector<float> got = test::from_gpu(gd);
      INFO(fmt::format("{} words, profile {}", words, profile.name));
      CHECK(std::memcmp(got.data(), src.data(), 16 * words) == 0);
      CHECK(got[4 * words] == -3.0f);
      CHECK(got.back() == -3.0f);
    }
  });
}

TEST_CASE("copy_words refuses ranges that are not the same whole words", "[copy]") {
  Buffer a = test::to_gpu(std::vector<float>(10)), b = test::to_gpu(std::vector<float>(10));
  Stream s(test::gpu());
  REQUIRE_THROWS_WITH(ops::copy_words(s, a.view(0, 32), b.view(0, 16)), Catch::Contains("16-byte words"));
  REQUIRE_THROWS_WITH(ops::copy_words(s, a.view(0, 24), b.view(0, 24)), Catch::Contains("16-byte words"));
}

TEST_CASE("vkllm-bench copy reports the shader copy and vkCmdCopyBuffer", "[copy][cli]") {
  auto r = test::run_bench("copy --mib 4 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["bytes"] == 4 << 20);
  double shader = j["shader_copy_gbps"], buffer = j["buffer_copy_gbps"];
  CHECK(shader > 0);
  CHECK(buffer > 0);
  CHECK(j["copy_gbps"] == std::max(shader, buffer));
}
