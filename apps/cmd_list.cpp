// `vkllm list [--json]`: the models in the cache (name, quantisation, architecture, size), as
// `ollama list`; `vkllm rm NAME...`: deletes them (USER/REPO:QUANT, USER/REPO/FILE, or USER/REPO
// for everything of a repository).
#include <fmt/format.h>

#include <algorithm>

#include "commands.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf_listing.h"
#include "hub/model_cache.h"
#include "options.h"
#include "output.h"

namespace vkllm::cli {

namespace {

// The architecture the first part names; "?" for a file that no longer parses.
std::string architecture_of(const hub::CachedModel& m) {
  try {
    std::string a = architecture_name(GgufFile::open(m.paths[0].string()));
    return a.empty() ? "?" : a;
  } catch (const Error&) {
    return "?";
  }
}

void list(bool json) {
  hub::HubSettings s = hub::HubSettings::from_environment();
  std::vector<hub::CachedModel> models = hub::cached_models(s);
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const hub::CachedModel& m : models) {
      nlohmann::json paths = nlohmann::json::array();
      for (const auto& p : m.paths) paths.push_back(p.string());
      j.push_back({{"name", m.name},
                   {"quant", m.quant},
                   {"architecture", architecture_of(m)},
                   {"bytes", m.bytes},
                   {"paths", paths}});
    }
    return print_json({{"cache", s.cache.string()}, {"models", j}});
  }
  if (models.empty())
    return write_stdout(
        fmt::format("no models in {} (vkllm pull USER/REPO[:QUANT] downloads one)\n", s.cache.string()));
  size_t width = 4;
  for (const hub::CachedModel& m : models) width = std::max(width, m.name.size());
  std::string out = fmt::format("{:<{}}  {:<8}  {:<10}  {:>10}\n", "NAME", width, "QUANT", "ARCH", "SIZE");
  for (const hub::CachedModel& m : models)
    out += fmt::format("{:<{}}  {:<8}  {:<10}  {:>10}\n", m.name, width, m.quant.empty() ? "-" : m.quant,
                       architecture_of(m), human_bytes(double(m.bytes)));
  write_stdout(out);
}

void remove(const std::vector<std::string>& names) {
  hub::HubSettings s = hub::HubSettings::from_environment();
  for (const std::string& name : names) {
    std::vector<hub::CachedModel> gone = hub::remove_cached(s, name);
    for (const hub::CachedModel& m : gone)
      write_stdout(fmt::format("deleted {} ({})\n", m.name, human_bytes(double(m.bytes))));
    if (gone.empty()) write_stdout(fmt::format("deleted {} (partial downloads)\n", name));
  }
}

}  // namespace

void add_list_commands(CLI::App& app) {
  auto* ls = app.add_subcommand("list", "List the downloaded models (vkllm pull) with their size and architecture");
  auto json = std::make_shared<bool>(false);
  ls->add_flag("--json", *json, "Print one JSON object: the cache folder and every model with its files");
  ls->callback([json] { list(*json); });

  auto* rm = app.add_subcommand("rm", "Delete downloaded models from the cache");
  auto names = std::make_shared<std::vector<std::string>>();
  rm->add_option("name", *names, "USER/REPO:QUANT (as vkllm list shows), USER/REPO/FILE, or USER/REPO: all of it")
      ->type_name("NAME")
      ->required();
  rm->callback([names] { remove(*names); });
}

}  // namespace vkllm::cli
