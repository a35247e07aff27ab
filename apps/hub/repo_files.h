// Which files of a Hugging Face repository make the model a request names: llama.cpp's -hf rules
// (USER/REPO[:QUANT]; the quant found in the file name, Q4_K_M by default, then Q8_0, then the
// first model file) and split models (all parts of `...-00001-of-0000N.gguf`). Pure functions of
// the repository's file list, so the hub and the offline cache choose alike.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm::hub {

// USER/REPO[:QUANT], as llama.cpp's -hf and `vkllm pull` take it.
struct HubRef {
  std::string repo;  // "USER/REPO"
  std::string tag;   // "Q4_K_M"; empty: the default choice
  std::string name() const { return tag.empty() ? repo : repo + ":" + tag; }
};
// nullopt unless the text is USER/REPO[:QUANT] (letters, digits, '-', '_' and '.'; QUANT without '.').
std::optional<HubRef> parse_hub_ref(std::string_view text);

// One file of a repository, as the hub lists it.
struct RepoFile {
  std::string path;  // inside the repository, '/'-separated
  uint64_t size = 0;
  std::string sha256;  // the LFS object id (64 lowercase hex digits); empty for files outside LFS
};

// The quantisation a file name carries, upper case: "SmolLM2-135M-Q8_0.gguf" -> "Q8_0",
// "q4_k_m-00001-of-00002.gguf" -> "Q4_K_M"; "" when it carries none.
std::string quant_tag(std::string_view path);
// A .gguf that holds a model (not a projector, an importance matrix or a draft head).
bool is_model_file(std::string_view path);
// A relative path without "..", "." or empty parts: safe to place under the cache folder.
bool is_safe_path(std::string_view path);
// The quantisations of the repository's models, in listing order, each once.
std::vector<std::string> quants(const std::vector<RepoFile>& files);

// The model the request names: the file `hf_file` names (in any case), or the first model file
// whose name has the tag (without one: Q4_K_M, then Q8_0, then the first model file), together
// with the other parts of a split model, first part first. Throws Error naming the repository and what it has.
std::vector<RepoFile> select_model(const std::vector<RepoFile>& files, const HubRef& ref,
                                   const std::string& hf_file = "");

// The multimodal projector beside a model, as llama.cpp's -hf picks it (common/download.cpp
// find_best_sibling): a .gguf with "mmproj" in its name in the model's folder or one it shares
// more of, then the one whose quantisation's bits are closest to the model's. nullopt: none.
std::optional<RepoFile> select_mmproj(const std::vector<RepoFile>& files, const std::string& model_path);

}  // namespace vkllm::hub
