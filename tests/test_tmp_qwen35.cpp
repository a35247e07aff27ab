#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sstream>
#include "catch.h"
#include "cli.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "harness.h"
#include "reference/model.h"
using namespace vkllm;
static void run_case(FixtureSpec s, const char* tag) {
  std::string path = fmt::format("/tmp/tmp_{}.gguf", tag);
  fixture_writer(s).save(path);
  GgufFile f = GgufFile::open(path);
  ModelConfig c = ModelConfig::from_gguf(f);
  ref::Model m(f, c);
  auto tokens = test::some_tokens(21, s.vocab_size, 5);
  auto mine = m.forward(tokens);
  auto r = test::run_program(VKLLM_LLAMACPP_ORACLE, fmt::format("logits -m {} --tokens {} --chunk 8", path, fmt::join(tokens, ",")));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<float> theirs;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) { std::istringstream ls(line); std::string tag; size_t p; ls >> tag >> p; for (float v; ls >> v;) theirs.push_back(v); }
  test::check_nmse(mine, theirs, 1e-6, tag);
}
TEST_CASE("tmp qwen35 ref vs llama.cpp", "[tmp]") {
  FixtureSpec s{.dim = 128, .n_layers = 4, .n_heads = 4, .n_kv_heads = 2, .head_dim = 64, .hidden_dim = 192, .vocab_size = 320, .weight_type = DType::F32};
  s.arch = "qwen35", s.linear_k_heads = 2, s.linear_v_heads = 4, s.linear_head_dim = 32, s.rope_dim = 16;
  s.rope_sections[0] = 3, s.rope_sections[1] = 3, s.rope_sections[2] = 2, s.rope_theta = 1e6f, s.nextn_layers = 1;
  run_case(s, "qwen35");
  FixtureSpec moe = s;
  moe.arch = "qwen35moe", moe.n_experts = 8, moe.n_experts_used = 2, moe.expert_hidden_dim = 64, moe.shared_hidden_dim = 96;
  run_case(moe, "qwen35moe");
}
