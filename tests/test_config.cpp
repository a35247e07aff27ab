// ModelConfig from GGUF metadata: attention kinds, exact KV bytes per token and parameter counts of
// real model shapes, both DeepSeek2 MLA layouts, and errors that name the first wrong tensor.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "arch/architecture.h"
#include "arch/kv_comparison.h"
#include "arch/model_config.h"
#include "arch/tensors.h"
#include "catch.h"
#include "engine_fixtures.h"
#include "error.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "harness.h"

using namespace vkllm;
using test::error_of;

namespace {

GgufFile parse(const GgufWriter& w, const std::string& name = "model.gguf") { return GgufFile::parse(w.bytes(), name); }

// A metadata-only file of a config (no tensors): what vocab-only GGUFs look like.
GgufFile metadata_file(const ModelConfig& c) {
  GgufWriter w;
  write_config(w, c);
  return parse(w);
}

// Copies a file's metadata and tensors through `edit`, which may change a tensor's name and shape
// (and returns false to drop it), and adds a tensor `extra` of shape extra_ne.
using Edit = std::function<bool(std::string& name, std::vector<uint64_t>& ne)>;
GgufFile rewrite(const GgufFile& f, const Edit& edit, const std::string& extra = "",
                 const std::vector<uint64_t>& extra_ne = {}) {
  GgufWriter w;
  for (const GgufKv& kv : f.metadata()) w.add(kv.key, kv.value);
  for (const GgufTensor& t : f.tensors()) {
    std::string name(t.name);
    std::vector<uint64_t> ne = t.shape();
    if (!edit(name, ne)) continue;
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    w.add_tensor(name, ne, t.type, std::vector<std::byte>(row_bytes(t.type, n)));
  }
  if (!extra.empty()) {
    uint64_t n = 1;
    for (uint64_t d : extra_ne) n *= d;
    w.add_tensor(extra, extra_ne, DType::F32, std::vector<std::byte>(4 * n));
  }
  return parse(w);
}

FixtureSpec small(const std::string& arch, uint32_t heads, uint32_t kv_heads) {
  FixtureSpec s;
  s.arch = arch;
  s.dim = 64, s.n_layers = 2, s.n_heads = heads, s.n_kv_heads = kv_heads, s.hidden_dim = 96, s.vocab_size = 300;
  return s;
}

FixtureSpec real_shape(uint32_t dim, uint32_t layers, uint32_t heads, uint32_t kv, uint32_t ffn, uint32_t vocab) {
  FixtureSpec s;
  s.dim = dim, s.n_layers = layers, s.n_heads = heads, s.n_kv_heads = kv, s.hidden_dim = ffn, s.vocab_size = vocab;
  return s;
}

FixtureSpec v2_lite_dense() {
  FixtureSpec s = real_shape(2048, 27, 16, 16, 10944, 102400);
  s.arch = "deepseek2";
  s.kv_lora_rank = 512, s.qk_nope_head_dim = 128, s.qk_rope_head_dim = 64, s.v_head_dim = 128;
  return s;
}

}  // namespace

