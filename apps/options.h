// The flags the model commands share, declared once: which model (-m, -hf, --hf-file) and how it
// runs (-c, -b, --kv-type and llama.cpp's -ctk/-ctv, --device; -ngl, -t, -fa, --mlock, --no-mmap
// accepted for llama.cpp habits), sampling (-n, --temp, ..., -s, --stop, --ignore-eos) and where a
// prompt comes from (-p, -f, the text as a positional argument, or a pipe). Every value is checked
// while the command line is parsed, against the range --help shows, so nothing bad reaches the model.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampler.h"

namespace vkllm::cli {

// The program's shared settings: the help format (range and default of every option),
// --version, one command required.
void setup_app(CLI::App& app);

// --- validators: the range is the help text and the error message alike

// An integer in [lo, hi]: "-1 is not an integer from 0 to 4096".
CLI::Validator int_range(int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max());
// A finite number with optional bounds, each closed or open: "(0, 1]", ">= 0".
struct Bound {
  double value;
  bool open = false;
};
CLI::Validator real_range(std::optional<Bound> lo, std::optional<Bound> hi = std::nullopt);
// One of a fixed list of words: "'q8' is not one of f16, f32".
CLI::Validator one_of(std::vector<std::string> words);
// A path that is not empty (an empty -m would otherwise mean the embedded model).
extern const CLI::Validator non_empty;
// USER/REPO[:QUANT] as the hub spells names (apps/hub/repo_files.h reads them).
extern const CLI::Validator hf_repo_check;

// --- the model and how it runs

struct ModelOptions {
  std::string path;  // a file or a cached model's name (USER/REPO:QUANT); empty: hf_repo, else the embedded model
  std::string hf_repo, hf_file;  // -hf USER/REPO[:QUANT], --hf-file FILE: from Hugging Face (or the cache)
  std::optional<uint32_t> device;
  uint32_t ctx = 0;  // 0: the model's context length (at most 4096)
  uint32_t batch = 512;
  std::string kv_type = "f16";
  std::optional<std::string> kv_type_k, kv_type_v;  // llama.cpp's -ctk/-ctv: one type for both
  int gpu_layers = -1, threads = -1;                // accepted for llama.cpp habits; ignored
  std::string flash_attn = "on";                    // -fa: on or auto (attention is always flash)
  bool mlock = false, no_mmap = false;              // accepted for llama.cpp habits; see their help
  bool check = false;  // --check (logits) or $VKLLM_CHECK: the reference model beside the GPU
  // --mmproj FILE, --no-mmproj (commands that take images): the multimodal projector; with -hf
  // the repository's, downloaded beside the model, unless --no-mmproj.
  std::string mmproj;
  bool no_mmproj = false;
};

// -m/--model, -hf/--hf-repo, --hf-file, and with `engine` also -c/--ctx-size, -b/--batch,
// --kv-type (-ctk, -ctv), --device, --n-gpu-layers (-ngl), -t/--threads, --flash-attn (-fa),
// --mlock and --no-mmap.
void add_model_options(CLI::App* cmd, ModelOptions& o, bool engine = true);
// --mmproj FILE and --no-mmproj, for the commands that take images.
void add_mmproj_options(CLI::App* cmd, ModelOptions& o);
// A first positional word that names the model, as Ollama takes it (`run MODEL.gguf "text"`).
// `looks_like_model` says whether a word names one (an existing file, a .gguf name, a cached
// model); the word is removed from `words` and becomes o.path. Throws CLI::ValidationError when
// -m or -hf named a model too.
void take_positional_model(ModelOptions& o, std::vector<std::string>& words,
                           const std::function<bool(const std::string&)>& looks_like_model);

// --- generation

struct GenerationOptions {
  int32_t n_predict = 128;  // -1: until an end-of-generation token or a full context
  SamplerOptions sampling;
  int64_t seed = -1;  // -1: random, printed at the end
  std::vector<std::string> stop;
  bool ignore_eos = false;
};

// -n/--n-predict, --temp, --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n,
// -s/--seed, and with `stops` --stop (repeatable) and --ignore-eos. The defaults shown in help are
// the values `o` holds when this is called (chat asks for longer replies than run).
void add_generation_options(CLI::App* cmd, GenerationOptions& o, bool stops = true);
// The sampler options with the seed resolved (a random one for -1).
SamplerOptions sampler_options(const GenerationOptions& o);

// --- the prompt

struct PromptOptions {
  std::optional<std::string> text, file;
  std::vector<std::string> positional;  // [MODEL] TEXT: take_positional_model takes the model out
};

// -p/--prompt TEXT, -f/--file FILE (- is stdin) or a positional TEXT: at most one (the positional
// words may start with the model, as `run MODEL.gguf TEXT`); with none, a piped standard input is
// the prompt.
void add_prompt_options(CLI::App* cmd, PromptOptions& o, const std::string& what = "The prompt");
// The text the options name (reading the file, or stdin when it is piped); an Error when none
// was given and stdin is a terminal.
std::string read_prompt(const PromptOptions& o);
// A whole file, or stdin for "-"; throws Error naming the file and why ("adir: is a directory").
std::string read_text_file(const std::string& path);

// --pooling mean|cls|last for embeddings (llama.cpp's spelling; its none and rank are refused,
// saying why); "" when not given.
void add_pooling_option(CLI::App* cmd, std::string& pooling);

// --jinja, accepted for llama.cpp habits where chat templates are rendered: they always are Jinja.
void add_jinja_flag(CLI::App* cmd);

// --- colour

// --color [on|off|auto] (llama.cpp's -co): auto colours when stdout is a terminal.
void add_color_option(CLI::App* cmd, std::string& color);
// Whether to colour stdout for that setting.
bool use_color(const std::string& color);

}  // namespace vkllm::cli
