// `vkllm run`, `logits` and `bench` as a user runs them, on fixture files and the embedded model:
// streaming output, determinism per seed, GPU logits vs --cpu, and one-line errors.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "arch/model_config.h"
#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "graph/kv_cache.h"
#include "harness.h"

using namespace vkllm;
using test::run_vkllm;
using test::TempFile;

namespace {

std::vector<float> floats(const std::string& text) {
  std::istringstream in(text);
  std::vector<float> v;
  float x;
  while (in >> x) v.push_back(x);
  return v;
}

FixtureSpec gqa_spec() {
  return {.dim = 128,
          .n_layers = 2,
          .n_heads = 4,
          .n_kv_heads = 2,
          .head_dim = 64,
          .hidden_dim = 192,
          .vocab_size = 300,
          .weight_type = DType::Q8_0};
}

const TempFile& gqa_model() {
  static TempFile f = [] {
    TempFile t("run_gqa");
    t.write(make_fixture_model(gqa_spec()));
    return t;
  }();
  return f;
}

}  // namespace

TEST_CASE("vkllm run generates and the same seed gives the same text", "[cli-run]") {
  std::string args = fmt::format("run -m {} -p \"hello world\" -n 12 --seed 5", gqa_model().path);
  auto a = run_vkllm(args), b = run_vkllm(args);
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out.starts_with("hello world"));
  CHECK(a.out == b.out);
  CHECK(a.err.find("generation: ") != std::string::npos);
  CHECK(a.err.find("tokens/s") != std::string::npos);
}

TEST_CASE("vkllm run with a quantised KV cache reports its bytes", "[cli-run][kv_quant]") {
  // 2 layers x 2 KV heads x (64 + 64 values) = 16 blocks of 32 values in 18 bytes: 288 B per token.
  auto r = run_vkllm(fmt::format("run -m {} -p hello -n 4 --seed 1 --kv-type q4_0", gqa_model().path));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("KV cache 72.0 KiB (256 tokens, q4_0)") != std::string::npos);  // 256 x 288 B
  auto bad = run_vkllm(fmt::format("run -m {} -p hello --kv-type q5_0", gqa_model().path));
  CHECK(bad.exit_code != 0);
  CHECK(test::line_count(bad.err) == 1);
}

TEST_CASE("vkllm run without -m runs the embedded default model", "[cli-run]") {
  auto r = run_vkllm("run -p \"In the beginning\" -n 8 --seed 1");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.starts_with("In the beginning"));
  CHECK(r.out.size() > std::string("In the beginning").size());
}

TEST_CASE("vkllm logits on the GPU matches --cpu", "[cli-run]") {
  for (const char* all : {"", " --all"}) {
    std::string args = fmt::format("logits -m {} --tokens 1,7,42,99,5{}", gqa_model().path, all);
    auto gpu = run_vkllm(args), cpu = run_vkllm(args + " --cpu");
    INFO(gpu.err << cpu.err);
    REQUIRE(gpu.exit_code == 0);
    REQUIRE(cpu.exit_code == 0);
    CHECK(test::line_count(gpu.out) == (*all ? 5u : 1u));
    auto g = floats(gpu.out), c = floats(cpu.out);
    CHECK(g.size() == test::line_count(gpu.out) * 300);
    test::check_nmse(g, c, 1e-4, fmt::format("vkllm logits{} vs --cpu", all));
  }
}