TEST_CASE("config of fixture models gives attention kind and KV bytes", "[config]") {
  struct Case {
    const char* what;
    FixtureSpec spec;
    AttentionKind kind;
    uint64_t kv_bytes;  // by hand: layers * kv heads * (k + v head dims) * 2 bytes
  };
  FixtureSpec mla = small("deepseek2", 4, 4);
  FixtureSpec mla_q = mla;
  mla_q.q_lora_rank = 24, mla_q.mla_layout = MlaLayout::Fused;
  std::vector<Case> cases = {
      {"llama MHA", small("llama", 4, 4), AttentionKind::MHA, 2 * 4 * (16 + 16) * 2},
      {"llama GQA", small("llama", 8, 2), AttentionKind::GQA, 2 * 2 * (8 + 8) * 2},
      {"llama MQA", small("llama", 4, 1), AttentionKind::MQA, 2 * 1 * (16 + 16) * 2},
      {"qwen2 GQA", small("qwen2", 4, 2), AttentionKind::GQA, 2 * 2 * (16 + 16) * 2},
      {"deepseek2 MLA", mla, AttentionKind::MLA, 2 * (32 + 8) * 2},  // kv_lora_rank + rope dim per layer
      {"deepseek2 MLA q_lora fused", mla_q, AttentionKind::MLA, 2 * (32 + 8) * 2},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    GgufFile f = GgufFile::parse(make_fixture_model(c.spec), "fixture.gguf");
    ModelConfig cfg = ModelConfig::from_gguf(f);
    CHECK(cfg.attention_kind() == c.kind);
    CHECK(cfg.kv_bytes_per_token() == c.kv_bytes);
    CHECK(cfg.arch->name == c.spec.arch);
    CHECK(cfg.n_layers == 2);
    CHECK(cfg.vocab_size == 300);
    CHECK(!cfg.tied_embeddings);
    CHECK(cfg.qkv_bias == (c.spec.arch == "qwen2"));
    CHECK(cfg.rope.mode == (c.spec.arch == "qwen2" ? RopeMode::Neox : RopeMode::Norm));
    CHECK(parameter_count(cfg) == [&] {
      uint64_t n = 0;
      for (const GgufTensor& t : f.tensors()) n += t.n_elements();
      return n;
    }());
  }
}

TEST_CASE("config of real model shapes gives known KV bytes and parameter counts", "[config]") {
  struct Case {
    const char* what;
    FixtureSpec spec;
    uint64_t kv_bytes, parameters;
  };
  FixtureSpec qwen = real_shape(896, 24, 14, 2, 4864, 151936);
  qwen.arch = "qwen2", qwen.tied_embeddings = true;
  FixtureSpec smol = real_shape(576, 30, 9, 3, 1536, 49152);
  smol.tied_embeddings = true;
  std::vector<Case> cases = {
      {"Llama-2-7B", real_shape(4096, 32, 32, 32, 11008, 32000), 524288, 6738415616},
      {"TinyLlama-1.1B", real_shape(2048, 22, 32, 4, 5632, 32000), 22528, 1100048384},
      {"Llama-3.1-8B", real_shape(4096, 32, 32, 8, 14336, 128256), 131072, 8030261248},
      {"Qwen2.5-0.5B", qwen, 12288, 494032768},
      {"SmolLM2-135M", smol, 23040, 134515008},
      {"Falcon-7B attention as llama (MQA)", real_shape(4544, 32, 71, 1, 18176, 65024), 8192, 0},
      {"DeepSeek-V2-Lite all dense (MLA)", v2_lite_dense(), 31104, 0},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    ModelConfig cfg = fixture_config(c.spec);
    CHECK(cfg.kv_bytes_per_token(DType::F16) == c.kv_bytes);
    if (c.parameters) CHECK(parameter_count(cfg) == c.parameters);
    // The same through a metadata-only GGUF file.
    CHECK(ModelConfig::from_gguf(metadata_file(cfg)).kv_bytes_per_token() == c.kv_bytes);
  }
  CHECK(fixture_config(cases[0].spec).kv_bytes_per_token(DType::Q8_0) == 32 * 32 * 2 * (128 / 32 * 34));
  CHECK(fixture_config(v2_lite_dense()).kv_bytes_per_token(DType::F32) == 27 * 576 * 4);
  CHECK(fixture_config(v2_lite_dense()).kv_bytes_per_token(DType::Q8_0) == 27 * (576 / 32 * 34));
}

