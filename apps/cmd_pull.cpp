// `vkllm pull USER/REPO[:QUANT] [--hf-file FILE]`: downloads a model from Hugging Face into the
// cache (apps/hub/): the QUANT file (Q4_K_M by default, as llama.cpp's -hf), all parts of a split
// model, resumed where an earlier pull stopped, each checked against the SHA-256 the hub lists.
// Progress on stderr; the path of the model's (first) file on stdout, for scripts. Ctrl-C keeps
// what came (exit 130).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "commands.h"
#include "error.h"
#include "hub/hub.h"
#include "interrupt.h"
#include "options.h"
#include "output.h"

namespace vkllm::cli {

namespace {

struct PullOptions {
  std::string name, hf_repo, hf_file;
  bool no_mmproj = false;
};

void pull(const PullOptions& o) {
  if (o.name.empty() && o.hf_repo.empty()) throw CLI::ValidationError("which model? vkllm pull USER/REPO[:QUANT]");
  std::string name = o.name.empty() ? o.hf_repo : o.name;
  std::optional<hub::HubRef> ref = hub::parse_hub_ref(name);
  ENSURE(ref, fmt::format("'{}' is not USER/REPO[:QUANT]", name));  // hf_repo_check let it through
  if (!o.hf_file.empty() && !ref->tag.empty())
    throw CLI::ValidationError("--hf-file",
                               fmt::format("{} names a QUANT and --hf-file a file: give one of them", name));
  hub::HubSettings settings = hub::HubSettings::from_environment();
  SigintScope sigint;
  hub::PulledModel m;
  try {
    m = hub::pull(settings, {*ref, o.hf_file},
                  {.terminal = bool(isatty(STDERR_FILENO)), .cancelled = interrupted, .mmproj = !o.no_mmproj});
  } catch (const hub::Interrupted& e) {
    std::fprintf(stderr, "interrupted: %s\n", e.what());
    throw CLI::RuntimeError(130);
  }
  std::string parts = m.paths.size() > 1 ? fmt::format(" in {} parts", m.paths.size()) : "";
  std::fprintf(stderr, "%s\n",
               fmt::format("{}: {}{}, {} downloaded (vkllm run -m {} ...)", m.name, human_bytes(double(m.bytes)), parts,
                           human_bytes(double(m.downloaded)), m.name)
                   .c_str());
  if (!m.mmproj.empty()) std::fprintf(stderr, "projector: %s (vkllm run --image uses it with -hf)\n", m.mmproj.c_str());
  write_stdout(m.paths[0].string() + "\n");
}

}  // namespace

void add_pull_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("pull", "Download a GGUF model from Hugging Face into the cache");
  auto o = std::make_shared<PullOptions>();
  auto* name = cmd->add_option("model", o->name,
                               "USER/REPO[:QUANT]: the repository and quantisation, as llama.cpp's -hf takes them "
                               "(QUANT: Q4_K_M, else Q8_0, else the first model file)")
                   ->type_name("USER/REPO")
                   ->check(hf_repo_check);
  cmd->add_option("--hf-repo", o->hf_repo, "The same, as llama.cpp spells it (also -hf, -hfr)")
      ->type_name("USER/REPO")
      ->check(hf_repo_check)
      ->excludes(name);
  cmd->add_option("--hf-file", o->hf_file, "The repository's file to download (also -hff), instead of a QUANT")
      ->type_name("FILE")
      ->check(non_empty);
  cmd->add_flag("--no-mmproj", o->no_mmproj,
                "Not the repository's multimodal projector (fetched beside the model by default)");
  cmd->footer(
      "Environment: HF_TOKEN (gated repositories), HF_ENDPOINT (a mirror), VKLLM_CACHE (the cache folder; "
      "else $XDG_CACHE_HOME/vkllm, else ~/.cache/vkllm).");
  cmd->callback([o] { pull(*o); });
}

}  // namespace vkllm::cli