TEST_CASE("vkllm bench --json reports tokens per second", "[cli-run]") {
  auto r = run_vkllm(fmt::format("bench -m {} -p 16 -n 4 -r 1 --json --profile", gqa_model().path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["prompt_tokens_per_second"].get<double>() > 0);
  CHECK(j["generation_tokens_per_second"].get<double>() > 0);
  CHECK(!j["kernels"]["generation"].empty());
  auto p = run_vkllm(fmt::format("bench -m {} -p 4 -n 4 -r 1 --parallel 3 --json", gqa_model().path));
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  auto jp = nlohmann::json::parse(p.out);
  CHECK(jp["parallel"] == 3);
  CHECK(jp["generation_tokens_per_second"].get<double>() > 0);
}

TEST_CASE("bad input to run gives one error line", "[cli-run]") {
  TempFile truncated("run_truncated"), moe("run_moe");
  auto bytes = make_fixture_model({.vocab_size = 300});
  truncated.write(std::vector<std::byte>(bytes.begin(), bytes.begin() + bytes.size() / 2));
  struct Case {
    std::string args, message, env;
  };
  const Case cases[] = {
      {fmt::format("run -m {} -p hi", truncated.path), "extends past end of file"},
      {fmt::format("run -m {} -p \"{}\" --ctx 8", gqa_model().path, std::string(64, 'a')),
       "more than fit a context of 8 with one to generate"},
      {"run -m /nonexistent.gguf -p hi", "/nonexistent.gguf"},
      {fmt::format("run -m {} -p hi --device 7", gqa_model().path), "device index 7 is out of range"},
      {fmt::format("logits -m {} --tokens 1,x", gqa_model().path), "'x' is not a token id"},
      {fmt::format("logits -m {} --tokens 1,300", gqa_model().path),
       "token id 300 is outside the vocabulary of 300 tokens (0 to 299)"},
      {fmt::format("logits -m {} --tokens 1,300 --cpu", gqa_model().path),
       "token id 300 is outside the vocabulary of 300 tokens (0 to 299)"},
      {fmt::format("run -m {} -p hi", gqa_model().path), "out of GPU memory", "VKLLM_MEMORY_LIMIT=64K"},
      {fmt::format("run -m {} -p hi", gqa_model().path), "is not a size", "VKLLM_MEMORY_LIMIT=lots"},
  };
  for (const auto& [args, message, env] : cases) {
    auto r = run_vkllm(args, env);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err.starts_with("error: "));
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(test::line_count(r.err) == 1);
  }
}

TEST_CASE("a context whose KV cache one binding cannot hold is refused, whatever the device", "[cli-run]") {
  // One layer's K of the gqa fixture: 2 KV heads x 64 values x 2 bytes (f16) a token. The first
  // context past the device's maxStorageBufferRange is refused before anything is allocated.
  const uint64_t per_token = 2 * 64 * 2, range = test::gpu().caps().max_storage_buffer_range;
  GgufFile file = GgufFile::open(gqa_model().path);
  ModelConfig config = ModelConfig::from_gguf(file);
  uint64_t too_long = range / per_token + 1;
  REQUIRE(too_long < UINT32_MAX);
  REQUIRE_THROWS_WITH(KvCache(test::gpu(), config, uint32_t(too_long)),
                      Catch::Contains("use a smaller context (--ctx)"));
  // Through `run` at the largest context --ctx takes: refused where the binding is too small
  // (lavapipe's 128 MiB), else it runs, or stops at the device's memory (the H200 ran it).
  auto r = run_vkllm(fmt::format("run -m {} -p hi -n 1 --ctx 1000000", gqa_model().path));
  INFO(r.err);
  if (1000000 * per_token > range) {
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("use a smaller context (--ctx)") != std::string::npos);
    CHECK(test::line_count(r.err) == 1);
  } else if (r.exit_code != 0) {
    CHECK(r.err.starts_with("error: out of GPU memory"));
  }
}