TEST_CASE("KV bytes per token of every attention kind at a model's dimensions", "[config]") {
  auto bytes = [](const ModelConfig& c, DType t = DType::F16) {
    std::vector<uint64_t> out;
    for (const KvKindCost& k : kv_costs_by_kind(c, t)) out.push_back(k.bytes_per_token);
    return out;
  };
  // Llama-2-7B (MHA, 32 heads of 128): GQA with 8 KV heads, MLA with DeepSeek-V2's 512 + 64.
  ModelConfig llama = fixture_config(real_shape(4096, 32, 32, 32, 11008, 32000));
  // hybrid: every 4th of the 32 layers GQA (8 of them, 8 KV heads of 128 + 128)
  CHECK(bytes(llama) == std::vector<uint64_t>{524288, 131072, 16384, 32 * 576 * 2, 8 * 8 * 256 * 2});
  CHECK(kv_costs_by_kind(llama, DType::F16)[1].kv_heads == 8);
  CHECK(kv_costs_by_kind(llama, DType::F16)[0].bytes_per_token == llama.kv_bytes_per_token());
  // A GQA model keeps its own KV heads, an MLA model its own latent; each kind's own row is exact.
  ModelConfig tiny = fixture_config(real_shape(2048, 22, 32, 4, 5632, 32000));
  CHECK(bytes(tiny)[1] == tiny.kv_bytes_per_token());
  ModelConfig v2 = fixture_config(v2_lite_dense());
  CHECK(bytes(v2)[3] == v2.kv_bytes_per_token());
  CHECK(bytes(v2)[0] == 27ull * 16 * (192 + 128) * 2);  // MHA at the decompressed head dims
  CHECK(bytes(v2, DType::Q8_0)[3] == v2.kv_bytes_per_token(DType::Q8_0));
  // Few heads: 4 give GQA 2; 2 have no group, so GQA is MQA; MLA rows count whole blocks.
  CHECK(kv_costs_by_kind(fixture_config(small("llama", 4, 4)), DType::F16)[1].kv_heads == 2);
  CHECK(kv_costs_by_kind(fixture_config(small("llama", 2, 2)), DType::F16)[1].kv_heads == 1);
  CHECK(bytes(fixture_config(small("llama", 4, 4)), DType::Q8_0)[3] == 2 * 3 * 34);  // 64 + 8 values
}

TEST_CASE("config survives write_config and from_gguf unchanged", "[config]") {
  FixtureSpec a = small("llama", 8, 2), b = small("qwen2", 4, 4), c = v2_lite_dense();
  FixtureSpec d = c;
  d.q_lora_rank = 1536, d.mla_layout = MlaLayout::Fused;
  for (const FixtureSpec& s : {a, b, c, d}) {
    ModelConfig want = fixture_config(s);
    want.hidden_dim.back() += 32;  // per-layer widths survive as an array
    want.rope.scaling = RopeScaling::Yarn, want.rope.factor = 40, want.rope.original_ctx = 4096;
    want.rope.yarn_log_multiplier = 0.0707f;
    ModelConfig got = ModelConfig::from_gguf(metadata_file(want));
    CHECK(got.arch == want.arch);
    CHECK(got.arch_name == want.arch_name);
    CHECK(got.name == want.name);
    CHECK((got.dim == want.dim && got.n_layers == want.n_layers && got.n_heads == want.n_heads));
    CHECK((got.n_kv_heads == want.n_kv_heads && got.head_dim == want.head_dim && got.v_head_dim == want.v_head_dim));
    CHECK(got.hidden_dim == want.hidden_dim);
    CHECK((got.vocab_size == want.vocab_size && got.seq_len == want.seq_len && got.norm_eps == want.norm_eps));
    CHECK((got.rope.theta == want.rope.theta && got.rope.dim == want.rope.dim && got.rope.mode == want.rope.mode));
    CHECK((got.rope.scaling == RopeScaling::Yarn && got.rope.factor == 40 && got.rope.original_ctx == 4096));
    CHECK(got.rope.yarn_log_multiplier == 0.0707f);
    CHECK((got.mla.q_lora_rank == want.mla.q_lora_rank && got.mla.kv_lora_rank == want.mla.kv_lora_rank));
    CHECK((got.mla.qk_nope_head_dim == want.mla.qk_nope_head_dim &&
           got.mla.qk_rope_head_dim == want.mla.qk_rope_head_dim));
    CHECK((got.mla.v_head_dim == want.mla.v_head_dim && got.mla.layout == want.mla.layout));
    CHECK(got.qkv_bias == want.qkv_bias);
  }
}

