// The cache folder's layout and its listing files.
#include "hub/model_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "error.h"
#include "gguf/split.h"

namespace vkllm::hub {

namespace {

constexpr const char* kListing = "vkllm-repo.json";

fs::path hf_root(const HubSettings& s) { return s.cache / "hf"; }

// The models of a listing: each first part (or single file) with its parts.
std::vector<CachedModel> models_of(const HubSettings& s, const std::string& repo, const std::vector<RepoFile>& files) {
  std::vector<CachedModel> out;
  for (const RepoFile& f : files) {
    std::optional<SplitName> split = parse_split_path(f.path);
    if (!is_model_file(f.path) || (split && split->index != 0)) continue;
    std::vector<RepoFile> parts;
    try {
      parts = select_model(files, {repo, ""}, f.path);
    } catch (const Error&) {
      continue;  // a split model the listing lacks parts of
    }
    if (!in_cache(s, repo, parts)) continue;
    CachedModel m{.quant = quant_tag(f.path)};
    m.name = m.quant.empty() ? repo + "/" + f.path : repo + ":" + m.quant;
    for (const RepoFile& p : parts) m.paths.push_back(repo_dir(s, repo) / p.path), m.bytes += p.size;
    // Two files with one quant (folders of variants): the later ones are named by their file.
    bool taken = std::any_of(out.begin(), out.end(), [&](const CachedModel& o) { return o.name == m.name; });
    if (taken) m.name = repo + "/" + f.path;
    out.push_back(std::move(m));
  }
  return out;
}

void remove_files(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);
  fs::remove(fs::path(path.string() + ".part"), ec);
}

// After files of `repo` were deleted from `dir`: a repository folder left with nothing but its
// listing goes, and so does every folder emptied on the way up to the cache's hf/ folder.
void prune(const HubSettings& s, const std::string& repo, fs::path dir) {
  std::error_code ec;
  fs::path root = repo_dir(s, repo);
  bool only_listing = true;
  for (const auto& e : fs::recursive_directory_iterator(root, ec))
    if (e.is_regular_file() && e.path().filename() != kListing) only_listing = false;
  if (only_listing) fs::remove_all(root, ec), dir = root.parent_path();
  while (dir != hf_root(s) && dir.string().starts_with(hf_root(s).string()) && fs::is_empty(dir, ec) && !ec) {
    fs::remove(dir, ec);
    dir = dir.parent_path();
  }
}

}  // namespace

fs::path repo_dir(const HubSettings& s, const std::string& repo) { return hf_root(s) / repo; }

void save_listing(const HubSettings& s, const std::string& repo, const std::vector<RepoFile>& files) {
  nlohmann::json j = {{"repo", repo}, {"endpoint", s.endpoint}, {"files", nlohmann::json::array()}};
  for (const RepoFile& f : files) j["files"].push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  fs::path dir = repo_dir(s, repo);
  fs::create_directories(dir);
  fs::path tmp = dir / (std::string(kListing) + ".tmp");
  std::ofstream(tmp) << j.dump(1) << "\n";
  std::error_code ec;
  fs::rename(tmp, dir / kListing, ec);
  ENSURE(!ec, fmt::format("{}: cannot write: {}", (dir / kListing).string(), ec.message()));
}

std::optional<std::vector<RepoFile>> load_listing(const HubSettings& s, const std::string& repo) {
  std::ifstream in(repo_dir(s, repo) / kListing);
  if (!in) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    std::vector<RepoFile> files;
    for (const auto& f : j.at("files")) {
      RepoFile r{f.at("path").get<std::string>(), f.at("size").get<uint64_t>(), f.at("sha256").get<std::string>()};
      if (is_safe_path(r.path)) files.push_back(std::move(r));
    }
    return files;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a damaged listing is as good as none: the hub is asked again
  }
}