TEST_CASE("without --ctx the default context shrinks to what fits the device", "[cli-run]") {
  // Trained for 4096 tokens; f16 KV at 1 KiB per token (2 layers x K,V x 2 heads x 64 x 2 B) wants
  // 4 MiB at the default context. Under a 5 MiB limit, beside 0.4 MiB of weights and at most 3 MiB
  // of activations, 1024 tokens fit and 2048 do not.
  TempFile model("run_long");
  FixtureSpec spec = gqa_spec();
  spec.seq_len = 4096;
  model.write(make_fixture_model(spec));
  std::string limit = "VKLLM_MEMORY_LIMIT=5M";
  auto info = run_vkllm(fmt::format("info -m {} --json", model.path), limit);
  REQUIRE(info.exit_code == 0);
  auto j = nlohmann::json::parse(info.out);
  CHECK(j["n_ctx"] == 1024);
  // Also where a GPU profile splits attention over its workgroups (its scratch, 2 MiB here, is
  // counted: it was not, and the H200 ran out of memory) and inputs go through staging.
  for (std::string env : {"", " VKLLM_PROFILE=nvidia", " VKLLM_PROFILE=nvidia VKLLM_DISCRETE_MEMORY=1"}) {
    auto fitted = run_vkllm(fmt::format("info -m {} --json", model.path), limit + env);
    REQUIRE(fitted.exit_code == 0);
    auto fj = nlohmann::json::parse(fitted.out);
    uint32_t n = fj["n_ctx"];
    fmt::print("default context under 5 MiB{}: {} tokens, attention scratch {} B\n", env, n,
               fj["memory"]["attention_scratch"].get<uint64_t>());
    auto r = run_vkllm(fmt::format("run -m {} -p hi -n 2 --seed 1", model.path), limit + env);
    INFO(env << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find(fmt::format("warning: context {} tokens: the default 4096 does not fit beside the weights in the "
                                 "5.0 MiB of VKLLM_MEMORY_LIMIT (--ctx sets it)",
                                 n)) != std::string::npos);
  }
  // Asked for, a context is kept as given: the allocation then fails with its own error.
  auto asked = run_vkllm(fmt::format("run -m {} -p hi -n 2 --ctx 4096", model.path), limit);
  CHECK(asked.exit_code != 0);
  CHECK(asked.err.find("out of GPU memory") != std::string::npos);
  // Without a limit the whole default is used.
  auto free = run_vkllm(fmt::format("info -m {} --json", model.path));
  CHECK(nlohmann::json::parse(free.out)["n_ctx"] == 4096);
}

TEST_CASE("vkllm run's first run on a device says the kernels' compilation apart from the prompt's speed",
          "[cli-run]") {
  // Empty shader caches, Mesa's and vkllm's: this run compiles each kernel it meets, as a first run does.
  std::string dir = std::filesystem::temp_directory_path() / fmt::format("vkllm_first_run_{}", getpid());
  std::string env = fmt::format("MESA_SHADER_CACHE_DIR={0}/mesa VKLLM_CACHE={0}/vkllm", dir);
  test::CliResult first = run_vkllm("run -p 'And God said,' -n 4 --seed 1 --json", env);
  test::CliResult second = run_vkllm("run -p 'And God said,' -n 4 --seed 1 --json", env);
  std::filesystem::remove_all(dir);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  size_t compiling = first.err.find("compiling kernels for this device: ");
  REQUIRE(compiling != std::string::npos);
  CHECK(compiling < first.err.find("\nprompt: "));
  CHECK(first.err.find(" s, once\n", compiling) != std::string::npos);
  nlohmann::json timings = nlohmann::json::parse(first.out)["timings"];
  double compile = timings["compile_seconds"].get<double>();
  CHECK(std::stod(first.err.substr(compiling + 35)) == Approx(compile).margin(0.05));
  // What is left of the prompt's time is the model's: five tokens of the default model take less
  // than their kernels' compilation.
  CHECK(timings["prompt_seconds"].get<double>() < compile);
  // Once: the next run finds the pipeline cache and says nothing of it.
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(second.err.find("compiling kernels") == std::string::npos);
  // And the warm-up left nothing behind: the same seed gives the same text.
  CHECK(nlohmann::json::parse(second.out)["text"] == nlohmann::json::parse(first.out)["text"]);
}
