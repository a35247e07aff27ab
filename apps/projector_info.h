// What `vkllm info --mmproj FILE` adds: the projector's encoder and what images cost the model,
// in tokens and in KV-cache bytes at the model's bytes per token (issue 41).
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "arch/projector.h"
#include "gguf/reader.h"
#include "options.h"

namespace vkllm::cli {

// Sizes of the images info reports: a square photo, a phone photo, a 1080p screenshot.
inline constexpr uint32_t kInfoImageSizes[][2] = {{896, 896}, {1024, 768}, {1920, 1080}};

std::string projector_text(const std::string& file, const ProjectorConfig& c, uint64_t kv_bytes_per_token,
                           uint32_t model_dim);
// The projector the options name (--mmproj, or -hf's beside the model), read and checked to give
// rows of the model's width before anything loads; no file when there is none.
struct ProjectorFile {
  std::unique_ptr<GgufFile> file;
  std::shared_ptr<const ProjectorConfig> config;
};
ProjectorFile open_projector(const ModelOptions& o, uint32_t model_dim);

nlohmann::json projector_json(const std::string& file, const ProjectorConfig& c, uint64_t kv_bytes_per_token,
                              uint32_t model_dim);

}  // namespace vkllm::cli
