// Where models come from and where they are kept: the Hugging Face endpoint (HF_ENDPOINT, for
// mirrors), the access token for gated repositories (HF_TOKEN) and the cache folder (VKLLM_CACHE,
// else $XDG_CACHE_HOME/vkllm, else ~/.cache/vkllm). Read from the environment here and nowhere
// else in apps/ (runtime/context.cpp reads the GPU's variables).
#pragma once
#include <filesystem>
#include <string>

namespace vkllm::hub {

inline constexpr const char* kDefaultEndpoint = "https://huggingface.co";

struct HubSettings {
  std::string endpoint = kDefaultEndpoint;  // no trailing slash
  std::string token;                        // empty: anonymous
  std::filesystem::path cache;              // the cache folder (created when first written)

  // Throws Error when no cache folder can be named (no VKLLM_CACHE, XDG_CACHE_HOME or HOME).
  static HubSettings from_environment();
};

}  // namespace vkllm::hub