TEST_CASE("config reads both DeepSeek2 MLA layouts", "[config]") {
  GgufWriter split_w;
  write_config(split_w, fixture_config(v2_lite_dense()));
  GgufFile split = parse(split_w);
  // New files: head_count_kv 1, key/value length 576/512, the *_mla keys 192/128 (docs/formats.md §1.5).
  CHECK(split.get_int("deepseek2.attention.head_count_kv") == 1);
  CHECK(split.get_int("deepseek2.attention.key_length") == 576);
  CHECK(split.get_int("deepseek2.attention.value_length") == 512);
  CHECK(split.get_int("deepseek2.attention.key_length_mla") == 192);
  ModelConfig c = ModelConfig::from_gguf(split);
  CHECK(c.mla.layout == MlaLayout::Split);
  CHECK((c.head_dim == 192 && c.v_head_dim == 128 && c.mla.qk_nope_head_dim == 128 && c.rope.dim == 64));
  FixtureSpec old = v2_lite_dense();
  old.mla_layout = MlaLayout::Fused;
  GgufWriter old_w;
  write_config(old_w, fixture_config(old));
  GgufFile fused = parse(old_w);
  // Old files (V2-Lite as converted in 2024): head_count_kv = heads, key/value length 192/128.
  CHECK(fused.get_int("deepseek2.attention.head_count_kv") == 16);
  CHECK(fused.get_int("deepseek2.attention.key_length") == 192);
  CHECK(!fused.has("deepseek2.attention.key_length_mla"));
  ModelConfig o = ModelConfig::from_gguf(fused);
  CHECK(o.mla.layout == MlaLayout::Fused);
  CHECK((o.head_dim == 192 && o.v_head_dim == 128 && o.n_kv_heads == 1 && o.kv_bytes_per_token() == 31104));
}

TEST_CASE("config errors name the first wrong or missing or unexpected tensor", "[config]") {
  GgufFile f = GgufFile::parse(make_fixture_model(small("llama", 4, 2)), "model.gguf");
  auto wrong_shape = rewrite(f, [](std::string& n, std::vector<uint64_t>& ne) {
    if (n == "blk.1.attn_k.weight" || n == "blk.1.attn_v.weight") ne[1] = 16;
    return true;
  });
  CHECK(error_of([&] { ModelConfig::from_gguf(wrong_shape); }) ==
        "model.gguf: tensor blk.1.attn_k.weight has shape [64, 16], expected [64, 32]");
  auto missing = rewrite(f, [](std::string& n, std::vector<uint64_t>&) { return n != "blk.1.ffn_up.weight"; });
  CHECK(error_of([&] { ModelConfig::from_gguf(missing); }) ==
        "model.gguf: missing tensor blk.1.ffn_up.weight (expected shape [64, 96])");
  auto keep = [](std::string&, std::vector<uint64_t>&) { return true; };
  auto moe = rewrite(f, keep, "blk.0.ffn_gate_exps.weight", {64, 128, 4});
  CHECK(error_of([&] { ModelConfig::from_gguf(moe); }) ==
        "model.gguf: unexpected tensor blk.0.ffn_gate_exps.weight for a llama model (a mixture-of-experts tensor, "
        "but the metadata declares no experts): llama.cpp does not read it either, so the file is damaged or of "
        "another architecture");
  auto tied = rewrite(f, [](std::string& n, std::vector<uint64_t>&) { return n != "output.weight"; });
  CHECK(ModelConfig::from_gguf(tied).tied_embeddings);
}

