// The shared flags of the model commands and the validators that check them while parsing.
#include "options.h"

#include <fmt/format.h>
#include <unistd.h>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "error.h"

namespace vkllm::cli {

// --- validators

namespace {

std::string number_text(double v) { return fmt::format("{}", v); }

std::string range_text(std::optional<Bound> lo, std::optional<Bound> hi) {
  if (lo && hi)
    return fmt::format("in {}{}, {}{}", lo->open ? '(' : '[', number_text(lo->value), number_text(hi->value),
                       hi->open ? ')' : ']');
  if (lo) return fmt::format("{} {}", lo->open ? ">" : ">=", number_text(lo->value));
  if (hi) return fmt::format("{} {}", hi->open ? "<" : "<=", number_text(hi->value));
  return "any number";
}

}  // namespace

// Ranges up to a type's maximum read as ">= lo"; a larger value is then "too large".
CLI::Validator int_range(int64_t lo, int64_t hi) {
  bool open = hi >= std::numeric_limits<int32_t>::max();
  std::string range = open ? fmt::format(">= {}", lo) : fmt::format("in [{}, {}]", lo, hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        bool integer = end == s.data() + s.size() && !s.empty();
        if (open && ((integer && ec == std::errc::result_out_of_range) || (ec == std::errc() && integer && v > hi)))
          return fmt::format("'{}' is too large (at most {})", s, hi);
        if (ec != std::errc() || !integer || v < lo || v > hi)
          return fmt::format("'{}' is not an integer {}", s, range);
        return {};
      },
      range);
}

CLI::Validator real_range(std::optional<Bound> lo, std::optional<Bound> hi) {
  std::string range = range_text(lo, hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        errno = 0;
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        bool ok = !s.empty() && end == s.c_str() + s.size() && errno == 0 && std::isfinite(v);
        if (ok && lo) ok = lo->open ? v > lo->value : v >= lo->value;
        if (ok && hi) ok = hi->open ? v < hi->value : v <= hi->value;
        if (!ok) return fmt::format("'{}' is not a number {}", s, range);
        return {};
      },
      range);
}

CLI::Validator one_of(std::vector<std::string> words) {
  std::string list = fmt::format("{}", fmt::join(words, ", "));
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        for (const std::string& w : words)
          if (s == w) return {};
        return fmt::format("'{}' is not one of {}", s, list);
      },
      "one of " + list);
}

const CLI::Validator non_empty(
    [](std::string& s) -> std::string { return s.empty() ? "the path is empty" : std::string(); }, "");

// --- help and version

namespace {

// Help lines as `-n,--n-predict N   Tokens to generate ... [>= -1; default 128]`: the type in the
// left column, the validator's range, the default and "repeatable" after the description.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(34); }

  std::string make_option_opts(const CLI::Option* o) const override {
    if (o->get_expected_max() == 0) return "";
    std::string type = o->get_type_name();
    return " " + type.substr(0, type.find(':')) + (o->get_required() ? " (required)" : "");
  }

  std::string make_option_desc(const CLI::Option* o) const override {
    std::vector<std::string> notes;
    std::string type = o->get_type_name();
    for (size_t at = type.find(':'); at != std::string::npos;) {
      size_t next = type.find(':', at + 1);
      std::string v = type.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
      if (!v.empty()) notes.push_back(v);
      at = next;
    }
    bool repeatable = o->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
    if (o->get_expected_max() > 0 && !o->get_default_str().empty() && !repeatable)
      notes.push_back("default " + o->get_default_str());
    if (repeatable) notes.push_back("repeatable");
    std::string d = o->get_description();
    return notes.empty() ? d : fmt::format("{} ({})", d, fmt::join(notes, ", "));
  }
};

}  // namespace

void setup_app(CLI::App& app) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", "vkllm " VKLLM_VERSION);
  app.require_subcommand(1);
  app.footer("Run `vkllm help COMMAND` (or `vkllm COMMAND --help`) for a command's options.");
}

// --- the model

