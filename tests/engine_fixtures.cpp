// Fixture model shapes for the engine tests: small, but with the head dims real models use.
#include "engine_fixtures.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "arch/architecture.h"
#include "error.h"
#include "harness.h"

namespace vkllm::test {

Loaded load(const FixtureSpec& spec, EngineOptions options) {
  Loaded l{GgufFile::parse(make_fixture_model(spec), "fixture"), nullptr};
  l.engine = std::make_unique<Engine>(gpu(), l.file, options);
  return l;
}

std::vector<int32_t> some_tokens(size_t n, uint32_t vocab, uint32_t seed) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = int32_t((i * 2654435761u + seed * 97u) % vocab);
  return t;
}

int32_t best(std::span<const float> logits) {
  return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

namespace {

// The gap between the largest and second largest logit.
double top2_margin(std::span<const float> logits) {
  std::vector<float> v(logits.begin(), logits.end());
  std::partial_sort(v.begin(), v.begin() + 2, v.end(), std::greater<float>());
  return double(v[0]) - double(v[1]);
}

double max_abs_diff(std::span<const float> a, std::span<const float> b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
  return m;
}

}  // namespace

// The first step whose tokens differ (steps: the tokens after the prompt); margin.size() if none.
size_t Greedy::parting() const {
  size_t prompt = gpu.size() - std::min(gpu.size(), size_t(steps));
  for (size_t i = prompt; i < gpu.size(); ++i)
    if (gpu[i] != reference[i]) return i - prompt;
  return margin.size();
}

bool Greedy::agree() const {
  size_t step = parting();
  return step == margin.size() || (step < margin.size() && margin[step] <= 2 * error[step]);
}

std::string Greedy::describe() const {
  size_t step = parting();
  if (step == margin.size()) return "tokens equal";
  return fmt::format("tokens part at step {}: top-2 margin {:.3e}, max |logit diff| {:.3e}", step, margin[step],
                     error[step]);
}

Greedy greedy_both(Loaded& l, const ref::Model& reference, uint32_t vocab, int steps) {
  l.engine->reset();
  Greedy g{some_tokens(5, vocab, 2), some_tokens(5, vocab, 2)};
  g.steps = steps;
  std::span<const float> logits = l.engine->eval(g.gpu);
  for (int step = 0; step < steps; ++step) {
    std::vector<float> all = reference.forward(g.reference);
    std::span<const float> want = std::span(all).last(vocab);
    if (g.gpu == g.reference) g.margin.push_back(top2_margin(want)), g.error.push_back(max_abs_diff(logits, want));
    g.reference.push_back(best(want));
    g.gpu.push_back(best(logits));
    logits = l.engine->eval(std::span<const int32_t>(&g.gpu.back(), 1));
  }
  return g;
}

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

std::vector<EngineFixture> family_fixtures(DType type) {
  std::string t(info(type).name);
  FixtureSpec base{.dim = 128,
                   .n_layers = 2,
                   .n_heads = 4,
                   .n_kv_heads = 2,
                   .hidden_dim = 192,
                   .vocab_size = 320,
                   .seq_len = 256,
                   .weight_type = type};
  FixtureSpec llama = base;  // Llama 3.1: GQA, rope frequency factors
  llama.rope_freqs = true, llama.rope_theta = 5e5f;
  FixtureSpec mistral = base;
  mistral.arch = "mistral", mistral.rope_theta = 1e6f;
  FixtureSpec qwen2 = base;
  qwen2.arch = "qwen2", qwen2.rope_theta = 1e6f, qwen2.tied_embeddings = true, qwen2.norm_eps = 1e-6f;
  FixtureSpec qwen3 = base;
  qwen3.arch = "qwen3", qwen3.head_dim = 64, qwen3.rope_theta = 1e6f, qwen3.tied_embeddings = true;
  // Qwen3-Embedding: qwen3 weights used for embeddings, last-token pooling as its GGUF's
  // pooling_type says, and a tokenizer that appends <|endoftext|> (llama.cpp's converter sets
  // add_eos_token from the model's tokenizer.json post-processor, which appends it).
  FixtureSpec qwen3_embedding = qwen3;
  qwen3_embedding.pooling = Pooling::Last, qwen3_embedding.tokenizer = "gpt2", qwen3_embedding.add_eos = true;
  qwen3_embedding.tokenizer_pre = "qwen2";
  FixtureSpec qwen3moe = qwen3;
  qwen3moe.arch = "qwen3moe", qwen3moe.tied_embeddings = false;
  qwen3moe.n_experts = 8, qwen3moe.n_experts_used = 2, qwen3moe.expert_hidden_dim = 64;
  FixtureSpec qwen2moe = base;
  qwen2moe.arch = "qwen2moe", qwen2moe.n_experts = 6, qwen2moe.n_experts_used = 2, qwen2moe.expert_hidden_dim = 96;
  qwen2moe.shared_hidden_dim = 160, qwen2moe.qkv_bias = true;
  FixtureSpec mla = base;  // every block dense (leading_dense_block_count = block_count)
  mla.arch = "deepseek2", mla.q_lora_rank = 64, mla.kv_lora_rank = 64, mla.qk_nope_head_dim = 32;
  mla.qk_rope_head_dim = 32, mla.v_head_dim = 32;
  FixtureSpec v2 = mla;  // V2-Lite's shape: no q_lora, softmax routing; V2's expert groups
  v2.n_layers = 3, v2.q_lora_rank = 0, v2.n_experts = 8, v2.n_experts_used = 3, v2.expert_hidden_dim = 64;
  v2.n_shared_experts = 2, v2.leading_dense_blocks = 1, v2.n_groups = 4, v2.n_groups_used = 2, v2.weights_scale = 1.5f;
  FixtureSpec v3 = mla;
  v3.n_layers = 3, v3.n_experts = 16, v3.n_experts_used = 3, v3.expert_hidden_dim = 64, v3.n_shared_experts = 1;
  v3.leading_dense_blocks = 1, v3.gating = MoeGating::Sigmoid, v3.probs_bias = true, v3.n_groups = 4;
  v3.n_groups_used = 2, v3.weights_norm = true, v3.weights_scale = 2.5f;
  FixtureSpec gemma2 = base;
  gemma2.arch = "gemma2", gemma2.head_dim = 64, gemma2.tied_embeddings = true, gemma2.sliding_window = 8;
  gemma2.swa_period = 2, gemma2.attn_softcap = 3.0f, gemma2.final_softcap = 5.0f, gemma2.norm_eps = 1e-6f;
  FixtureSpec gemma3 = gemma2;
  gemma3.arch = "gemma3", gemma3.n_layers = 3, gemma3.rope_theta = 1e6f, gemma3.rope_theta_swa = 1e4f;
  gemma3.attn_softcap = 0, gemma3.final_softcap = 0, gemma3.tied_embeddings = false;
  FixtureSpec phi3 = base;
  phi3.arch = "phi3", phi3.n_heads = 4, phi3.n_kv_heads = 4;
  // Qwen3.5's shape in small: Gated DeltaNet in layers 0-2 and 4, gated GQA with rope over a
  // quarter of the head in sections in layer 3, a multi-token-prediction block after the trunk.
  FixtureSpec qwen35 = base;
  qwen35.arch = "qwen35", qwen35.n_layers = 5, qwen35.head_dim = 64, qwen35.rope_theta = 1e7f, qwen35.norm_eps = 1e-6f;
  qwen35.linear_k_heads = 2, qwen35.linear_v_heads = 4, qwen35.linear_head_dim = 32, qwen35.rope_dim = 16;
  qwen35.rope_sections[0] = 3, qwen35.rope_sections[1] = 3, qwen35.rope_sections[2] = 2, qwen35.nextn_layers = 1;
  qwen35.tied_embeddings = true;
  FixtureSpec qwen35moe = qwen35;
  qwen35moe.arch = "qwen35moe", qwen35moe.n_layers = 4, qwen35moe.tied_embeddings = false;
  qwen35moe.n_experts = 8, qwen35moe.n_experts_used = 2, qwen35moe.expert_hidden_dim = 64;
  qwen35moe.shared_hidden_dim = 96;
  // gpt-oss: sinks, biases, alternating sliding window, YaRN, clamped SwiGLU experts under
  // softmax-of-the-chosen routing.
  FixtureSpec gpt_oss = base;
  gpt_oss.arch = "gpt-oss", gpt_oss.n_layers = 3, gpt_oss.rope_theta = 1.5e5f, gpt_oss.sliding_window = 8;
  gpt_oss.swa_period = 2, gpt_oss.n_experts = 8, gpt_oss.n_experts_used = 2, gpt_oss.expert_hidden_dim = 64;
  gpt_oss.rope_scaling = RopeScaling::Yarn, gpt_oss.rope_factor = 4, gpt_oss.rope_original_ctx = 64;
  gpt_oss.qkv_bias = true;
  // Gemma 4 E-style: sliding layers 0 and 2 with half-size heads, global layers 1 and 3 with one
  // KV head and proportional rope; layers 2 and 3 share the KV of 0 and 1 (as in the real models,
  // the last layer that keeps KV is global: llama.cpp assumes it); per-layer embeddings, layer
  // output scales, the final soft-cap. Four layers: llama.cpp's CPU GELU goes through an f16
  // table, about 1e-7 of NMSE per GELU stage (docs/decisions.md, issue 28).
  FixtureSpec gemma4 = base;
  gemma4.arch = "gemma4", gemma4.n_layers = 4, gemma4.head_dim = 64, gemma4.head_dim_swa = 32;
  gemma4.n_kv_heads_global = 1, gemma4.sliding_window = 8, gemma4.swa_period = 2, gemma4.rope_theta = 1e6f;
  gemma4.rope_theta_swa = 1e4f, gemma4.rope_freqs = true, gemma4.rope_freqs_rotated = 0.25f;
  gemma4.n_kv_shared_layers = 2, gemma4.per_layer_embd = 16, gemma4.layer_out_scale = true;
  gemma4.final_softcap = 5.0f, gemma4.norm_eps = 1e-6f, gemma4.tied_embeddings = true;
  // Gemma 4 26B-A4B-style: the dense FFN beside the experts, V from K in global layers.
  FixtureSpec gemma4moe = gemma4;
  gemma4moe.n_layers = 3, gemma4moe.n_kv_shared_layers = 0, gemma4moe.per_layer_embd = 0;
  gemma4moe.attention_k_eq_v = true, gemma4moe.n_experts = 8, gemma4moe.n_experts_used = 2;
  gemma4moe.expert_hidden_dim = 64, gemma4moe.layer_out_scale = false;
  // Ministral 3: YaRN with a short original context so that the attention temperature grows
  // within the test's tokens.
  FixtureSpec mistral3 = base;
  mistral3.arch = "mistral3", mistral3.rope_theta = 1e6f, mistral3.rope_scaling = RopeScaling::Yarn;
  mistral3.rope_factor = 4, mistral3.rope_original_ctx = 8, mistral3.yarn_log_multiplier = 1.0f;
  mistral3.attn_temperature_beta = 0.1f;
  // Nemotron-H's shape in small: Mamba-2 blocks (8 heads of 16, state 16, 2 groups), attention
  // without rope, squared-ReLU FFNs, each block alone; the MoE family's blocks route 2 of 8 ungated
  // experts by sigmoid with the choice bias, normalised and scaled, beside a shared expert, and a
  // multi-token-prediction block follows the trunk; its latent variant runs the experts at 64.
  FixtureSpec nemotron_h = base;
  nemotron_h.arch = "nemotron_h", nemotron_h.head_dim = 32, nemotron_h.ssm_heads = 8, nemotron_h.ssm_head_dim = 16;
  nemotron_h.ssm_state = 16, nemotron_h.ssm_groups = 2;
  set_block_pattern(nemotron_h, "M-M*-M");
  FixtureSpec nemotron_h_moe = nemotron_h;
  nemotron_h_moe.arch = "nemotron_h_moe", nemotron_h_moe.n_experts = 8, nemotron_h_moe.n_experts_used = 2;
  nemotron_h_moe.expert_hidden_dim = nemotron_h_moe.hidden_dim = 64, nemotron_h_moe.shared_hidden_dim = 96;
  nemotron_h_moe.gating = MoeGating::Sigmoid, nemotron_h_moe.probs_bias = true, nemotron_h_moe.weights_norm = true;
  nemotron_h_moe.weights_scale = 2.5f, nemotron_h_moe.nextn_layers = 1;
  set_block_pattern(nemotron_h_moe, "ME*EM");
  FixtureSpec nemotron_h_latent = nemotron_h_moe;
  nemotron_h_latent.moe_latent_dim = 64, nemotron_h_latent.nextn_layers = 0;
  // LFM2's shape in small: gated short convs in layers 0, 1 and 3, GQA with q/k head norms in layer
  // 2 (as the real models start), tied embeddings; the MoE one with a leading dense block and
  // sigmoid routing whose choice is biased by exp_probs_b.
  FixtureSpec lfm2 = base;
  lfm2.arch = "lfm2", lfm2.n_layers = 4, lfm2.rope_theta = 1e6f, lfm2.tied_embeddings = true;
  lfm2.conv_kernel = 3, lfm2.mixers = {Mixer::ShortConv, Mixer::ShortConv, Mixer::Attention, Mixer::ShortConv};
  FixtureSpec lfm2moe = lfm2;
  lfm2moe.arch = "lfm2moe", lfm2moe.n_experts = 8, lfm2moe.n_experts_used = 2, lfm2moe.expert_hidden_dim = 64;
  lfm2moe.leading_dense_blocks = 1, lfm2moe.gating = MoeGating::Sigmoid, lfm2moe.probs_bias = true;
  // Granite 4.0-H's shape in small: Mamba-2 blocks (8 heads of 32, inner = 2·dim as llama.cpp
  // requires, one group of B and C) beside GQA, each block with its FFN; all four multipliers off 1.
  // The dense one rotates (rope.scaling.finetuned true) and has SiLU-gated FFNs; the MoE one, as
  // the real files, rotates nowhere and routes 2 of 8 SiLU-gated experts by softmax, normalised,
  // beside a shared expert.
  FixtureSpec granite = base;
  granite.arch = "granitehybrid", granite.ssm_heads = 8, granite.ssm_head_dim = 32, granite.ssm_state = 16;
  granite.mixers = {Mixer::Mamba2, Mixer::Attention, Mixer::Mamba2}, granite.n_layers = 3;
  granite.multipliers = {.embedding = 12.0f, .residual = 0.22f, .attention = 0.25f, .logit = 6.0f};
  FixtureSpec granite_moe = granite;
  granite_moe.mixers = {Mixer::Attention, Mixer::Mamba2, Mixer::Mamba2}, granite_moe.no_rope = true;
  granite_moe.n_experts = 8, granite_moe.n_experts_used = 2, granite_moe.shared_hidden_dim = 96;
  granite_moe.expert_hidden_dim = granite_moe.hidden_dim = 64, granite_moe.weights_norm = true;
  granite_moe.multipliers = {.embedding = 10.0f, .residual = 0.25f, .attention = 0.1f, .logit = 8.0f};
  FixtureSpec smollm3 = base;  // layer 3 has no rope
  smollm3.arch = "smollm3", smollm3.n_layers = 4, smollm3.rope_theta = 5e6f, smollm3.tied_embeddings = true;
  return {{"llama " + t, llama},
          {"mistral " + t, mistral, "llama"},
          {"qwen2 " + t, qwen2},
          {"qwen3 " + t, qwen3},
          {"qwen3-embedding " + t, qwen3_embedding},
          {"qwen3moe " + t, qwen3moe},
          {"qwen2moe " + t, qwen2moe},
          {"deepseek2-mla " + t, mla},
          {"deepseek2-v2 " + t, v2},
          {"deepseek2-v3 " + t, v3},
          {"gemma2 " + t, gemma2},
          {"gemma3 " + t, gemma3},
          {"phi3 " + t, phi3},
          {"qwen35 " + t, qwen35},
          {"qwen35moe " + t, qwen35moe},
          {"gpt-oss " + t, gpt_oss},
          {"gemma4 " + t, gemma4},
          {"gemma4-moe " + t, gemma4moe},
          {"mistral3 " + t, mistral3},
          {"smollm3 " + t, smollm3},
          {"nemotron_h " + t, nemotron_h},
          {"nemotron_h_moe " + t, nemotron_h_moe},
          {"nemotron_h_moe-latent " + t, nemotron_h_latent},
          {"lfm2 " + t, lfm2},
          {"lfm2moe " + t, lfm2moe},
          {"granitehybrid " + t, granite},
          {"granitehybrid-moe " + t, granite_moe}};
}

namespace {

// The fixture in its other layouts and with every optional tensor, and what changed ("" if nothing).
std::pair<FixtureSpec, std::string> other_layout(FixtureSpec s) {
  const Architecture& a = architecture(s.arch);
  const BlockRecipe& r = a.recipe;
  ModelConfig usual = fixture_config(s);
  std::vector<std::string> what;
  if (r.layouts.qkv != Fusion::Never) {
    s.fused_qkv = !usual.layout.fused_qkv;
    what.push_back(*s.fused_qkv ? "fused-qkv" : "separate-qkv");
  }
  if (r.layouts.gate_up_exps != Fusion::Never && s.n_experts) {
    s.fused_gate_up = !usual.layout.fused_gate_up_exps;
    what.push_back(*s.fused_gate_up ? "fused-gate-up" : "separate-gate-up");
  }
  if (r.attention.qkv_bias == Presence::Usual) {  // qwen2's files have them: without
    s.qkv_bias = false;
    what.push_back("no-qkv-biases");
  } else if (varies(r.attention.qkv_bias) && !usual.qkv_bias) {
    s.qkv_bias = true, s.fused_qkv_bias = false;  // beside a fused weight: the legacy layout
    what.push_back("qkv-biases");
  }
  if (varies(r.attention.out_bias) && !usual.attn_out_bias) s.out_bias = true, what.push_back("out-bias");
  if (varies(r.ffn.bias) && (!s.n_experts || s.leading_dense_blocks))  // biases of a dense FFN
    s.ffn_bias = true, what.push_back("ffn-biases");
  if (varies(r.embeddings.output_bias)) s.output_bias = true, what.push_back("output-bias");
  return {s, fmt::format("{}", fmt::join(what, "-"))};
}

}  // namespace

std::vector<EngineFixture> layout_fixtures(DType type) {
  std::vector<EngineFixture> out;
  std::set<std::pair<std::string, bool>> seen;  // (architecture, with experts)
  for (const EngineFixture& f : family_fixtures(type)) {
    if (!seen.insert({f.spec.arch, f.spec.n_experts > 0}).second) continue;
    std::string family = f.name.substr(0, f.name.find(' ')), t = f.name.substr(f.name.find(' '));
    auto [spec, what] = other_layout(f.spec);
    if (!what.empty()) out.push_back({family + "-" + what + t, spec, f.oracle_arch});
    if (f.spec.n_kv_shared_layers) {  // gemma4's shared-KV layers with K and V of their own
      FixtureSpec own = f.spec;
      own.kv_in_shared_layers = true;
      out.push_back({family + "-kv-in-shared-layers" + t, own, f.oracle_arch});
    }
  }
  return out;
}

EngineFixture family_fixture(const std::string& name, DType type) {
  for (EngineFixture& f : family_fixtures(type))
    if (f.name == name + " " + std::string(info(type).name)) return f;
  throw Error(fmt::format("no family fixture named {}", name));
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