// Whether llama.cpp would read the file: a tensor it reads for the family that vkllm does not run,
// a block in another layout than the first (llama.cpp decides per block), or a name neither knows.
TEST_CASE("an unexpected tensor's error says whether llama.cpp reads it", "[config]") {
  GgufFile f = GgufFile::parse(make_fixture_model(small("llama", 4, 2)), "model.gguf");
  auto keep = [](std::string&, std::vector<uint64_t>&) { return true; };
  CHECK(error_of([&] { ModelConfig::from_gguf(rewrite(f, keep, "rope_factors_long.weight", {8})); }) ==
        "model.gguf: unexpected tensor rope_factors_long.weight for a llama model (LongRoPE factors): llama.cpp reads "
        "this tensor, vkllm does not yet");
  auto mixed = rewrite(f, [](std::string& n, std::vector<uint64_t>& ne) {
    if (n == "blk.1.attn_q.weight") n = "blk.1.attn_qkv.weight", ne[1] = 64 + 2 * 32;
    return n != "blk.1.attn_k.weight" && n != "blk.1.attn_v.weight";
  });
  CHECK(error_of([&] { ModelConfig::from_gguf(mixed); }) ==
        "model.gguf: unexpected tensor blk.1.attn_qkv.weight for a llama model: llama.cpp reads this tensor, vkllm "
        "does not yet (it reads every block in the first one's layout, each set of optional tensors whole)");
  CHECK(error_of([&] { ModelConfig::from_gguf(rewrite(f, keep, "blk.0.ffn_up.bias", {96})); }) ==
        "model.gguf: unexpected tensor blk.0.ffn_up.bias for a llama model: llama.cpp reads this tensor, vkllm does "
        "not yet (it reads every block in the first one's layout, each set of optional tensors whole)");
  CHECK(error_of([&] {
          ModelConfig::from_gguf(rewrite(f, keep, "blk.0.attn_gate.weight", {64, 64}));
        }) ==
        "model.gguf: unexpected tensor blk.0.attn_gate.weight for a llama model: llama.cpp does not read it either, "
        "so the file is damaged or of another architecture");
  // A qwen3 reranker's head, and a family that has no fused layout in llama.cpp (qwen3moe's experts).
  GgufFile q = GgufFile::parse(make_fixture_model(small("qwen3", 4, 2)), "q.gguf");
  CHECK_THAT(error_of([&] {
               ModelConfig::from_gguf(rewrite(q, keep, "cls.output.weight", {64, 2}));
             }),
             Catch::Contains("(a reranker's classification head): llama.cpp reads this tensor, vkllm does not yet"));
  FixtureSpec moe = test::family_fixture("qwen3moe", DType::F16).spec;
  GgufFile m = GgufFile::parse(make_fixture_model(moe), "m.gguf");
  auto fused = rewrite(m, [](std::string& n, std::vector<uint64_t>& ne) {
    if (n.ends_with("ffn_gate_exps.weight")) n.replace(n.find("ffn_gate_exps"), 13, "ffn_gate_up_exps"), ne[1] *= 2;
    return !n.ends_with("ffn_up_exps.weight");
  });
  CHECK_THAT(error_of([&] { ModelConfig::from_gguf(fused); }),
             Catch::Contains("ffn_gate_up_exps.weight for a qwen3moe model (an expert tensor this family does not "
                             "have): llama.cpp does not read it either"));
}

