// ArenaPlanner: live tensors never overlap, dead ones share, offsets are aligned.
#include <fmt/format.h>
#include <random>

#include "catch.h"
#include "planner.h"

using namespace vkllm;

namespace {

void check_no_live_overlap(const ArenaPlanner& p, const std::vector<std::pair<int, int>>& life) {
  for (size_t a = 0; a < p.size(); ++a)
    for (size_t b = a + 1; b < p.size(); ++b) {
      bool live = life[a].first <= life[b].second && life[b].first <= life[a].second;
      bool overlap = p.offset(a) < p.offset(b) + p.bytes(b) && p.offset(b) < p.offset(a) + p.bytes(a);
      INFO(p.name(a) << " and " << p.name(b));
      CHECK(!(live && overlap));
    }
}

}  // namespace

TEST_CASE("a chain of temporaries reuses two slots", "[planner]") {
  ArenaPlanner p(256);
  // x0 -> x1 -> x2 -> x3: each lives from its producer to its consumer.
  std::vector<std::pair<int, int>> life{{0, 1}, {1, 2}, {2, 3}, {3, 4}};
  for (int i = 0; i < 4; ++i) p.add(fmt::format("x{}", i), 1000, life[i].first, life[i].second);
  p.plan();
  check_no_live_overlap(p, life);
  CHECK(p.total_bytes() == 2 * 1024);
  CHECK(p.unshared_bytes() == 4 * 1024);
  for (int i = 0; i < 4; ++i) CHECK(p.offset(i) % 256 == 0);
}

TEST_CASE("random lifetimes never overlap while live", "[planner]") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    ArenaPlanner p(64);
    std::vector<std::pair<int, int>> life;
    for (int i = 0; i < 40; ++i) {
      int a = rng() % 50, b = a + rng() % 10;
      life.emplace_back(a, b);
      p.add(fmt::format("t{}", i), 1 + rng() % 5000, a, b);
    }
    p.plan();
    check_no_live_overlap(p, life);
    CHECK(p.total_bytes() <= p.unshared_bytes());
  }
}

TEST_CASE("use() extends a lifetime", "[planner]") {
  ArenaPlanner p(16);
  int a = p.add("a", 100, 0, 0), b = p.add("b", 100, 1, 1);
  p.use(a, 1);
  p.plan();
  CHECK(p.offset(a) != p.offset(b));
  REQUIRE_THROWS(p.add("late", 4, 0, 0));
}
