// vkllm-bench fixture: writes a random-weight GGUF model in the shape of a real one (for
// `vkllm bench` and `vkllm run` without downloads). Weights are random; the speed is real.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "bench.h"
#include "error.h"
#include "fixture/fixture.h"
#include "gguf/writer.h"
#include "host_memory.h"
#include "output.h"

namespace vkllm::bench {

namespace {

// A Qwen3.5/3.6 dense hybrid of these dims (docs/formats.md §10).
FixtureSpec qwen35(uint32_t dim, uint32_t layers, uint32_t heads, uint32_t kv_heads, uint32_t hidden,
                   uint32_t linear_v_heads, bool tied) {
  FixtureSpec s{.arch = "qwen35",
                .dim = dim,
                .n_layers = layers,
                .n_heads = heads,
                .n_kv_heads = kv_heads,
                .head_dim = 256,
                .hidden_dim = hidden,
                .vocab_size = 248320,
                .seq_len = 262144,
                .norm_eps = 1e-6f,
                .rope_theta = 1e7f,
                .tied_embeddings = tied};
  s.linear_k_heads = 16, s.linear_v_heads = linear_v_heads, s.linear_head_dim = 128, s.conv_kernel = 4;
  s.rope_dim = 64, s.rope_sections[0] = 11, s.rope_sections[1] = 11, s.rope_sections[2] = 10, s.nextn_layers = 1;
  return s;
}

FixtureSpec qwen35moe(uint32_t dim, uint32_t layers, uint32_t heads, uint32_t kv_heads, uint32_t linear_v_heads,
                      uint32_t experts, uint32_t used, uint32_t expert_hidden) {
  FixtureSpec s = qwen35(dim, layers, heads, kv_heads, expert_hidden, linear_v_heads, false);
  s.arch = "qwen35moe", s.n_experts = experts, s.n_experts_used = used, s.expert_hidden_dim = expert_hidden;
  s.shared_hidden_dim = expert_hidden;
  return s;
}

// Nemotron-H 8B (nvidia/Nemotron-H-8B-Base-8K): 24 Mamba-2 blocks of 128 heads x 64 (8 groups,
// state 128), 4 attention blocks (GQA 32 / 8, head 128, no rope), 24 squared-ReLU FFNs of 21504.
FixtureSpec nemotron_h_8b() {
  FixtureSpec s{.arch = "nemotron_h",
                .dim = 4096,
                .n_heads = 32,
                .n_kv_heads = 8,
                .head_dim = 128,
                .hidden_dim = 21504,
                .vocab_size = 131072,
                .seq_len = 8192};
  s.ssm_heads = 128, s.ssm_head_dim = 64, s.ssm_state = 128, s.ssm_groups = 8, s.conv_kernel = 4;
  set_block_pattern(s, "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-");
  return s;
}

// Nemotron 3 Nano 30B-A3B: 23 Mamba-2 blocks (64 heads x 64, 8 groups, state 128), 6 attention
// blocks (GQA 32 / 2, head 128), 23 MoE blocks of 128 squared-ReLU experts of 1856 (6 chosen by
// sigmoid, normalised, x2.5) and a shared expert of 3712.
FixtureSpec nemotron_3_nano() {
  FixtureSpec s{.arch = "nemotron_h_moe",
                .dim = 2688,
                .n_heads = 32,
                .n_kv_heads = 2,
                .head_dim = 128,
                .hidden_dim = 1856,
                .vocab_size = 131072,
                .seq_len = 262144};
  s.ssm_heads = 64, s.ssm_head_dim = 64, s.ssm_state = 128, s.ssm_groups = 8, s.conv_kernel = 4;
  s.n_experts = 128, s.n_experts_used = 6, s.expert_hidden_dim = 1856, s.shared_hidden_dim = 3712;
  s.n_shared_experts = 1, s.gating = MoeGating::Sigmoid, s.weights_norm = true, s.weights_scale = 2.5f;
  s.probs_bias = true;
  set_block_pattern(s, "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME");
  return s;
}

// Issue 28's families, from their published configs.
FixtureSpec gpt_oss_20b() {
  FixtureSpec s{.arch = "gpt-oss",
                .dim = 2880,
                .n_layers = 24,
                .n_heads = 64,
                .n_kv_heads = 8,
                .head_dim = 64,
                .hidden_dim = 2880,
                .vocab_size = 201088,
                .seq_len = 131072,
                .rope_theta = 150000.0f,
                .qkv_bias = true};
  s.n_experts = 32, s.n_experts_used = 4, s.expert_hidden_dim = 2880, s.sliding_window = 128, s.swa_period = 2;
  s.rope_scaling = RopeScaling::Yarn, s.rope_factor = 32, s.rope_original_ctx = 4096;
  return s;
}

// Gemma 4: five sliding layers (head 256, rope base 1e4) to one global (head 512, a quarter of it
// rotated, base 1e6), final soft-cap 30.
FixtureSpec gemma4(uint32_t dim, uint32_t layers, uint32_t heads, uint32_t kv_heads, uint32_t hidden, uint32_t window) {
  FixtureSpec s{.arch = "gemma4",
                .dim = dim,
                .n_layers = layers,
                .n_heads = heads,
                .n_kv_heads = kv_heads,
                .head_dim = 512,
                .hidden_dim = hidden,
                .vocab_size = 262144,
                .seq_len = 131072,
                .norm_eps = 1e-6f,
                .rope_theta = 1e6f,
                .tied_embeddings = true,
                .rope_freqs = true};
  s.head_dim_swa = 256, s.sliding_window = window, s.swa_period = 6, s.rope_theta_swa = 1e4f;
  s.rope_freqs_rotated = 0.25f, s.final_softcap = 30.0f, s.layer_out_scale = true;
  return s;
}

FixtureSpec gemma4_e4b() {
  FixtureSpec s = gemma4(2560, 42, 8, 2, 10240, 512);
  s.n_kv_shared_layers = 18, s.per_layer_embd = 256;
  return s;
}

FixtureSpec gemma4_26b_a4b() {
  FixtureSpec s = gemma4(2816, 30, 16, 8, 2112, 1024);
  s.n_kv_heads_global = 2, s.attention_k_eq_v = true;
  s.n_experts = 128, s.n_experts_used = 8, s.expert_hidden_dim = 704;
  return s;
}

// Lavapipe-sized Gemma 4 MoE (26B-A4B's block: heads of 512 and 256, V from K in the global
// layers, the experts beside the dense FFN, its converter's fused expert gate/up): what issue 44's
// layouts are measured on (docs/decisions.md).
FixtureSpec small_gemma4_moe() {
  FixtureSpec s = gemma4(512, 6, 4, 2, 512, 128);
  s.vocab_size = 32000, s.seq_len = 32768, s.n_kv_heads_global = 1, s.attention_k_eq_v = true;
  s.n_experts = 32, s.n_experts_used = 4, s.expert_hidden_dim = 256;
  return s;
}

FixtureSpec ministral3_8b() {
  FixtureSpec s{.arch = "mistral3",
                .dim = 4096,
                .n_layers = 34,
                .n_heads = 32,
                .n_kv_heads = 8,
                .head_dim = 128,
                .hidden_dim = 14336,
                .vocab_size = 131072,
                .seq_len = 262144,
                .rope_theta = 1e9f};
  s.rope_scaling = RopeScaling::Yarn, s.rope_factor = 16, s.rope_original_ctx = 16384, s.yarn_log_multiplier = 1;
  s.attn_temperature_beta = 0.1f;
  return s;
}

// LFM2 (issue 42; docs/formats.md §15.1): gated short convs of 3 taps, GQA (32 heads of 64, 8 KV
// heads, q/k head norms) in the blocks `attention`, a 65536-token vocabulary, tied embeddings.
FixtureSpec lfm2(uint32_t layers, uint32_t hidden, std::vector<uint32_t> attention) {
  FixtureSpec s{.arch = "lfm2",
                .dim = 2048,
                .n_layers = layers,
                .n_heads = 32,
                .n_kv_heads = 8,
                .hidden_dim = hidden,
                .vocab_size = 65536,
                .seq_len = 128000,
                .rope_theta = 1e6f,
                .tied_embeddings = true};
  s.conv_kernel = 3, s.mixers.assign(layers, Mixer::ShortConv);
  for (uint32_t l : attention) s.mixers[l] = Mixer::Attention;
  return s;
}
// LFM2-8B-A1B: two dense blocks, then 32 experts of 1792, 4 chosen by sigmoid score + bias.
FixtureSpec lfm2_8b_a1b() {
  FixtureSpec s = lfm2(24, 7168, {2, 6, 10, 14, 18, 21});
  s.arch = "lfm2moe", s.n_experts = 32, s.n_experts_used = 4, s.expert_hidden_dim = 1792;
  s.leading_dense_blocks = 2, s.gating = MoeGating::Sigmoid, s.probs_bias = true;
  return s;
}
// Granite 4.0-H (issue 42; docs/formats.md §15.2), from the Hugging Face config.json values that
// llama.cpp's converter reads (GraniteHybridModel): 40 blocks, attention (GQA, head 128, no rope:
// rope.scaling.finetuned false) in blocks 5, 15, 25 and 35 (layer_types), Mamba-2 in the rest
// (mamba_n_heads x mamba_d_head 64 = 2 x hidden_size, mamba_n_groups 1, mamba_d_state 128,
// mamba_d_conv 4), every block a softmax-routed MoE of SiLU-gated experts of intermediate_size
// beside a shared expert of shared_intermediate_size, vocabulary 100352, tied embeddings, context
// 2^20 (what the converter writes without rope). Multipliers: tiny's embedding 12, residual 0.22,
// attention 1/128, logits 6; small takes the same (their values cost nothing: only whether each
// is set changes the graph).
FixtureSpec granite_4_h(uint32_t dim, uint32_t heads, uint32_t kv_heads, uint32_t experts, uint32_t used,
                        uint32_t expert_hidden, uint32_t shared_hidden) {
  FixtureSpec s{.arch = "granitehybrid",
                .dim = dim,
                .n_layers = 40,
                .n_heads = heads,
                .n_kv_heads = kv_heads,
                .head_dim = dim / heads,
                .hidden_dim = expert_hidden,
                .vocab_size = 100352,
                .seq_len = 1u << 20,
                .tied_embeddings = true};
  s.ssm_heads = 2 * dim / 64, s.ssm_head_dim = 64, s.ssm_state = 128, s.ssm_groups = 1, s.conv_kernel = 4;
  s.mixers.assign(40, Mixer::Mamba2);
  for (uint32_t l : {5, 15, 25, 35}) s.mixers[l] = Mixer::Attention;
  s.n_experts = experts, s.n_experts_used = used, s.expert_hidden_dim = expert_hidden;
  s.shared_hidden_dim = shared_hidden, s.weights_norm = true, s.no_rope = true;
  s.multipliers = {.embedding = 12.0f, .residual = 0.22f, .attention = 0.0078125f, .logit = 6.0f};
  return s;
}

// Shapes from the models' published configs (docs/formats.md §6).
const std::map<std::string, FixtureSpec>& presets() {
  static const std::map<std::string, FixtureSpec> p = {
      {"smollm2-135m",
       {.dim = 576,
        .n_layers = 30,
        .n_heads = 9,
        .n_kv_heads = 3,
        .hidden_dim = 1536,
        .vocab_size = 49152,
        .seq_len = 8192,
        .rope_theta = 100000.0f,
        .tied_embeddings = true}},
      {"llama-3.2-1b",
       {.dim = 2048,
        .n_layers = 16,
        .n_heads = 32,
        .n_kv_heads = 8,
        .hidden_dim = 8192,
        .vocab_size = 128256,
        .seq_len = 131072,
        .rope_theta = 500000.0f,
        .tied_embeddings = true,
        .rope_freqs = true}},
      {"qwen2.5-0.5b",
       {.arch = "qwen2",
        .dim = 896,
        .n_layers = 24,
        .n_heads = 14,
        .n_kv_heads = 2,
        .hidden_dim = 4864,
        .vocab_size = 151936,
        .seq_len = 32768,
        .norm_eps = 1e-6f,
        .rope_theta = 1000000.0f,
        .tied_embeddings = true}},
      {"llama-3.1-8b",
       {.dim = 4096,
        .n_layers = 32,
        .n_heads = 32,
        .n_kv_heads = 8,
        .hidden_dim = 14336,
        .vocab_size = 128256,
        .seq_len = 131072,
        .rope_theta = 500000.0f,
        .rope_freqs = true}},
      // Lavapipe-sized (scripts/bench_vs_llamacpp's small preset): real proportions, a context long
      // enough for generation at depth 16384.
      {"small",
       {.dim = 256,
        .n_layers = 4,
        .n_heads = 4,
        .n_kv_heads = 2,
        .hidden_dim = 768,
        .vocab_size = 32000,
        .seq_len = 32768,
        .rope_theta = 500000.0f}},
      {"small-mla",
       {.arch = "deepseek2",
        .dim = 256,
        .n_layers = 4,
        .n_heads = 4,
        .hidden_dim = 768,
        .vocab_size = 32000,
        .seq_len = 32768,
        .norm_eps = 1e-6f,
        .kv_lora_rank = 128,
        .qk_nope_head_dim = 32,
        .qk_rope_head_dim = 32,
        .v_head_dim = 32}},
      {"tinyllama-1.1b",
       {.dim = 2048,
        .n_layers = 22,
        .n_heads = 32,
        .n_kv_heads = 4,
        .hidden_dim = 5632,
        .vocab_size = 32000,
        .seq_len = 2048}},
      {"qwen3-0.6b",
       {.arch = "qwen3",
        .dim = 1024,
        .n_layers = 28,
        .n_heads = 16,
        .n_kv_heads = 8,
        .head_dim = 128,
        .hidden_dim = 3072,
        .vocab_size = 151936,
        .seq_len = 40960,
        .norm_eps = 1e-6f,
        .rope_theta = 1000000.0f,
        .tied_embeddings = true}},
      {"gemma-2-2b",
       {.arch = "gemma2",
        .dim = 2304,
        .n_layers = 26,
        .n_heads = 8,
        .n_kv_heads = 4,
        .head_dim = 256,
        .hidden_dim = 9216,
        .vocab_size = 256000,
        .seq_len = 8192,
        .norm_eps = 1e-6f,
        .tied_embeddings = true,
        .sliding_window = 4096,
        .swa_period = 2,
        .attn_softcap = 50.0f,
        .final_softcap = 30.0f}},
      {"phi-3-mini",
       {.arch = "phi3",
        .dim = 3072,
        .n_layers = 32,
        .n_heads = 32,
        .n_kv_heads = 32,
        .hidden_dim = 8192,
        .vocab_size = 32064,
        .seq_len = 4096}},
      // Mixture of experts. Real per-layer shapes; --layers keeps a few of them.
      {"deepseek-v2-lite",
       {.arch = "deepseek2",
        .dim = 2048,
        .n_layers = 27,
        .n_heads = 16,
        .hidden_dim = 10944,
        .vocab_size = 102400,
        .seq_len = 163840,
        .norm_eps = 1e-6f,
        .kv_lora_rank = 512,
        .qk_nope_head_dim = 128,
        .qk_rope_head_dim = 64,
        .v_head_dim = 128,
        .n_experts = 64,
        .n_experts_used = 6,
        .expert_hidden_dim = 1408,
        .n_shared_experts = 2,
        .leading_dense_blocks = 1}},
      // Qwen3-30B-A3B's blocks (48 of them in the real model: use --layers).
      {"qwen3-30b-a3b",
       {.arch = "qwen3moe",
        .dim = 2048,
        .n_layers = 48,
        .n_heads = 32,
        .n_kv_heads = 4,
        .head_dim = 128,
        .hidden_dim = 6144,
        .vocab_size = 151936,
        .seq_len = 40960,
        .norm_eps = 1e-6f,
        .rope_theta = 1000000.0f,
        .n_experts = 128,
        .n_experts_used = 8,
        .expert_hidden_dim = 768}},
      // Qwen3.5 / Qwen3.6 hybrids (issue 27): Gated DeltaNet in three layers of four (key heads of
      // 128, a 4-tap conv), gated GQA of head dim 256 with rope over a quarter of the head in
      // sections {11, 11, 10}, one multi-token-prediction block (loaded, not run).
      {"qwen3.5-0.8b", qwen35(1024, 24, 8, 2, 3584, 16, true)},
      {"qwen3.5-9b", qwen35(4096, 32, 16, 4, 12288, 32, false)},
      {"qwen3.6-27b", qwen35(5120, 64, 24, 4, 17408, 48, false)},
      {"qwen3.6-35b-a3b", qwen35moe(2048, 40, 16, 2, 32, 256, 8, 512)},
      // Issue 28: gpt-oss (sinks, biases, alternating window, YaRN, 32 experts), Gemma 4 (per-layer
      // head sizes, shared KV, per-layer embeddings; the MoE beside a dense FFN), Ministral 3,
      // SmolLM3 (no rope in every fourth layer).
      {"gpt-oss-20b", gpt_oss_20b()},
      {"gemma-4-e4b", gemma4_e4b()},
      {"gemma-4-26b-a4b", gemma4_26b_a4b()},
      {"small-gemma4-moe", small_gemma4_moe()},
      {"ministral-3-8b", ministral3_8b()},
      // Issue 42: Nemotron-H (Mamba-2, attention and squared-ReLU FFN blocks) and Nemotron 3 Nano
      // (its FFN blocks a sigmoid-routed MoE); --layers keeps each kind's share.
      {"nemotron-h-8b", nemotron_h_8b()},
      {"nemotron-3-nano-30b-a3b", nemotron_3_nano()},
      // Issue 42: LFM2 (short convs beside attention; with --layers 4: three short convs, one
      // attention block) and its mixture of experts.
      {"lfm2-1.2b", lfm2(16, 8192, {2, 5, 8, 10, 12, 14})},
      {"lfm2-8b-a1b", lfm2_8b_a1b()},
      // Issue 42: Granite 4.0-H tiny (7B-A1B: 64 experts of 512, 6 chosen, shared 1024) and small
      // (32B-A9B: 72 experts of 768, 10 chosen, shared 1536); --layers keeps each kind's share.
      {"granite-4.0-h-tiny", granite_4_h(1536, 12, 4, 64, 6, 512, 1024)},
      {"granite-4.0-h-small", granite_4_h(4096, 32, 8, 72, 10, 768, 1536)},
      {"smollm3-3b",
       {.arch = "smollm3",
        .dim = 2048,
        .n_layers = 36,
        .n_heads = 16,
        .n_kv_heads = 4,
        .hidden_dim = 11008,
        .vocab_size = 128256,
        .seq_len = 65536,
        .rope_theta = 5e6f,
        .tied_embeddings = true}},
      // The MoE decode benchmark (docs/decisions.md, issue 16): 8 experts, 2 used, and a dense
      // model with the same active parameters (FFN width 2 x 1024).
      {"moe-8x2",
       {.arch = "qwen3moe",
        .dim = 1024,
        .n_layers = 12,
        .n_heads = 16,
        .n_kv_heads = 8,
        .head_dim = 64,
        .hidden_dim = 2048,
        .vocab_size = 32000,
        .seq_len = 4096,
        .n_experts = 8,
        .n_experts_used = 2,
        .expert_hidden_dim = 1024}},
      {"moe-8x2-dense",
       {.arch = "qwen3",
        .dim = 1024,
        .n_layers = 12,
        .n_heads = 16,
        .n_kv_heads = 8,
        .head_dim = 64,
        .hidden_dim = 2048,
        .vocab_size = 32000,
        .seq_len = 4096}},
  };
  return p;
}

// The first n blocks; where the blocks differ (Nemotron-H) n of them in the model's order, each
// kind (mixer and FFN) keeping its share and, where n allows, at least one.
void keep_blocks(FixtureSpec& s, uint32_t n) {
  if (s.mixers.empty() || n >= s.n_layers) {
    s.n_layers = std::min(n, s.n_layers);
    return;
  }
  auto kind = [&](uint32_t l) { return std::pair{s.mixers[l], s.ffn_layers.empty() ? uint8_t(1) : s.ffn_layers[l]}; };
  std::vector<std::pair<Mixer, uint8_t>> kinds;
  std::vector<uint32_t> count, quota;
  for (uint32_t l = 0; l < s.n_layers; ++l) {
    size_t k = std::find(kinds.begin(), kinds.end(), kind(l)) - kinds.begin();
    if (k == kinds.size()) kinds.push_back(kind(l)), count.push_back(0);
    ++count[k];
  }
  uint32_t given = 0;
  for (uint32_t c : count) quota.push_back(n >= kinds.size() ? std::max(1u, c * n / s.n_layers) : c * n / s.n_layers);
  for (uint32_t q : quota) given += q;
  while (given < n) {  // the rest to the kinds furthest below their share
    size_t k = 0;
    for (size_t i = 1; i < kinds.size(); ++i)
      if (double(count[i]) / (quota[i] + 1) > double(count[k]) / (quota[k] + 1)) k = i;
    ++quota[k], ++given;
  }
  std::vector<Mixer> mixers;
  std::vector<uint8_t> ffn;
  for (uint32_t l = 0; l < s.n_layers; ++l) {
    size_t k = std::find(kinds.begin(), kinds.end(), kind(l)) - kinds.begin();
    if (quota[k] == 0) continue;
    --quota[k], mixers.push_back(s.mixers[l]), ffn.push_back(kind(l).second);
  }
  s.mixers = mixers, s.n_layers = n;
  if (!s.ffn_layers.empty()) s.ffn_layers = ffn;
}

struct FixtureOptions {
  std::string preset, type = "q8_0", mix, out;
  std::optional<uint32_t> layers;
  // The tensor layouts (docs/formats.md §13); unset: what llama.cpp's converter writes by default.
  bool fused_qkv = false, separate_qkv = false, fused_gate_up = false, separate_gate_up = false;
};

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (auto& [name, spec] : presets()) names.push_back(name);
  return names;
}

void write_fixture(const FixtureOptions& o) {
  FixtureSpec spec = presets().at(o.preset);  // the validators admitted only known names
  spec.weight_type = *dtype_named(o.type);
  spec.mix = o.mix;
  if (o.fused_qkv || o.separate_qkv) spec.fused_qkv = o.fused_qkv;
  if (o.fused_gate_up || o.separate_gate_up) spec.fused_gate_up = o.fused_gate_up;
  if (o.layers) {  // the shared-KV layers (gemma4) stay the same share of the blocks kept
    spec.n_kv_shared_layers = uint32_t(uint64_t(spec.n_kv_shared_layers) * *o.layers / spec.n_layers);
    keep_blocks(spec, *o.layers);
  }
  // The writer holds every tensor in memory before it writes (and one tensor twice while adding
  // it): refuse early, naming a size that fits, rather than be killed half way.
  uint64_t bytes = fixture_tensor_bytes(spec);
  std::optional<uint64_t> free = available_host_memory();
  if (free && bytes > *free / 4 * 3) {
    uint64_t fits = uint64_t(double(spec.n_layers) * double(*free / 4 * 3) / double(bytes));
    throw Error(
        fmt::format("fixture: {} with {} needs {:.1f} GB of memory to write, {:.1f} GB is available: pass "
                    "--layers {} or fewer",
                    o.preset, cli::count(spec.n_layers, "layer"), double(bytes) / 1e9, double(*free) / 1e9,
                    std::max<uint64_t>(fits, 1)));
  }
  fmt::print(stderr, "writing {} ({:.2f} GB)\n", o.out, double(bytes) / 1e9);
  fixture_writer(spec).save(o.out);
  fmt::print("wrote {} ({}, {} weights)\n", o.out, cli::count(spec.n_layers, "layer"), o.mix.empty() ? o.type : o.mix);
}

}  // namespace

