// The hub's model API and the pull of one model.
#include "hub/hub.h"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "error.h"
#include "hub/download.h"
#include "hub/http_client.h"
#include "hub/sha256.h"
#include "output.h"

namespace vkllm::hub {

namespace {

// Percent-encodes everything but unreserved characters and '/'.
std::string url_path(std::string_view path) {
  std::string out;
  for (char c : path) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/')
      out += c;
    else
      out += fmt::format("%{:02X}", u);
  }
  return out;
}

// One line for an answer the hub refused; `what` is the repository or file asked for.
std::string refusal(const HubSettings& s, const std::string& repo, const std::string& what, long status) {
  std::string token_hint =
      "set HF_TOKEN to an access token of an account that may read it (" + s.endpoint + "/settings/tokens)";
  switch (status) {
    case 401:
      return s.token.empty() ? fmt::format("{}: 401 Unauthorized: {} is gated or private (or does not exist); {}", what,
                                           repo, token_hint)
                             : fmt::format(
                                   "{}: 401 Unauthorized: the hub does not accept HF_TOKEN (expired or "
                                   "mistyped?)",
                                   what);
    case 403:
      return fmt::format("{}: 403 Forbidden: {} is gated: accept its terms at {}/{} with the account {}", what, repo,
                         s.endpoint, repo, s.token.empty() ? "whose token HF_TOKEN holds" : "of HF_TOKEN");
    case 404:
      return what == repo ? fmt::format("{}: no such repository on {} (404)", repo, s.endpoint)
                          : fmt::format("{}: not found in {} on {} (404)", what, repo, s.endpoint);
    default:
      return fmt::format("{}: the hub answered HTTP {}", what, status);
  }
}

// The next page of a listing: Link: <url>; rel="next".
std::string next_page(const HttpResult& r) {
  auto it = r.headers.find("link");
  if (it == r.headers.end()) return "";
  const std::string& v = it->second;
  size_t rel = v.find("rel=\"next\"");
  if (rel == std::string::npos) return "";
  size_t open = v.rfind('<', rel), close = v.find('>', open);
  return open == std::string::npos || close == std::string::npos ? "" : v.substr(open + 1, close - open - 1);
}

void read_entries(const nlohmann::json& page, std::vector<RepoFile>& files) {
  ENSURE(page.is_array(), "the hub's file list is not a JSON array");
  for (const auto& e : page) {
    if (!e.is_object() || e.value("type", "") != "file" || !e.contains("path") || !e["path"].is_string()) continue;
    RepoFile f{e["path"].get<std::string>(), e.value("size", uint64_t(0)), ""};
    if (e.contains("lfs") && e["lfs"].is_object()) {
      f.sha256 = e["lfs"].value("oid", "");
      f.size = e["lfs"].value("size", f.size);
    }
    if (!is_sha256_hex(f.sha256)) f.sha256.clear();
    if (is_safe_path(f.path)) files.push_back(std::move(f));
  }
}

std::string model_name(const ModelName& m, const RepoFile& first) {
  std::string q = quant_tag(first.path);
  return q.empty() ? m.ref.repo + "/" + first.path : m.ref.repo + ":" + q;
}

}  // namespace

std::vector<RepoFile> list_repo(const HubSettings& s, const std::string& repo) {
  HttpClient http(s.endpoint, s.token);
  std::vector<RepoFile> files;
  std::string url = s.endpoint + "/api/models/" + repo + "/tree/main?recursive=true";
  for (int page = 0; !url.empty(); ++page) {
    ENSURE(page < 1000, repo + ": the hub's file list does not end");
    std::string body;
    HttpResult r = http.get(url, body);
    ENSURE(r.transport_error.empty(),
           fmt::format("cannot reach {}: {} (HF_ENDPOINT names another hub or mirror)", s.endpoint, r.transport_error));
    ENSURE(r.status == 200, refusal(s, repo, repo, r.status));
    try {
      read_entries(nlohmann::json::parse(body), files);
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("{}: the hub's file list is not valid JSON ({})", repo, e.what()));
    }
    url = next_page(r);
  }
  return files;
}

namespace {

// Downloads f into the repository's cache folder unless it is there; its path.
std::filesystem::path fetch(const HubSettings& s, HttpClient& http, const ModelName& m, const RepoFile& f,
                            const PullOptions& o, PulledModel& out) {
  DownloadItem item{.url = s.endpoint + "/" + m.ref.repo + "/resolve/main/" + url_path(f.path),
                    .label = f.path,
                    .dest = repo_dir(s, m.ref.repo) / f.path,
                    .size = f.size,
                    .sha256 = f.sha256};
  if (in_cache(s, m.ref.repo, {f})) {
    std::fprintf(stderr, "%s: up to date (%s)\n", f.path.c_str(), cli::human_bytes(double(f.size)).c_str());
    return item.dest;
  }
  try {
    DownloadResult r = download_file(http, item, {.terminal = o.terminal, .cancelled = o.cancelled});
    out.downloaded += r.bytes - r.resumed_from;
  } catch (const HttpStatusError& e) {
    throw Error(refusal(s, m.ref.repo, f.path, e.status()));
  }
  return item.dest;
}

}  // namespace

PulledModel pull(const HubSettings& s, const ModelName& m, const PullOptions& o) {
  std::vector<RepoFile> files = list_repo(s, m.ref.repo);
  std::vector<RepoFile> parts = select_model(files, m.ref, m.file);
  save_listing(s, m.ref.repo, files);
  HttpClient http(s.endpoint, s.token);
  PulledModel out{.name = model_name(m, parts[0])};
  for (const RepoFile& f : parts) {
    out.paths.push_back(fetch(s, http, m, f, o, out));
    out.bytes += f.size;
  }
  if (std::optional<RepoFile> proj = o.mmproj ? select_mmproj(files, parts[0].path) : std::nullopt)
    out.mmproj = fetch(s, http, m, *proj, o, out);
  return out;
}

PulledModel obtain(const HubSettings& s, const ModelName& m, const PullOptions& o) {
  if (std::optional<std::vector<std::filesystem::path>> paths = find_cached(s, m)) {
    PulledModel out{.paths = *paths};
    for (const auto& p : *paths) out.bytes += std::filesystem::file_size(p);
    std::optional<std::vector<RepoFile>> listing = load_listing(s, m.ref.repo);
    std::vector<RepoFile> parts = select_model(*listing, m.ref, m.file);
    out.name = model_name(m, parts[0]);
    std::optional<RepoFile> proj = o.mmproj ? select_mmproj(*listing, parts[0].path) : std::nullopt;
    if (!proj) return out;
    if (in_cache(s, m.ref.repo, {*proj})) {
      out.mmproj = repo_dir(s, m.ref.repo) / proj->path;
      return out;
    }
  }
  return pull(s, m, o);
}

}  // namespace vkllm::hub
