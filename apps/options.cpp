// The shared flags of the model commands and the validators that check them while parsing.
#include "options.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>

#include "engine/embedding.h"
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

void add_pooling_option(CLI::App* cmd, std::string& pooling) {
  CLI::Validator embeddings(
      [](std::string& s) -> std::string {
        std::optional<Pooling> p = pooling_named(s);
        return p ? pooling_refusal(*p) : std::string();
      },
      "");
  cmd->add_option("--pooling", pooling,
                  "How token states become one embedding: mean, cls (the first token) or last; default: the file's "
                  "pooling_type, else last")
      ->type_name("TYPE")
      ->check(one_of({"none", "mean", "cls", "last", "rank"}) & embeddings);
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

namespace {

// llama.cpp's -ctk/-ctv name K's and V's types; vkllm stores both in one (--kv-type).
void reconcile_kv_types(ModelOptions& o, bool kv_type_given) {
  const std::optional<std::string>& k = o.kv_type_k;
  const std::optional<std::string>& v = o.kv_type_v;
  if (k && v && *k != *v)
    throw CLI::ValidationError("--cache-type-k",
                               fmt::format("-ctk {} and -ctv {} differ: vkllm stores K and V in one type "
                                           "(--kv-type)",
                                           *k, *v));
  std::optional<std::string> kv = k ? k : v;
  if (kv && *kv != o.kv_type && kv_type_given)
    throw CLI::ValidationError("--kv-type", fmt::format("--kv-type {} and -ctk/-ctv {} differ", o.kv_type, *kv));
  if (kv) o.kv_type = *kv;
}

// -hf USER/REPO:QUANT names a file, and so does --hf-file: one of them.
void check_hf_choice(const ModelOptions& o) {
  if (!o.hf_file.empty() && o.hf_repo.find(':') != std::string::npos)
    throw CLI::ValidationError("--hf-file",
                               fmt::format("-hf {} names a QUANT and --hf-file a file: give one of them", o.hf_repo));
}

}  // namespace

// USER/REPO[:QUANT] as the hub spells names (apps/hub/repo_files.h reads them).
const CLI::Validator hf_repo_check(
    [](std::string& s) -> std::string {
      static const std::regex ref(R"([A-Za-z0-9._-]+/[A-Za-z0-9._-]+(:[A-Za-z0-9_-]+)?)");
      return std::regex_match(s, ref) && s.find("..") == std::string::npos
                 ? std::string()
                 : fmt::format("'{}' is not USER/REPO[:QUANT]", s);
    },
    "");

void add_mmproj_options(CLI::App* cmd, ModelOptions& o) {
  auto* file =
      cmd->add_option("--mmproj", o.mmproj,
                      "The model's multimodal projector (mmproj-*.gguf), for images; with -hf the repository's "
                      "is fetched beside the model")
          ->type_name("FILE")
          ->check(non_empty);
  cmd->add_flag("--no-mmproj", o.no_mmproj, "With -hf: no projector, text only")->excludes(file);
}

void add_model_options(CLI::App* cmd, ModelOptions& o, bool engine) {
  auto* m = cmd->add_option("-m,--model", o.path,
                            "GGUF model file, or a downloaded model's name (USER/REPO:QUANT, as vkllm list shows); "
                            "default: the embedded model")
                ->type_name("FILE")
                ->check(non_empty);
  auto* hf = cmd->add_option("--hf-repo", o.hf_repo,
                             "USER/REPO[:QUANT] on Hugging Face (also -hf, -hfr): its QUANT file (default Q4_K_M, else "
                             "Q8_0, else the first), from the cache or downloaded into it")
                 ->type_name("USER/REPO")
                 ->check(hf_repo_check)
                 ->excludes(m);
  cmd->add_option("--hf-file", o.hf_file, "The file of the -hf repository to use (also -hff), instead of a QUANT")
      ->type_name("FILE")
      ->check(non_empty)
      ->needs(hf);
  if (!engine) {
    cmd->parse_complete_callback([&o] { check_hf_choice(o); });
    return;
  }
  cmd->add_option("-c,--ctx-size,--ctx", o.ctx,
                  "Context length in tokens; 0: the model's, at most 4096, halved until it fits the device")
      ->type_name("N")
      ->check(int_range(0, 1 << 20));
  cmd->add_option("-b,--batch-size,--batch", o.batch, "Prompt tokens per forward pass")
      ->type_name("N")
      ->check(int_range(1, 4096));
  std::vector<std::string> kv_types = {"f16", "f32", "q8_0", "q4_0"};
  auto* kv = cmd->add_option("--kv-type", o.kv_type, "KV cache storage")->type_name("TYPE")->check(one_of(kv_types));
  cmd->add_option("--cache-type-k", o.kv_type_k, "llama.cpp's -ctk: --kv-type (K and V share one type)")
      ->type_name("TYPE")
      ->check(one_of(kv_types));
  cmd->add_option("--cache-type-v", o.kv_type_v, "llama.cpp's -ctv: --kv-type (K and V share one type)")
      ->type_name("TYPE")
      ->check(one_of(kv_types));
  cmd->parse_complete_callback([&o, kv] {
    check_hf_choice(o);
    reconcile_kv_types(o, kv->count() > 0);
  });
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
  cmd->add_option("--flash-attn", o.flash_attn,
                  "Accepted for llama.cpp habits (also -fa, with or without a value): attention is always flash "
                  "attention")
      ->type_name("on|auto")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "on" || v == "auto") return "";
            if (v == "off") return "vkllm has only flash attention; drop -fa off";
            return fmt::format("'{}' is not one of on, off, auto", v);
          },
          ""));
  cmd->add_flag("--mlock", o.mlock,
                "Accepted for llama.cpp habits: the weights live in GPU memory once loaded, so there is nothing to "
                "lock in RAM");
  cmd->add_flag("--no-mmap", o.no_mmap,
                "Accepted for llama.cpp habits: the file is mapped only to upload the weights, which then live in "
                "GPU memory");
}

