// vkllm-bench fixture: writes a random-weight GGUF model in the shape of a real one (for
// `vkllm bench` and `vkllm run` without downloads). Weights are random; the speed is real.
#include <fmt/format.h>
#include <map>

#include "bench.h"
#include "error.h"
#include "fixture/fixture.h"
#include "gguf/writer.h"

namespace vkllm::bench {

namespace {

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
      {"tinyllama-1.1b",
       {.dim = 2048,
        .n_layers = 22,
        .n_heads = 32,
        .n_kv_heads = 4,
        .hidden_dim = 5632,
        .vocab_size = 32000,
        .seq_len = 2048}},
  };
  return p;
}

struct FixtureOptions {
  std::string preset, type = "q8_0", mix, out;
  uint32_t layers = 0;
};

void write_fixture(const FixtureOptions& o) {
  auto it = presets().find(o.preset);
  std::string names;
  for (auto& [name, spec] : presets()) names += (names.empty() ? "" : ", ") + name;
  ENSURE(it != presets().end(), fmt::format("unknown preset '{}' (known: {})", o.preset, names));
  auto type = dtype_named(o.type);
  ENSURE(type, fmt::format("unknown weight type '{}'", o.type));
  FixtureSpec spec = it->second;
  spec.weight_type = *type;
  spec.mix = o.mix;
  if (o.layers) spec.n_layers = o.layers;
  fixture_writer(spec).save(o.out);
  fmt::print("wrote {} ({} layers, {} weights)\n", o.out, spec.n_layers, o.mix.empty() ? o.type : o.mix);
}

}  // namespace

void add_fixture_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("fixture", "Write a random-weight GGUF model of a real model's shape");
  auto o = std::make_shared<FixtureOptions>();
  cmd->add_option("--preset", o->preset, "smollm2-135m, llama-3.2-1b, qwen2.5-0.5b or tinyllama-1.1b")->required();
  cmd->add_option("--type", o->type, "Weight type of the matrices (f16, q8_0, q4_0, q4_k, ...)");
  cmd->add_option("--mix", o->mix,
                  "A llama.cpp file type (Q2_K, Q3_K_M, Q3_K_L, Q4_K_M, IQ4_XS, IQ4_NL, IQ3_M, Q5_1, ...): each "
                  "matrix gets the type llama.cpp's quantizer gives it; overrides --type");
  cmd->add_option("--layers", o->layers, "Fewer layers than the real model");
  cmd->add_option("-o,--out", o->out, "Output GGUF file")->required();
  cmd->callback([o] { write_fixture(*o); });
}

}  // namespace vkllm::bench
