// ArenaPlanner: lifetimes derived from accesses; live tensors never overlap, dead ones share,
// offsets are aligned. (Whole-graph plans: test_arena_lifetimes.cpp.)
#include <fmt/format.h>
#include <random>

#include "catch.h"
#include "graph/planner.h"

using namespace vkllm;

namespace {

void check_no_live_overlap(const ArenaPlanner& p) {
  for (size_t a = 0; a < p.size(); ++a)
    for (size_t b = a + 1; b < p.size(); ++b) {
      bool overlap = p.offset(a) < p.offset(b) + p.bytes(b) && p.offset(b) < p.offset(a) + p.bytes(a);
      INFO(p.name(a) << " and " << p.name(b));
      CHECK(!(p.live_together(int(a), int(b)) && overlap));
    }
}

}  // namespace

TEST_CASE("a chain of temporaries reuses two slots", "[planner]") {
  ArenaPlanner p(256);
  // x0 -> x1 -> x2 -> x3: op i writes x_i, op i+1 reads it.
  for (int i = 0; i < 4; ++i) p.add(fmt::format("x{}", i), 1000);
  for (int i = 0; i < 4; ++i) p.access(i, i, true), p.access(i, i + 1, false);
  p.plan();
  check_no_live_overlap(p);
  CHECK(p.total_bytes() == 2 * 1024);
  CHECK(p.unshared_bytes() == 4 * 1024);
  for (int i = 0; i < 4; ++i) {
    CHECK(p.offset(i) % 256 == 0);
    CHECK(p.unshared_offset(i) == uint64_t(i) * 1024);
    CHECK(p.at_unshared(p.unshared_offset(i) + 1023) == i);
  }
  CHECK(p.at_unshared(4 * 1024) == -1);
}

TEST_CASE("values live from their first write to their last read", "[planner]") {
  ArenaPlanner p(16);
  int a = p.add("a", 64), b = p.add("b", 64), c = p.add("c", 64);
  p.access(a, 0, true);
  p.access(a, 1, true);  // a second (partial) write before any read: the same value
  p.access(c, 2, true);
  p.access(c, 2, false);
  p.access(a, 3, false);
  p.access(b, 4, true);
  p.access(b, 4, false);
  p.access(a, 5, true);  // a write after a read: a new value
  p.access(a, 6, false);
  REQUIRE(p.live(a).size() == 2);
  CHECK(p.live(a)[0].first == 0);
  CHECK(p.live(a)[0].last == 3);
  CHECK(p.live(a)[1].first == 5);
  CHECK(p.live(a)[1].last == 6);
  CHECK(p.live_together(a, c));   // c lives inside a's first value
  CHECK(!p.live_together(a, b));  // b lives in the gap between a's values
  p.plan();
  check_no_live_overlap(p);
  CHECK(p.offset(a) != p.offset(c));
  CHECK(p.total_bytes() == 2 * 64);
  REQUIRE_THROWS(p.add("late", 4));
  REQUIRE_THROWS(p.access(a, 7, false));
}

TEST_CASE("an in-place update keeps its value alive across the command", "[planner]") {
  ArenaPlanner p(16);
  int x = p.add("x", 64), t = p.add("t", 64);
  p.access(x, 0, true);
  p.access(t, 1, true);
  p.access(x, 2, false), p.access(t, 2, false), p.access(x, 2, true);  // x = x + t
  p.access(x, 3, false);
  CHECK(p.live_together(x, t));
  p.plan();
  check_no_live_overlap(p);
}

TEST_CASE("random access orders never overlap while live", "[planner]") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    ArenaPlanner p(64);
    for (int i = 0; i < 40; ++i) p.add(fmt::format("t{}", i), 1 + rng() % 5000);
    for (int op = 0; op < 200; ++op)
      for (int k = 0; k < 3; ++k) p.access(int(rng() % 40), op, rng() % 2);
    p.plan();
    check_no_live_overlap(p);
    CHECK(p.total_bytes() <= p.unshared_bytes());
  }
}
