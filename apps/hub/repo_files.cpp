// Choosing a repository's model file the way llama.cpp's -hf does (common/download.cpp).
#include "hub/repo_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "error.h"
#include "gguf/split.h"

namespace vkllm::hub {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool name_char(char c, bool dot) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || (dot && c == '.');
}

bool word(std::string_view s, bool dot) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [dot](char c) { return name_char(c, dot); });
}

// The file name without ".gguf" and without a split suffix.
std::string stem(std::string_view path) {
  if (std::optional<SplitName> s = parse_split_path(path)) return s->prefix;
  std::string_view p = path;
  if (p.ends_with(".gguf")) p.remove_suffix(5);
  return std::string(p);
}

// llama.cpp matches the tag followed by '.' or '-' anywhere in the path, ignoring case.
bool has_tag(std::string_view path, const std::string& tag) {
  std::string p = upper(path), t = upper(tag);
  for (size_t at = p.find(t); at != std::string::npos; at = p.find(t, at + 1)) {
    size_t end = at + t.size();
    if (end < p.size() && (p[end] == '.' || p[end] == '-')) return true;
  }
  return false;
}

bool first_part(const RepoFile& f) {
  std::optional<SplitName> s = parse_split_path(f.path);
  return !s || s->index == 0;
}

// The parts of the split model whose first part is `first`, in order; all must be listed.
std::vector<RepoFile> with_parts(const std::vector<RepoFile>& files, const RepoFile& first, const HubRef& ref) {
  std::optional<SplitName> s = parse_split_path(first.path);
  if (!s || s->count == 1) return {first};
  std::vector<RepoFile> parts(s->count);
  for (const RepoFile& f : files)
    if (std::optional<SplitName> o = parse_split_path(f.path); o && o->prefix == s->prefix && o->count == s->count)
      parts[o->index] = f;
  for (uint32_t i = 0; i < s->count; ++i)
    ENSURE(!parts[i].path.empty(), fmt::format("{} lists {} without part {} of {} ({})", ref.repo, first.path, i + 1,
                                               s->count, split_path(s->prefix, i, s->count)));
  return parts;
}

std::string quant_list(const std::vector<RepoFile>& files) {
  std::vector<std::string> q = quants(files);
  return q.empty() ? "none" : fmt::format("{}", fmt::join(q, ", "));
}

}  // namespace

std::optional<HubRef> parse_hub_ref(std::string_view text) {
  size_t colon = text.find(':');
  std::string_view repo = text.substr(0, colon);
  size_t slash = repo.find('/');
  if (slash == std::string_view::npos || !word(repo.substr(0, slash), true) || !word(repo.substr(slash + 1), true))
    return std::nullopt;
  HubRef r{std::string(repo), ""};
  if (colon != std::string_view::npos) {
    if (!word(text.substr(colon + 1), false)) return std::nullopt;
    r.tag = upper(text.substr(colon + 1));
  }
  if (r.repo.find("..") != std::string::npos) return std::nullopt;
  return r;
}

std::string quant_tag(std::string_view path) {
  std::string s = stem(path.substr(path.rfind('/') + 1));
  size_t at = s.size();
  while (at > 0 && name_char(s[at - 1], false) && s[at - 1] != '-') --at;
  if (at == 0 || at == s.size() || (s[at - 1] != '-' && s[at - 1] != '.')) return "";
  return upper(s.substr(at));
}

bool is_model_file(std::string_view path) {
  if (!path.ends_with(".gguf")) return false;
  std::string_view name = path.substr(path.rfind('/') + 1);
  for (std::string_view no : {"mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-"})
    if (name.find(no) != std::string_view::npos) return false;
  return true;
}

bool is_safe_path(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (size_t at = 0; at <= path.size();) {
    size_t end = std::min(path.find('/', at), path.size());
    std::string_view part = path.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = end + 1;
  }
  return path.find('\\') == std::string_view::npos && path.find('\0') == std::string_view::npos;
}

std::vector<std::string> quants(const std::vector<RepoFile>& files) {
  std::vector<std::string> out;
  for (const RepoFile& f : files) {
    std::string q = quant_tag(f.path);
    if (is_model_file(f.path) && first_part(f) && !q.empty() && std::find(out.begin(), out.end(), q) == out.end())
      out.push_back(q);
  }
  return out;
}

std::vector<RepoFile> select_model(const std::vector<RepoFile>& files, const HubRef& ref, const std::string& hf_file) {
  if (!hf_file.empty()) {  // matched ignoring case, as llama.cpp's --hf-file
    for (const RepoFile& f : files)
      if (upper(f.path) == upper(hf_file)) return with_parts(files, f, ref);
    std::vector<std::string> gguf;
    for (const RepoFile& f : files)
      if (f.path.ends_with(".gguf")) gguf.push_back(f.path);
    throw Error(fmt::format("{} has no file {}; its GGUF files: {}", ref.repo, hf_file,
                            gguf.empty() ? "none" : fmt::format("{}", fmt::join(gguf, ", "))));
  }
  std::vector<std::string> tags = ref.tag.empty() ? std::vector<std::string>{"Q4_K_M", "Q8_0"} : std::vector{ref.tag};
  for (const std::string& t : tags)
    for (const RepoFile& f : files)
      if (is_model_file(f.path) && first_part(f) && has_tag(f.path, t)) return with_parts(files, f, ref);
  if (ref.tag.empty())
    for (const RepoFile& f : files)
      if (is_model_file(f.path) && first_part(f)) return with_parts(files, f, ref);
  if (ref.tag.empty()) throw Error(fmt::format("{} has no GGUF model files", ref.repo));
  throw Error(fmt::format("{} has no {} model file; it has {}", ref.repo, ref.tag, quant_list(files)));
}

namespace {

// The bits of a file's quantisation ("Q4_K_M" 4, "F16" 16, "BF16" 16); 0 when it names none.
int quant_bits(std::string_view path) {
  std::string q = quant_tag(path);
  size_t at = q.find_first_of("0123456789");
  if (at == std::string::npos) return 0;
  int bits = 0;
  for (; at < q.size() && q[at] >= '0' && q[at] <= '9' && bits < 1000; ++at) bits = bits * 10 + (q[at] - '0');
  return bits;
}

std::vector<std::string_view> folders(std::string_view path) {  // the '/'-separated parts but the file's name
  std::vector<std::string_view> out;
  for (size_t at = 0, end; (end = path.find('/', at)) != std::string_view::npos; at = end + 1)
    out.push_back(path.substr(at, end - at));
  return out;
}

}  // namespace

std::optional<RepoFile> select_mmproj(const std::vector<RepoFile>& files, const std::string& model_path) {
  std::vector<std::string_view> model_dirs = folders(model_path);
  int model_bits = quant_bits(model_path);
  std::optional<RepoFile> best;
  size_t best_depth = 0;
  int best_diff = 0;
  for (const RepoFile& f : files) {
    std::string_view name = std::string_view(f.path).substr(f.path.rfind('/') + 1);
    if (!f.path.ends_with(".gguf") || name.find("mmproj") == std::string_view::npos) continue;
    std::vector<std::string_view> dirs = folders(f.path);
    auto [m, d] = std::mismatch(model_dirs.begin(), model_dirs.end(), dirs.begin(), dirs.end());
    if (d != dirs.end()) continue;  // in a folder the model is not in
    size_t depth = size_t(d - dirs.begin());
    int diff = std::abs(quant_bits(f.path) - model_bits);
    if (!best || depth > best_depth || (depth == best_depth && diff < best_diff))
      best = f, best_depth = depth, best_diff = diff;
  }
  return best;
}

}  // namespace vkllm::hub
