// The activation arena of whole graphs: lifetimes derived from a traced recording must keep every
// value alive until its last read. Checked by replaying the traced commands of each architecture
// fixture and batch size against the planned layout: a read must find the bytes still holding
// the tensor it means (the unshared trace says which), never another tensor's later write.
#include <fmt/format.h>

#include "catch.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "gguf/reader.h"
#include "harness.h"

using namespace vkllm;

namespace {

// Replays one graph: returns the first clobbered read, or "" when every read is intact.
std::string first_clobber(Transformer& t, uint32_t n, OutputMode mode) {
  Transformer::Trace unshared = t.trace(n, mode, true), planned = t.trace(n, mode, false);
  const ArenaPlanner& plan = t.arena_plan();
  REQUIRE(unshared.commands.size() == planned.commands.size());
  std::vector<int> owner(plan.total_bytes() / 4, -1);  // which tensor's value each arena word holds
  for (size_t c = 0; c < planned.commands.size(); ++c) {
    const TracedCommand &u = unshared.commands[c], &p = planned.commands[c];
    REQUIRE(u.name == p.name);
    for (bool write : {false, true}) {
      const auto &uv = write ? u.writes : u.reads, &pv = write ? p.writes : p.reads;
      REQUIRE(uv.size() == pv.size());
      for (size_t i = 0; i < uv.size(); ++i) {
        if (uv[i].buffer != unshared.arena) continue;
        REQUIRE(pv[i].buffer == planned.arena);
        int id = plan.at_unshared(uv[i].offset);
        REQUIRE(id >= 0);
        for (uint64_t w = pv[i].offset / 4; w < (pv[i].offset + pv[i].size) / 4; ++w) {
          if (write)
            owner[w] = id;
          else if (owner[w] != id)
            return fmt::format("command {} ({}) reads {} where {} is", c, p.name, plan.name(id),
                               owner[w] < 0 ? "nothing written" : plan.name(owner[w]));
        }
      }
    }
  }
  return "";
}

}  // namespace

TEST_CASE("no live activation is overwritten, for every architecture and batch size", "[planner][transformer]") {
  std::vector<test::EngineFixture> fixtures = test::engine_fixtures(DType::F16);
  FixtureSpec mistral = fixtures[0].spec;
  mistral.arch = "mistral", mistral.qkv_bias = true;
  fixtures.push_back({"mistral with biases", mistral});
  for (const test::EngineFixture& f : fixtures) {
    GgufFile file = GgufFile::parse(make_fixture_model(f.spec), "fixture");
    Engine engine(test::gpu(), file, {.n_ctx = 64, .batch = 16});
    Transformer& t = engine.transformer();
    const ArenaPlanner& plan = t.arena_plan();
    for (size_t a = 0; a < plan.size(); ++a)
      for (size_t b = a + 1; b < plan.size(); ++b) {
        bool overlap =
            plan.offset(a) < plan.offset(b) + plan.bytes(b) && plan.offset(b) < plan.offset(a) + plan.bytes(a);
        INFO(f.name << ": " << plan.name(a) << " and " << plan.name(b));
        CHECK(!(plan.live_together(int(a), int(b)) && overlap));
      }
    CHECK(plan.total_bytes() < plan.unshared_bytes());  // something is shared
    for (uint32_t n : {1u, 5u, 16u})
      for (OutputMode mode : {OutputMode::Last, OutputMode::All}) {
        INFO(f.name << ", " << n << " tokens, " << (mode == OutputMode::All ? "all logits" : "last logits"));
        CHECK(first_clobber(t, n, mode) == "");
      }
  }
}
