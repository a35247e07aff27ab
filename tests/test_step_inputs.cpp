// Step inputs on a discrete GPU (graph/step_inputs.h): written to staging by the host and copied
// to device-local memory by each step's first command. lavapipe's memory is unified, so a Context
// told to treat it as discrete (ContextOptions::discrete_memory, VKLLM_DISCRETE_MEMORY) runs the
// staged path; its logits must be those of the direct path, bit for bit (the kernels are the same).
#include <algorithm>
#include <vector>

#include "catch.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "harness.h"

using namespace vkllm;
using namespace vkllm::test;

TEST_CASE("step inputs go through staging on a discrete GPU and change no logit", "[engine][memory]") {
  Context discrete(ContextOptions{.validation = true, .discrete_memory = true});
  REQUIRE(!discrete.caps().uma);
  REQUIRE(discrete.profile().name == gpu().profile().name);
  for (const char* family : {"qwen3", "qwen35"}) {
    INFO(family);
    GgufFile file = GgufFile::parse(make_fixture_model(family_fixture(family, DType::F16).spec), "fixture");
    EngineOptions options{.slots = 2};
    Engine direct(gpu(), file, options), staged(discrete, file, options);
    CHECK(staged.transformer().step_inputs().staged());
    CHECK(direct.transformer().step_inputs().staged() == !gpu().caps().uma);
    uint32_t vocab = direct.config().vocab_size;
    std::vector<int32_t> a = some_tokens(11, vocab, 1), b = some_tokens(5, vocab, 2);
    // A prefill, then a step of a decode beside another sequence's prefill, then both decoding.
    std::vector<std::vector<SeqChunk>> steps = {
        {{.slot = 0, .pos0 = 0, .tokens = a}},
        {{.slot = 0, .pos0 = 11, .tokens = std::span(b).first(1)}, {.slot = 1, .pos0 = 0, .tokens = b}},
        {{.slot = 0, .pos0 = 12, .tokens = std::span(a).first(1)},
         {.slot = 1, .pos0 = 5, .tokens = std::span(a).first(1)}},
    };
    for (const auto& step : steps) {
      std::span<const float> d = direct.step(step);
      std::vector<float> want(d.begin(), d.end());
      std::span<const float> got = staged.step(step);
      REQUIRE(got.size() == want.size());
      CHECK(std::equal(want.begin(), want.end(), got.begin()));
    }
  }
}
