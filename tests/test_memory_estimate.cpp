// estimate_memory (what `vkllm info` reports before loading) against what an Engine really
// allocates: weights and KV cache exactly, activations from above, for every attention kind.
#include <fmt/format.h>

#include "catch.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "gguf/reader.h"
#include "graph/memory_estimate.h"
#include "harness.h"

using namespace vkllm;

TEST_CASE("the memory estimate matches the engine's weights and KV cache and bounds its activations",
          "[memory-estimate]") {
  for (const test::EngineFixture& f : test::engine_fixtures(DType::Q8_0)) {
    INFO(f.name);
    GgufFile file = GgufFile::parse(make_fixture_model(f.spec), "fixture");
    ModelConfig config = ModelConfig::from_gguf(file);
    for (uint32_t batch : {1u, 16u}) {
      Engine engine(test::gpu(), file, {.n_ctx = 48, .batch = batch});
      MemoryReport real = engine.memory();
      MemoryEstimate e = estimate_memory(file, config, 48, batch);
      fmt::print("memory estimate {} batch {}: activations {} B for {} B planned\n", f.name, batch, e.activations,
                 real.activations);
      CHECK(e.weights == real.weights);
      CHECK(e.kv_cache == real.kv_cache);
      CHECK(e.activations >= real.activations);
      CHECK(e.activations <= 4 * real.activations);
    }
  }
}

TEST_CASE("the memory estimate on a device counts the attention scratch each profile plans", "[memory-estimate]") {
  // A GPU profile aims split-K at many workgroups, so even a 512-token prefill over a 1024-token
  // context gets partials worth megabytes; the estimate a default context is fitted by must hold them.
  for (const test::EngineFixture& f : test::engine_fixtures(DType::Q8_0)) {
    GgufFile file = GgufFile::parse(make_fixture_model(f.spec), "fixture");
    ModelConfig config = ModelConfig::from_gguf(file);
    test::for_each_profile([&](const Profile& profile) {
      Engine engine(test::gpu(), file, {.n_ctx = 1024, .batch = 512});
      MemoryReport real = engine.memory();
      MemoryEstimate e =
          estimate_memory(file, config, 1024, 512, DType::F16, 1, test::gpu().caps(), test::gpu().profile());
      INFO(f.name << " profile " << profile.name << ": scratch " << e.scratch << ", activations " << e.activations
                  << " for " << real.activations << " B");
      CHECK(e.activations + e.scratch >= real.activations);
      CHECK(e.total() >= real.weights + real.kv_cache + real.activations);
    });
  }
}