void take_positional_model(ModelOptions& o, std::vector<std::string>& words,
                           const std::function<bool(const std::string&)>& looks_like_model) {
  if (words.empty() || !looks_like_model(words[0])) return;
  if (!o.path.empty() || !o.hf_repo.empty())
    throw CLI::ValidationError("model", fmt::format("'{}' names a model, and so does {}", words[0],
                                                    o.path.empty() ? "-hf " + o.hf_repo : "-m " + o.path));
  o.path = words[0];
  words.erase(words.begin());
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
  cmd->add_option("text", o.positional, what + ", as -p (after the model, when the first word names one)")
      ->type_name("[MODEL] TEXT")
      ->expected(0, 2);
  text->excludes(file);
}

namespace {

// "adir: is a directory", "gone.txt: no such file or directory": the path and why, in lower case.
[[noreturn]] void unreadable(const std::string& path, int err) {
  std::string why = std::strerror(err);
  if (!why.empty()) why[0] = char(std::tolower(static_cast<unsigned char>(why[0])));
  throw Error(fmt::format("{}: {}", path, why));
}

}  // namespace

std::string read_text_file(const std::string& path) {
  if (path == "-") {
    std::string s(std::istreambuf_iterator<char>(std::cin), {});
    ENSURE(!std::cin.bad(), fmt::format("standard input: cannot read: {}", std::strerror(errno)));
    return s;
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) unreadable(path, errno);
  if (S_ISDIR(st.st_mode)) unreadable(path, EISDIR);
  std::ifstream in(path, std::ios::binary);
  if (!in) unreadable(path, errno);
  std::string s(std::istreambuf_iterator<char>(in), {});
  if (in.bad()) unreadable(path, errno);
  return s;
}

std::string read_prompt(const PromptOptions& o) {
  // Command-line mistakes (exit 2), found only once the model took its word.
  if (o.positional.size() > 1)
    throw CLI::ValidationError(
        fmt::format("'{}' is not a model (no such file, and no .gguf name): give one prompt text", o.positional[0]));
  if ((o.text || o.file) && !o.positional.empty())
    throw CLI::ValidationError(
        fmt::format("the prompt is given twice: {} and the text '{}'", o.text ? "-p" : "-f", o.positional[0]));
  if (o.file) return read_text_file(*o.file);
  if (!o.positional.empty()) return o.positional[0];
  if (o.text) return *o.text;
  ENSURE(!isatty(STDIN_FILENO), "no prompt: give -p TEXT, -f FILE (- for standard input), the text itself, or pipe it");
  std::string piped = read_text_file("-");
  if (piped.ends_with("\n")) piped.pop_back();  // as the shell's $(...) drops it: `echo text |` means "text"
  return piped;
}

void add_jinja_flag(CLI::App* cmd) {
  cmd->add_flag("--jinja")->description(
      "Accepted for llama.cpp habits: chat templates are always rendered as the Jinja programs they are");
}

// --- colour

void add_color_option(CLI::App* cmd, std::string& color) {
  cmd->add_option("--color", color,
                  "Colour the output (also -co; alone: auto, colours only on a terminal), as llama.cpp's --color")
      ->type_name("on|off|auto")
      ->check(one_of({"on", "off", "auto"}));
}

bool use_color(const std::string& color) { return color == "on" || (color == "auto" && isatty(STDOUT_FILENO)); }

}  // namespace vkllm::cli
