// `vkllm info`, `tokenize` and `detokenize` as a user runs them, on fixture files: KV bytes per
// token for MHA/GQA/MQA/MLA, and one clear "error: FILE: ..." line for every kind of bad file.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <tuple>

#include "arch/model_config.h"
#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "gguf/writer.h"
#include "ops_matmul.h"
#include "text/tokenizer.h"

using namespace vkllm;
using vkllm::test::info_json;
using vkllm::test::line_count;
using vkllm::test::run_vkllm;
using vkllm::test::TempFile;

namespace {

nlohmann::json info_json_args(const std::string& args) {
  auto r = run_vkllm("info --json " + args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

FixtureSpec spec(const std::string& arch, uint32_t dim, uint32_t layers, uint32_t heads, uint32_t kv, uint32_t ffn,
                 uint32_t vocab) {
  FixtureSpec s;
  s.arch = arch;
  s.dim = dim, s.n_layers = layers, s.n_heads = heads, s.n_kv_heads = kv, s.hidden_dim = ffn, s.vocab_size = vocab;
  return s;
}

// Metadata and tokenizer of a real model shape, without tensors (like llama.cpp's vocab files).
std::vector<std::byte> metadata_only(const FixtureSpec& s) {
  GgufWriter w;
  write_config(w, fixture_config(s));
  write_vocab(w, fixture_vocab(s.tokenizer, s.vocab_size, s.tokenizer_pre));
  return w.bytes();
}

struct KvCase {
  const char* what;
  FixtureSpec spec;
  std::string attention;
  uint64_t kv_bytes;
};

}  // namespace

TEST_CASE("vkllm info prints KV bytes per token of MHA GQA MQA and MLA fixtures", "[cli]") {
  FixtureSpec mla = spec("deepseek2", 64, 3, 4, 4, 96, 300);
  mla.q_lora_rank = 32, mla.weight_type = DType::Q8_0;
  FixtureSpec gqa = spec("qwen2", 64, 2, 8, 2, 96, 300);
  gqa.weight_type = DType::Q4_0, gqa.tokenizer = "gpt2", gqa.tokenizer_pre = "qwen2";
  std::vector<KvCase> cases = {
      {"MHA llama f16", spec("llama", 64, 2, 4, 4, 96, 300), "MHA", 2 * 4 * (16 + 16) * 2},
      {"GQA qwen2 q4_0", gqa, "GQA", 2 * 2 * (8 + 8) * 2},
      {"MQA llama bf16", spec("llama", 64, 2, 4, 1, 96, 300), "MQA", 2 * 1 * (16 + 16) * 2},
      {"MLA deepseek2 q8_0", mla, "MLA", 3 * (32 + 8) * 2},
  };
  cases[2].spec.weight_type = DType::BF16;
  for (const KvCase& c : cases) {
    INFO(c.what);
    TempFile file(c.attention);
    file.write(make_fixture_model(c.spec));
    nlohmann::json j = info_json(file.path);
    CHECK(j["attention"] == c.attention);
    CHECK(j["kv_bytes_per_token"] == c.kv_bytes);
    CHECK(j["architecture"] == c.spec.arch);
    CHECK(j["tokenizer"]["vocab_size"] == 300);
    CHECK(j["parameters_from_config"] == false);
    auto text = run_vkllm("info -m " + file.path);
    CHECK(text.exit_code == 0);
    CHECK(text.out.find(fmt::format("kv cache    {} bytes per token in f16", c.kv_bytes)) != std::string::npos);
  }
}

TEST_CASE("vkllm info on real model shapes: Llama-2-7B MHA is 512 KiB per token", "[cli]") {
  FixtureSpec v2 = spec("deepseek2", 2048, 27, 16, 16, 10944, 102400);
  v2.kv_lora_rank = 512, v2.qk_nope_head_dim = 128, v2.qk_rope_head_dim = 64, v2.v_head_dim = 128;
  std::vector<KvCase> cases = {
      {"Llama-2-7B", spec("llama", 4096, 32, 32, 32, 11008, 32000), "MHA", 524288},
      {"Llama-3.1-8B", spec("llama", 4096, 32, 32, 8, 14336, 128256), "GQA", 131072},
      {"Falcon-7B attention (MQA)", spec("llama", 4544, 32, 71, 1, 18176, 65024), "MQA", 8192},
      {"DeepSeek-V2-Lite attention (MLA)", v2, "MLA", 31104},
  };
  for (KvCase& c : cases) c.spec.seq_len = 4096;
  for (const KvCase& c : cases) {
    INFO(c.what);
    TempFile file("real");
    file.write(metadata_only(c.spec));
    nlohmann::json j = info_json(file.path);
    CHECK(j["attention"] == c.attention);
    CHECK(j["kv_bytes_per_token"] == c.kv_bytes);
    CHECK(j["parameters_from_config"] == true);
  }
  TempFile llama2("llama2");
  llama2.write(metadata_only(cases[0].spec));
  // --ctx: by default a 2 GiB cache would be halved to fit lavapipe's 2 GiB heap.
  auto r = run_vkllm("info --ctx 4096 -m " + llama2.path);
  CHECK(r.out.find("kv cache    524288 bytes per token in f16 (512.0 KiB); 2.0 GiB at run's 4096 tokens; 2.0 GiB "
                   "at the full 4096 tokens") != std::string::npos);
  CHECK(r.out.find("params      6738415616 (6.74 B)") != std::string::npos);
  // Quantised caches: 32 values in 34 (q8_0) or 18 (q4_0) bytes (docs/formats.md §7).
  const std::tuple<size_t, const char*, uint64_t> quantised[] = {
      {1, "q8_0", 69632}, {1, "q4_0", 36864}, {3, "q8_0", 16524}, {3, "q4_0", 8748}};
  for (auto [c, type, bytes] : quantised) {
    TempFile f("kvq");
    f.write(metadata_only(cases[c].spec));
    auto q = run_vkllm(fmt::format("info --json --kv-type {} -m {}", type, f.path));
    REQUIRE(q.exit_code == 0);
    nlohmann::json j = nlohmann::json::parse(q.out);
    CHECK(j["kv_type"] == type);
    CHECK(j["kv_bytes_per_token"] == bytes);
  }
  auto small = run_vkllm("info --kv-type q4_0");  // the default model's heads are 64 wide: fine
  CHECK(small.out.find("kv cache    864 bytes per token in q4_0") != std::string::npos);
}

TEST_CASE("vkllm info --kv-type q8_0 on heads narrower than a block is one error line", "[cli]") {
  TempFile file("kv16");
  file.write(make_fixture_model(spec("llama", 64, 2, 4, 4, 96, 300)));  // head dim 16
  auto r = run_vkllm("info --kv-type q8_0 -m " + file.path);
  CHECK(r.exit_code != 0);
  CHECK(line_count(r.err) == 1);
  CHECK(r.err.find("a q8_0 KV cache needs head widths that are multiples of 32 (got 16)") != std::string::npos);
}

TEST_CASE("vkllm tokenize and detokenize", "[cli]") {
  FixtureSpec s = spec("llama", 64, 1, 4, 4, 64, 400);
  TempFile file("tok");
  file.write(make_fixture_model(s));
  Tokenizer t(fixture_vocab("llama", 400));
  std::vector<int32_t> ids = t.encode("hello world", true);
  REQUIRE(ids.front() == 1);  // BOS: the fixture model adds it
  auto r = run_vkllm("tokenize -m " + file.path + " -p 'hello world'");
  CHECK(r.exit_code == 0);
  CHECK(r.out == fmt::format("{}\n", fmt::join(ids, " ")));
  auto pieces = run_vkllm("tokenize --pieces -m " + file.path + " -p \"$(printf 'a\\nb')\"");
  CHECK(pieces.exit_code == 0);
  CHECK(pieces.out.starts_with("1\t<s>\n"));
  CHECK(pieces.out.find("\n13\t\\n\n") != std::string::npos);  // the byte token <0x0A>, escaped
  auto d = run_vkllm(fmt::format("detokenize -m {} --tokens {}", file.path, fmt::join(ids, ",")));
  CHECK(d.exit_code == 0);
  CHECK(d.out == "hello world\n");
  // --no-bos: the ids were made without an added BOS, so a leading one is text typed in the prompt.
  auto typed = run_vkllm(fmt::format("detokenize --no-bos -m {} --tokens {}", file.path, fmt::join(ids, ",")));
  CHECK(typed.out == "<s>hello world\n");
  auto bad = run_vkllm(fmt::format("detokenize -m {} --tokens 1,99999", file.path));
  CHECK(bad.exit_code != 0);
  CHECK(bad.err == "error: token id 99999 is outside the vocabulary of 400 tokens (0 to 399)\n");
}

TEST_CASE("vkllm info on bad files gives one error line naming the file", "[cli]") {
  std::vector<std::byte> good = make_fixture_model(spec("llama", 32, 1, 2, 2, 32, 300));
  std::mt19937 rng(9);
  std::vector<std::byte> random(1000);
  for (auto& b : random) b = std::byte(rng());
  std::vector<std::byte> huge_count = good;
  uint64_t n = uint64_t(1) << 50;
  std::memcpy(&huge_count[16], &n, 8);  // the metadata count
  // The tensor info of token_embd.weight (2 dims): name, n_dims, ne[2], then type and offset.
  std::string_view all(reinterpret_cast<const char*>(good.data()), good.size());
  size_t info_at = all.find("token_embd.weight") + 17 + 4 + 16;
  std::vector<std::byte> bad_type = good, past_end = good;
  uint32_t type = 99;
  uint64_t offset = uint64_t(1) << 40;
  std::memcpy(&bad_type[info_at], &type, 4);
  std::memcpy(&past_end[info_at + 4], &offset, 8);
  std::vector<std::pair<std::string, std::vector<std::byte>>> cases = {
      {"unknown tensor type", bad_type},
      {"offset past the end", past_end},
      {"truncated", std::vector<std::byte>(good.begin(), good.begin() + long(good.size() / 2))},
      {"random bytes", random},
      {"huge count", huge_count},
  };
  for (const auto& [what, bytes] : cases) {
    INFO(what);
    TempFile file("bad");
    file.write(bytes);
    auto r = run_vkllm("info -m " + file.path);
    CHECK(r.exit_code != 0);
    CHECK(r.err.starts_with("error: " + file.path + ": "));
    CHECK(line_count(r.err) == 1);
    CHECK(r.out.empty());
    if (what == "unknown tensor type")
      CHECK(r.err.find("tensor token_embd.weight has unknown type id 99") != std::string::npos);
    if (what == "offset past the end")
      CHECK(r.err.find("tensor token_embd.weight extends past end of file") != std::string::npos);
  }
  auto missing = run_vkllm("info -m /nonexistent/model.gguf");
  CHECK(missing.exit_code != 0);
  CHECK(missing.err == "error: /nonexistent/model.gguf: cannot open: No such file or directory\n");
}

// The tensor layouts of docs/formats.md §13, as `vkllm-bench fixture` writes them and `vkllm info`
// names them.
TEST_CASE("vkllm info names the tensor layout vkllm-bench fixture wrote", "[cli]") {
  TempFile fused("fused_qkv.gguf");
  auto w = test::run_bench("fixture --preset small --layers 1 --fused-qkv -o " + fused.path);
  INFO(w.err);
  REQUIRE(w.exit_code == 0);
  auto text = run_vkllm("info -m " + fused.path);
  CHECK(text.out.find("\nlayout      fused QKV\n") != std::string::npos);
  nlohmann::json j = info_json(fused.path);
  CHECK((j["layout"]["fused_qkv"] == true && j["layout"]["fused_gate_up_exps"] == false));
  CHECK(j["layout"]["name"] == "fused QKV");
  // Gemma 4's MoE as its converter writes it: the experts' gate and up in one tensor.
  FixtureSpec g = spec("gemma4", 128, 2, 2, 1, 128, 300);
  g.head_dim = 64, g.sliding_window = 8, g.swa_period = 2, g.n_experts = 4, g.n_experts_used = 2;
  g.expert_hidden_dim = 32;
  TempFile moe("gemma4_moe.gguf");
  moe.write(make_fixture_model(g));
  CHECK(run_vkllm("info -m " + moe.path).out.find("\nlayout      separate Q, K, V, fused expert gate/up\n") !=
        std::string::npos);
  j = info_json(moe.path);
  CHECK((j["layout"]["fused_gate_up_exps"] == true && j["layout"]["name"] == "fused expert gate/up"));
}

TEST_CASE("vkllm info reports how vkllm serve splits the KV cache into slots", "[cli]") {
  auto r = run_vkllm("info --json --parallel 3 --ctx 100");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  uint64_t per_token = j["kv_bytes_per_token"];
  CHECK(per_token == 6 * 2 * (64 + 64) * 2);  // the default model: 6 layers, 2 KV heads of 64, f16
  CHECK(j["serve_kv_cache"]["parallel"] == 3);
  CHECK(j["serve_kv_cache"]["bytes_per_slot"] == per_token * 100);
  CHECK(j["serve_kv_cache"]["bytes"] == per_token * 300);
  auto text = run_vkllm("info");
  CHECK(text.out.find("serve       --parallel 4 slots x --ctx 256 tokens: KV cache 3.0 MiB (768.0 KiB per slot)") !=
        std::string::npos);
}

namespace {

// The file with one tensor's type replaced (its bytes zeroed at the new size).
std::vector<std::byte> retyped(const std::vector<std::byte>& bytes, std::string_view name, DType type) {
  GgufFile f = GgufFile::parse(std::span<const std::byte>(bytes), "in");
  GgufWriter w;
  for (const GgufKv& kv : f.metadata()) w.add(kv.key, kv.value);
  for (const GgufTensor& t : f.tensors()) {
    if (t.name != name) {
      w.add_tensor(t.name, t.shape(), t.type, t.data);
      continue;
    }
    std::vector<std::byte> data(row_bytes(type, t.ne[0]) * (t.n_elements() / t.ne[0]));
    w.add_tensor(t.name, t.shape(), type, data);
  }
  return w.bytes();
}

}  // namespace

TEST_CASE("a tensor type vkllm cannot run: info warns, run stops before loading", "[cli]") {
  FixtureSpec s = spec("llama", 256, 1, 4, 4, 256, 300);
  s.weight_type = DType::Q8_0;
  for (DType type : {DType::IQ2_XXS, DType::TQ2_0}) {
    std::string name = std::string(info(type).name);
    INFO(name);
    TempFile file(name);
    file.write(retyped(make_fixture_model(s), "blk.0.ffn_down.weight", type));
    auto r = run_vkllm("info -m " + file.path);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find(fmt::format(" {} 1", name)) != std::string::npos);
    CHECK(r.out.find(fmt::format("warning: not supported by vkllm: 1 tensor of type {} (blk.0.ffn_down.weight); "
                                 "supported types: f32, f16",
                                 name)) != std::string::npos);
    nlohmann::json j = info_json(file.path);
    CHECK(j["supported"] == false);
    CHECK(j["problems"].size() == 1);
    auto run = run_vkllm(fmt::format("run -m {} -p hi", file.path));
    CHECK(run.exit_code == 1);
    CHECK(run.err == fmt::format("error: {}: tensor blk.0.ffn_down.weight has type {}, which vkllm cannot read "
                                 "(it reads {})\n",
                                 file.path, name, ops::weight_type_names()));
    CHECK(run.out.empty());
  }
}

TEST_CASE("an unknown architecture is still described, with a warning", "[cli]") {
  GgufWriter falcon;
  falcon.add("general.architecture", "falcon");
  falcon.add("falcon.block_count", uint32_t(2));
  std::vector<float> w(64, 0.5f);
  falcon.add_tensor("token_embd.weight", {32, 2}, DType::F32, std::as_bytes(std::span<const float>(w)));
  TempFile file("falcon");
  file.write(falcon.bytes());
  auto r = run_vkllm("info -m " + file.path);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("metadata    general.architecture = \"falcon\"") != std::string::npos);
  CHECK(r.out.find("metadata    falcon.block_count = 2") != std::string::npos);
  CHECK(r.out.find("tensor      token_embd.weight") != std::string::npos);
  CHECK(r.out.find("warning: not supported by vkllm: unknown architecture falcon (supported: llama") !=
        std::string::npos);
  nlohmann::json j = info_json(file.path);
  CHECK(j["architecture"] == "falcon");
  CHECK(j["supported"] == false);
  CHECK(j["tensors"][0]["shape"] == nlohmann::json::array({32, 2}));
  auto run = run_vkllm(fmt::format("run -m {} -p hi", file.path));
  CHECK(run.exit_code == 1);
  CHECK(run.err.starts_with(fmt::format("error: {}: unknown architecture falcon", file.path)));
}

TEST_CASE("vkllm info shows run's context, the full one, and whether the model fits", "[cli]") {
  nlohmann::json j = info_json_args("");
  CHECK(j["context_length"] == 256);
  CHECK(j["n_ctx"] == 256);
  CHECK(j["kv_cache_bytes"] == 256 * 3072);
  CHECK(j["memory"]["fits"] == true);
  nlohmann::json c = info_json_args("-c 64 --kv-type f32");
  CHECK(c["n_ctx"] == 64);
  CHECK(c["kv_cache_bytes"] == 64 * 6144);
  CHECK(c["kv_cache_bytes_full_context"] == 256 * 6144);
  auto limited = run_vkllm("info", "VKLLM_MEMORY_LIMIT=1M");
  CHECK(limited.out.find("fits        no: ") != std::string::npos);
  CHECK(limited.out.find("has 1.0 MiB (VKLLM_MEMORY_LIMIT)") != std::string::npos);
  auto none = run_vkllm("info", "VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json");
  CHECK(none.exit_code == 0);
  CHECK(none.out.find("fits        unknown: ") != std::string::npos);
}
