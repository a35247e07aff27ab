// Fixture model shapes for the engine tests: small, but with the head dims real models use.
#include "engine_fixtures.h"

#include <fmt/format.h>

namespace vkllm::test {

std::vector<EngineFixture> engine_fixtures(DType type) {
  std::string t(info(type).name);
  FixtureSpec base{.dim = 128,
                   .n_layers = 2,
                   .n_heads = 2,
                   .n_kv_heads = 2,
                   .hidden_dim = 192,
                   .vocab_size = 320,
                   .seq_len = 256,
                   .weight_type = type};
  FixtureSpec mha = base;
  FixtureSpec gqa = base;
  gqa.arch = "qwen2", gqa.dim = 256, gqa.n_heads = 4, gqa.n_kv_heads = 2;
  FixtureSpec mqa = base;
  mqa.dim = 256, mqa.n_heads = 4, mqa.n_kv_heads = 1, mqa.rope_freqs = true, mqa.tied_embeddings = true;
  FixtureSpec mla = base;
  mla.arch = "deepseek2", mla.n_heads = 4, mla.q_lora_rank = 64, mla.kv_lora_rank = 64, mla.qk_nope_head_dim = 32,
  mla.qk_rope_head_dim = 32, mla.v_head_dim = 32;
  FixtureSpec mla_fused = mla;
  mla_fused.q_lora_rank = 0, mla_fused.mla_layout = MlaLayout::Fused;
  return {{"mha " + t, mha}, {"gqa " + t, gqa}, {"mqa " + t, mqa}, {"mla " + t, mla}, {"mla-fused " + t, mla_fused}};
}

FixtureSpec mix_fixture(const std::string& mix) {
  return {.dim = 256, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .hidden_dim = 512, .vocab_size = 320, .mix = mix};
}

const std::vector<MixCase>& mix_cases() {
  // By docs/formats.md §2.3's rules for 2 layers and 2 query heads per KV head: output Q6_K;
  // attn_v, attn_output, ffn_down per mix.
  static const std::vector<MixCase> cases = {
      {"Q2_K", {DType::Q2_K, DType::Q3_K, DType::Q6_K}},
      {"Q3_K_M", {DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K}},
      {"Q3_K_L", {DType::Q3_K, DType::Q5_K, DType::Q6_K}},
      {"IQ4_XS", {DType::Q6_K, DType::IQ4_XS}},
      {"IQ4_NL", {DType::Q6_K, DType::IQ4_NL}},
      {"IQ3_M", {DType::Q4_K, DType::Q6_K, DType::IQ3_S}},
      {"Q5_1", {DType::Q5_1, DType::Q6_K}},
  };
  return cases;
}

}  // namespace vkllm::test