// The layouts of docs/formats.md §13 are read from the tensors a file has.
TEST_CASE("config reads the tensor layout of every family's other layouts", "[config]") {
  for (const test::EngineFixture& fx : test::layout_fixtures(DType::F16)) {
    INFO(fx.name);
    ModelConfig want = fixture_config(fx.spec);
    ModelConfig c = ModelConfig::from_gguf(GgufFile::parse(make_fixture_model(fx.spec), "layout.gguf"));
    CHECK(c.layout.fused_qkv == want.layout.fused_qkv);
    CHECK(c.layout.fused_qkv_bias == want.layout.fused_qkv_bias);
    CHECK(c.layout.fused_gate_up_exps == want.layout.fused_gate_up_exps);
    CHECK((c.qkv_bias == want.qkv_bias && c.attn_out_bias == want.attn_out_bias && c.ffn_bias == want.ffn_bias));
    CHECK((c.output_bias == want.output_bias && c.kv_in_shared_layers == want.kv_in_shared_layers));
    CHECK(c.attention_k_eq_v == (want.attention_k_eq_v && !want.layout.fused_qkv));
  }
  // Gemma 4's converter fuses the experts' gate and up; phi3's files fuse q, k and v.
  CHECK(fixture_config(test::family_fixture("gemma4-moe", DType::F16).spec).layout.fused_gate_up_exps);
  CHECK(fixture_config(test::family_fixture("phi3", DType::F16).spec).layout.fused_qkv);
  CHECK(layout_names(fixture_config(test::family_fixture("gemma4-moe", DType::F16).spec).layout) ==
        "fused expert gate/up");
  FixtureSpec bad = test::family_fixture("deepseek2-mla", DType::F16).spec;
  bad.fused_qkv = true;
  CHECK(error_of([&] { fixture_config(bad); }) == "fixture: llama.cpp reads no fused QKV (attn_qkv) for deepseek2");
}

TEST_CASE("config reads MoE blocks and refuses what it cannot route", "[config]") {
  ModelConfig c = fixture_config(v2_lite_dense());
  c.moe.n_experts = 64, c.moe.n_experts_used = 6, c.moe.leading_dense_blocks = 1, c.moe.expert_hidden_dim = 1408;
  c.moe.n_shared_experts = 2;
  ModelConfig moe = ModelConfig::from_gguf(metadata_file(c));
  CHECK((moe.is_moe_layer(1) && !moe.is_moe_layer(0) && moe.moe.shared_hidden_dim == 2816));
  CHECK(moe.moe.gating == MoeGating::Softmax);  // absent expert_gating_func (V2 files)
  // DeepSeek-V2-Lite's 15.7 B parameters: the dense block, 26 MoE blocks of 64 + 2 shared experts.
  CHECK(parameter_count(moe) == 15706484224ull);
  ModelConfig bad = c;
  bad.moe.gating = MoeGating(4);
  CHECK(error_of([&] { ModelConfig::from_gguf(metadata_file(bad)); }) ==
        "model.gguf: expert_gating_func 4 is not supported (1 softmax, 2 sigmoid, 3 softmax of the chosen)");
  bad = c;
  bad.moe.n_groups = 5, bad.moe.n_groups_used = 2;
  CHECK(error_of([&] { ModelConfig::from_gguf(metadata_file(bad)); }) ==
        "model.gguf: 64 experts cannot form 5 groups of at least 2 (at most 64 groups)");
  bad = c;
  bad.moe.n_experts_used = 65;
  CHECK(error_of([&] { ModelConfig::from_gguf(metadata_file(bad)); }) ==
        "model.gguf: expert_used_count = 65 is out of range (1..64)");
  c.moe.leading_dense_blocks = 27;  // every block dense: experts declared but unused
  ModelConfig dense = ModelConfig::from_gguf(metadata_file(c));
  CHECK(dense.moe.n_experts == 64);
  CHECK(!dense.is_moe_layer(26));
  FixtureSpec s = small("deepseek2", 4, 4);
  s.q_lora_rank = 16;
  CHECK_NOTHROW(ModelConfig::from_gguf(GgufFile::parse(make_fixture_model(s), "mla.gguf")));
}

