// Reading and writing model metadata keys under the architecture prefix ("llama.block_count"),
// shared by the common keys (model_config.cpp) and each architecture's own (model/arch/<name>.cpp).
// Counts are read at any integer width (docs/formats.md pitfall 6).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm {

class GgufFile;

// Builds "<prefix>.<key>": the prefix is general.architecture as the file spells it.
struct KeyPrefix {
  std::string prefix;
  std::string operator()(std::string_view k) const { return prefix + "." + std::string(k); }
};

uint32_t read_u32(const GgufFile& f, const std::string& key, std::optional<uint32_t> fallback = std::nullopt);
float read_f32(const GgufFile& f, const std::string& key, std::optional<float> fallback = std::nullopt);
// A per-layer value: a scalar for every layer or an array of n_layers; an array may also hold
// `trailing` more entries (the multi-token-prediction blocks after the trunk), which are dropped.
std::vector<uint32_t> read_per_layer(const GgufFile& f, const std::string& key, uint32_t n_layers,
                                     std::optional<uint32_t> fallback = std::nullopt, uint32_t trailing = 0);
// A per-layer value that must be the same in every layer.
uint32_t read_uniform(const GgufFile& f, const std::string& key, uint32_t n_layers,
                      std::optional<uint32_t> fallback = std::nullopt, uint32_t trailing = 0);

}  // namespace vkllm