void add_fixture_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("fixture", "Write a random-weight GGUF model of a real model's shape");
  auto o = std::make_shared<FixtureOptions>();
  cmd->add_option("--preset", o->preset, "The real model's shape")
      ->type_name("NAME")
      ->required()
      ->check(one_of(preset_names()));
  cmd->add_option("--type", o->type, "Weight type of the matrices")
      ->type_name("TYPE")
      ->check(one_of(weight_type_names()));
  cmd->add_option(
         "--mix", o->mix,
         "A llama.cpp file type (Q2_K, Q3_K_M, Q3_K_L, Q4_K_M, IQ4_XS, IQ4_NL, IQ3_M, Q5_1, MXFP4_MOE, ...): each "
         "matrix gets the type llama.cpp's quantizer gives it; overrides --type")
      ->type_name("MIX");
  cmd->add_option("--layers", o->layers, "Fewer layers than the real model (default: all)")
      ->type_name("N")
      ->check(int_range(1, 1024));
  auto* fused = cmd->add_flag("--fused-qkv", o->fused_qkv,
                              "Q, K and V in one attn_qkv tensor (llama.cpp's converter --fuse-qkv), where the "
                              "architecture's files may have it");
  cmd->add_flag("--separate-qkv", o->separate_qkv, "Q, K and V in attn_q, attn_k, attn_v (phi3's older files)")
      ->excludes(fused);
  auto* fused_gu = cmd->add_flag("--fused-gate-up", o->fused_gate_up,
                                 "The experts' gate and up matrices in one ffn_gate_up_exps tensor (llama.cpp's "
                                 "converter --fuse-gate-up-exps; Gemma 4's default)");
  cmd->add_flag("--separate-gate-up", o->separate_gate_up, "The experts' gate and up in ffn_gate_exps, ffn_up_exps")
      ->excludes(fused_gu);
  cmd->add_option("-o,--out", o->out, "Output GGUF file")->type_name("FILE")->required()->check(cli::non_empty);
  cmd->callback([o] { write_fixture(*o); });
}

}  // namespace vkllm::bench