TEST_CASE("config of every family in the fixture registry survives a file round trip", "[config]") {
  for (const test::EngineFixture& fx : test::family_fixtures(DType::F16)) {
    INFO(fx.name);
    const FixtureSpec& s = fx.spec;
    GgufFile f = GgufFile::parse(make_fixture_model(s), "family.gguf");
    ModelConfig c = ModelConfig::from_gguf(f);
    ModelConfig want = fixture_config(s);
    CHECK(c.arch == want.arch);
    CHECK(c.arch->name == s.arch);
    CHECK((c.n_layers == s.n_layers && c.dim == s.dim && c.n_heads == s.n_heads));
    CHECK((c.head_dim == want.head_dim && c.v_head_dim == want.v_head_dim && c.n_kv_heads == want.n_kv_heads));
    CHECK((c.rope.mode == want.rope.mode && c.rope.theta == s.rope_theta && c.rope.dim == want.rope.dim));
    CHECK(c.rope.has_freq_factors == want.rope.has_freq_factors);
    CHECK((c.tied_embeddings == s.tied_embeddings && c.qkv_bias == want.qkv_bias));
    const MoeConfig &m = c.moe, &wm = want.moe;
    CHECK((m.n_experts == s.n_experts && m.n_experts_used == s.n_experts_used));
    CHECK((m.expert_hidden_dim == wm.expert_hidden_dim && m.shared_hidden_dim == wm.shared_hidden_dim));
    CHECK((m.leading_dense_blocks == wm.leading_dense_blocks && m.gating == wm.gating));
    CHECK((m.weights_norm == wm.weights_norm && m.weights_scale == wm.weights_scale && m.probs_bias == wm.probs_bias));
    CHECK((m.n_groups == s.n_groups && m.n_groups_used == s.n_groups_used));
    for (uint32_t l = 0; l < c.n_layers; ++l)  // blocks without an FFN (Nemotron-H) have no experts either
      CHECK(c.is_moe_layer(l) ==
            (s.n_experts && l >= s.leading_dense_blocks && (s.ffn_layers.empty() || s.ffn_layers[l])));
    CHECK((c.mixers == want.mixers && c.ffn_layers == want.ffn_layers));
    CHECK((c.ssm.inner == want.ssm.inner && c.ssm.state == want.ssm.state && c.ssm.groups == want.ssm.groups));
    CHECK(c.moe.latent_dim == s.moe_latent_dim);
    CHECK(c.swa_layers == want.swa_layers);
    CHECK((c.attn_softcap == want.attn_softcap && c.final_softcap == want.final_softcap));
    CHECK(c.multipliers.attention == want.multipliers.attention);
    CHECK(c.pooling == s.pooling);
    CHECK(parameter_count(c) == [&] {
      uint64_t n = 0;
      for (const GgufTensor& t : f.tensors()) n += t.n_elements();
      return n;
    }());
  }
  // Fixed routing rules: qwen3moe normalises the selected weights, qwen2moe does not; qwen2moe's
  // shared expert is feed_forward_length wide when the file does not say.
  CHECK(fixture_config(test::family_fixture("qwen3moe", DType::F16).spec).moe.weights_norm);
  FixtureSpec q2 = test::family_fixture("qwen2moe", DType::F16).spec;
  CHECK(!fixture_config(q2).moe.weights_norm);
  q2.shared_hidden_dim = 0;
  CHECK(fixture_config(q2).moe.shared_hidden_dim == q2.hidden_dim);
  // A dense family with experts declared is refused by name.
  FixtureSpec moe_llama = small("llama", 4, 2);
  moe_llama.n_experts = 8, moe_llama.n_experts_used = 2, moe_llama.expert_hidden_dim = 48;
  CHECK_THROWS_WITH(fixture_config(moe_llama), Catch::Contains("llama: expert_count = 8 declares mixture-of-experts"));
  // gemma2's defaults (llama.cpp): window 4096 on even layers, soft-caps 50 and 30.
  ModelConfig g = fixture_config(small("gemma2", 4, 2));
  CHECK((g.sliding_window == 4096 && g.swa_layers == std::vector<uint8_t>{1, 0}));
  CHECK((g.attn_softcap == 50.0f && g.final_softcap == 30.0f));
  CHECK(g.multipliers.attention == Approx(1 / std::sqrt(16.0)));
  // gemma3 with a window: five local layers then a global one; local rope base 10000 unscaled.
  FixtureSpec s3 = small("gemma3", 4, 2);
  s3.n_layers = 7, s3.sliding_window = 512, s3.rope_theta = 1e6f;
  ModelConfig g3 = fixture_config(s3);
  CHECK(g3.swa_layers == std::vector<uint8_t>{1, 1, 1, 1, 1, 0, 1});
  CHECK((g3.rope_of(0).theta == 10000.0f && g3.rope_of(5).theta == 1e6f && g3.window(5) == 0));
}

