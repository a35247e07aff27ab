// Metadata reads that accept any integer width and name the key in every error.
#include "arch/keys.h"

#include <fmt/format.h>

#include <cmath>

#include "gguf/reader.h"

namespace vkllm {

uint32_t read_u32(const GgufFile& f, const std::string& key, std::optional<uint32_t> fallback) {
  int64_t v = fallback ? f.get_int(key, *fallback) : f.get_int(key);
  if (v < 0 || v > int64_t(UINT32_MAX)) f.fail(fmt::format("metadata key {} = {} is out of range", key, v));
  return uint32_t(v);
}

float read_f32(const GgufFile& f, const std::string& key, std::optional<float> fallback) {
  double v = fallback ? f.get_float(key, *fallback) : f.get_float(key);
  if (!std::isfinite(v)) f.fail(fmt::format("metadata key {} is not a finite number", key));
  return float(v);
}

std::vector<uint32_t> read_per_layer(const GgufFile& f, const std::string& key, uint32_t n_layers,
                                     std::optional<uint32_t> fallback, uint32_t trailing) {
  const GgufValue* v = f.find(key);
  if (!v || v->type() != GgufType::Array) return std::vector<uint32_t>(n_layers, read_u32(f, key, fallback));
  std::vector<int64_t> a = f.get_int_array(key);
  if (a.size() != n_layers && a.size() != uint64_t(n_layers) + trailing)
    f.fail(fmt::format("metadata key {} has {} entries for {} layers", key, a.size(), n_layers));
  a.resize(n_layers);
  std::vector<uint32_t> out;
  for (int64_t x : a) {
    if (x < 0 || x > int64_t(UINT32_MAX)) f.fail(fmt::format("metadata key {} has an entry {} out of range", key, x));
    out.push_back(uint32_t(x));
  }
  return out;
}

uint32_t read_uniform(const GgufFile& f, const std::string& key, uint32_t n_layers, std::optional<uint32_t> fallback,
                      uint32_t trailing) {
  std::vector<uint32_t> v = read_per_layer(f, key, n_layers, fallback, trailing);
  for (uint32_t x : v)
    if (x != v[0]) f.fail(fmt::format("metadata key {} differs between layers; vkllm needs one value", key));
  return v[0];
}

}  // namespace vkllm