bool in_cache(const HubSettings& s, const std::string& repo, const std::vector<RepoFile>& files) {
  for (const RepoFile& f : files) {
    std::error_code ec;
    fs::path p = repo_dir(s, repo) / f.path;
    if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) != f.size || ec) return false;
  }
  return !files.empty();
}

std::optional<ModelName> parse_model_name(const std::string& text) {
  if (std::optional<HubRef> r = parse_hub_ref(text)) return ModelName{*r, ""};
  size_t first = text.find('/'), second = first == std::string::npos ? first : text.find('/', first + 1);
  if (second == std::string::npos || !text.ends_with(".gguf")) return std::nullopt;
  std::optional<HubRef> r = parse_hub_ref(text.substr(0, second));
  std::string file = text.substr(second + 1);
  if (!r || !r->tag.empty() || !is_safe_path(file)) return std::nullopt;
  return ModelName{*r, file};
}

std::optional<std::vector<fs::path>> find_cached(const HubSettings& s, const ModelName& m) {
  std::optional<std::vector<RepoFile>> listing = load_listing(s, m.ref.repo);
  if (!listing) return std::nullopt;
  std::vector<RepoFile> parts;
  try {
    parts = select_model(*listing, m.ref, m.file);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!in_cache(s, m.ref.repo, parts)) return std::nullopt;
  std::vector<fs::path> paths;
  for (const RepoFile& p : parts) paths.push_back(repo_dir(s, m.ref.repo) / p.path);
  return paths;
}

std::vector<CachedModel> cached_models(const HubSettings& s) {
  std::vector<std::string> repos;
  std::error_code ec;
  for (const auto& user : fs::directory_iterator(hf_root(s), ec))
    for (const auto& repo : fs::directory_iterator(user.path(), ec))
      if (fs::exists(repo.path() / kListing, ec))
        repos.push_back(user.path().filename().string() + "/" + repo.path().filename().string());
  std::sort(repos.begin(), repos.end());
  std::vector<CachedModel> out;
  for (const std::string& repo : repos)
    if (std::optional<std::vector<RepoFile>> listing = load_listing(s, repo))
      for (CachedModel& m : models_of(s, repo, *listing)) out.push_back(std::move(m));
  return out;
}

std::vector<CachedModel> remove_cached(const HubSettings& s, const std::string& name) {
  std::optional<ModelName> m = parse_model_name(name);
  ENSURE(m, fmt::format("'{}' is not a model name: USER/REPO[:QUANT] or USER/REPO/FILE.gguf (vkllm list shows them)",
                        name));
  std::optional<std::vector<RepoFile>> listing = load_listing(s, m->ref.repo);
  ENSURE(listing, fmt::format("{}: nothing of this repository is in the cache ({})", m->ref.repo,
                              repo_dir(s, m->ref.repo).string()));
  std::vector<CachedModel> all = models_of(s, m->ref.repo, *listing), removed;
  if (m->ref.tag.empty() && m->file.empty()) {  // the whole repository
    std::error_code ec;
    fs::remove_all(repo_dir(s, m->ref.repo), ec);
    ENSURE(!ec, fmt::format("{}: cannot delete: {}", repo_dir(s, m->ref.repo).string(), ec.message()));
    prune(s, m->ref.repo, repo_dir(s, m->ref.repo).parent_path());
    return all;
  }
  for (const CachedModel& c : all) {
    bool match = m->file.empty() ? c.quant == m->ref.tag : c.paths[0] == repo_dir(s, m->ref.repo) / m->file;
    if (!match) continue;
    for (const fs::path& p : c.paths) remove_files(p);
    prune(s, m->ref.repo, c.paths[0].parent_path());
    removed.push_back(c);
  }
  std::vector<std::string> names;
  for (const CachedModel& c : all) names.push_back(c.name);
  ENSURE(!removed.empty(),
         fmt::format("{} is not in the cache; it holds {}", name,
                     names.empty() ? "no model of " + m->ref.repo : fmt::format("{}", fmt::join(names, ", "))));
  return removed;
}

}  // namespace vkllm::hub