TEST_CASE("config metadata errors for unknown arch and missing keys and bad values", "[config]") {
  ModelConfig c = fixture_config(small("llama", 4, 4));
  GgufWriter w;
  w.add("general.architecture", "falcon");
  CHECK(error_of([&] { ModelConfig::from_gguf(parse(w)); }) ==
        "model.gguf: unknown architecture falcon (supported: llama, mistral, qwen2, qwen2moe, qwen3, qwen3moe, "
        "gemma2, gemma3, phi3, deepseek2, qwen35, qwen35moe, gpt-oss, gemma4, mistral3, smollm3, nemotron_h, "
        "nemotron_h_moe, lfm2, lfm2moe, granitehybrid)");
  GgufWriter no_blocks;
  no_blocks.add("general.architecture", "llama");
  CHECK(error_of([&] { ModelConfig::from_gguf(parse(no_blocks)); }) ==
        "model.gguf: missing metadata key llama.block_count");
  ModelConfig uneven = c;
  uneven.n_kv_heads = 3;
  CHECK(error_of([&] { ModelConfig::from_gguf(metadata_file(uneven)); }) ==
        "model.gguf: 4 attention heads cannot be shared evenly by 3 KV heads");
  ModelConfig mistral = c;
  mistral.arch_name = "mistral";
  ModelConfig read_mistral = ModelConfig::from_gguf(metadata_file(mistral));
  CHECK(read_mistral.arch->name == "mistral");  // llama's blocks under the mistral prefix
  CHECK(read_mistral.attention_kind() == AttentionKind::MHA);
  CHECK(read_mistral.rope.mode == RopeMode::Norm);
  GgufWriter u8_counts;  // counts of any integer width (docs/formats.md pitfall 6)
  u8_counts.add("general.architecture", "llama");
  u8_counts.add("llama.block_count", uint8_t(2));
  u8_counts.add("llama.embedding_length", uint16_t(64));
  u8_counts.add("llama.context_length", uint64_t(128));
  u8_counts.add("llama.feed_forward_length", int32_t(96));
  u8_counts.add("llama.attention.head_count", int64_t(4));
  u8_counts.add("llama.attention.layer_norm_rms_epsilon", 1e-6);  // f64
  u8_counts.add("llama.vocab_size", uint32_t(300));
  ModelConfig u = ModelConfig::from_gguf(parse(u8_counts));
  CHECK((u.n_layers == 2 && u.dim == 64 && u.seq_len == 128 && u.n_kv_heads == 4 && u.head_dim == 16));
  CHECK(u.rope.theta == 10000.0f);
}

TEST_CASE("config Llama 3 rope frequency factors", "[config]") {
  FixtureSpec s = small("llama", 1, 1);
  s.dim = 128, s.rope_freqs = true, s.rope_theta = 500000.0f;
  GgufFile f = GgufFile::parse(make_fixture_model(s), "llama3.gguf");
  ModelConfig c = ModelConfig::from_gguf(f);
  CHECK(c.rope.has_freq_factors);
  const GgufTensor& t = f.tensor("rope_freqs.weight");
  REQUIRE(t.shape() == std::vector<uint64_t>{64});
  std::vector<float> v(64);
  std::memcpy(v.data(), t.data.data(), 256);
  // docs/formats.md §3.4, Llama-3.1-8B (d 128, base 5e5, factor 8): 29 ones, 29 eights, 6 smoothed.
  CHECK(std::count(v.begin(), v.end(), 1.0f) == 29);
  CHECK(std::count(v.begin(), v.end(), 8.0f) == 29);
  CHECK(v[29] == Approx(1.2075).epsilon(1e-3));
  CHECK(v[34] == Approx(5.2573).epsilon(1e-3));
}
