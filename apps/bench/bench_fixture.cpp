// vkllm-bench fixture: writes a random-weight GGUF model in the shape of a real one (for
// `vkllm bench` and `vkllm run` without downloads). Weights are random; the speed is real.
#include <fmt/format.h>
#include <map>

#include "bench.h"
#include "error.h"
#include "fixture/fixture.h"
#include "gguf/writer.h"
#include "output.h"

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
  std::optional<uint32_t> layers;
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
  if (o.layers) spec.n_layers = *o.layers;
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
  cmd->add_option("--mix", o->mix,
                  "A llama.cpp file type (Q2_K, Q3_K_M, Q3_K_L, Q4_K_M, IQ4_XS, IQ4_NL, IQ3_M, Q5_1, ...): each "
                  "matrix gets the type llama.cpp's quantizer gives it; overrides --type")
      ->type_name("MIX");
  cmd->add_option("--layers", o->layers, "Fewer layers than the real model (default: all)")
      ->type_name("N")
      ->check(int_range(1, 1024));
  cmd->add_option("-o,--out", o->out, "Output GGUF file")->type_name("FILE")->required()->check(cli::non_empty);
  cmd->callback([o] { write_fixture(*o); });
}

}  // namespace vkllm::bench