void add_model_options(CLI::App* cmd, ModelOptions& o, bool engine) {
  cmd->add_option("-m,--model", o.path, "GGUF model file (default: the embedded model)")
      ->type_name("FILE")
      ->check(non_empty);
  if (!engine) return;
  cmd->add_option("-c,--ctx-size,--ctx", o.ctx, "Context length in tokens; 0: the model's, at most 4096")
      ->type_name("N")
      ->check(int_range(0, 1 << 20));
  cmd->add_option("-b,--batch-size,--batch", o.batch, "Prompt tokens per forward pass")
      ->type_name("N")
      ->check(int_range(1, 4096));
  cmd->add_option("--kv-type", o.kv_type, "KV cache storage")
      ->type_name("TYPE")
      ->check(one_of({"f16", "f32", "q8_0", "q4_0"}));
  cmd->add_option("--device", o.device,
                  "Vulkan device index as vkllm devices lists them; default: $VKLLM_DEVICE, else the best")
      ->type_name("I")
      ->check(int_range(0, 1 << 16));
  cmd->add_option("--n-gpu-layers", o.gpu_layers,
                  "Accepted for llama.cpp habits (also as -ngl) and ignored: every layer always runs on the GPU")
      ->type_name("N")
      ->check(int_range(-1));
  cmd->add_option("-t,--threads", o.threads, "Accepted for llama.cpp habits and ignored: the GPU does the work")
      ->type_name("N")
      ->check(int_range(-1));
}

// --- generation

void add_generation_options(CLI::App* cmd, GenerationOptions& o, bool stops) {
  SamplerOptions& s = o.sampling;
  cmd->add_option("-n,--n-predict", o.n_predict,
                  "Tokens to generate; -1: until an end-of-generation token or a full context")
      ->type_name("N")
      ->check(int_range(-1, std::numeric_limits<int32_t>::max()));
  cmd->add_option("--temp", s.temperature, "Temperature; 0: greedy")->type_name("T")->check(real_range(Bound{0}));
  cmd->add_option("--top-k", s.top_k, "Keep the k most likely tokens; 0: all")
      ->type_name("K")
      ->check(int_range(0, std::numeric_limits<int32_t>::max()));
  cmd->add_option("--top-p", s.top_p, "Keep the most likely tokens up to this total probability; 1: all")
      ->type_name("P")
      ->check(real_range(Bound{0, true}, Bound{1}));
  cmd->add_option("--min-p", s.min_p, "Drop tokens less likely than this fraction of the best; 0: off")
      ->type_name("P")
      ->check(real_range(Bound{0}, Bound{1, true}));
  cmd->add_option("--repeat-penalty", s.repeat_penalty, "Penalty for recently seen tokens; 1: off")
      ->type_name("R")
      ->check(real_range(Bound{0, true}));
  cmd->add_option("--repeat-last-n", s.repeat_last_n, "How many recent tokens the penalty sees")
      ->type_name("N")
      ->check(int_range(0, std::numeric_limits<int32_t>::max()));
  cmd->add_option("-s,--seed", o.seed, "Random seed; -1: a random one, printed at the end")
      ->type_name("S")
      ->check(int_range(-1));
  if (!stops) return;
  cmd->add_option("--stop", o.stop, "Stop before this text, which is not printed")
      ->type_name("TEXT")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::Validator(
          [](std::string& t) -> std::string { return t.empty() ? "an empty stop string" : std::string(); }, ""));
  cmd->add_flag("--ignore-eos", o.ignore_eos, "Never stop at an end-of-generation token (they are not sampled)");
}

SamplerOptions sampler_options(const GenerationOptions& o) {
  SamplerOptions s = o.sampling;
  s.seed = o.seed >= 0 ? uint64_t(o.seed) : std::random_device{}();
  return s;
}

// --- the prompt

void add_prompt_options(CLI::App* cmd, PromptOptions& o, const std::string& what) {
  auto* text = cmd->add_option("-p,--prompt", o.text, what)->type_name("TEXT");
  auto* file = cmd->add_option("-f,--file", o.file, what + ", read from a file; -: standard input")
                   ->type_name("FILE")
                   ->check(non_empty);
  auto* pos = cmd->add_option("text", o.positional, what + ", as -p")->type_name("TEXT");
  text->excludes(file)->excludes(pos);
  file->excludes(pos);
}

std::string read_text_file(const std::string& path) {
  if (path == "-") {
    std::string s(std::istreambuf_iterator<char>(std::cin), {});
    ENSURE(!std::cin.bad(), fmt::format("standard input: cannot read: {}", std::strerror(errno)));
    return s;
  }
  std::ifstream in(path, std::ios::binary);
  ENSURE(in, fmt::format("{}: cannot read the file: {}", path, std::strerror(errno)));
  std::string s(std::istreambuf_iterator<char>(in), {});
  ENSURE(!in.bad(), fmt::format("{}: cannot read the file: {}", path, std::strerror(errno)));
  return s;
}

std::string read_prompt(const PromptOptions& o) {
  if (o.file) return read_text_file(*o.file);
  if (o.positional) return *o.positional;
  ENSURE(o.text, "no prompt: give -p TEXT, -f FILE (- for standard input) or the text itself");
  return *o.text;
}

}  // namespace vkllm::cli
