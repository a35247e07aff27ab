// Split GGUF files: how llama.cpp's gguf-split names the parts of one model
// (`<prefix>-00001-of-00003.gguf`, numbered from 1) and the metadata keys that tie them together.
// GgufFile::open loads a split model from its first part; GgufWriter::split writes one.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vkllm {

// Keys every part carries (llama.cpp writes u16, u16, i32; any integer width is read). The first
// part holds the model's metadata as well; the others only these and their tensors.
inline constexpr std::string_view kSplitNoKey = "split.no";                  // 0-based part index
inline constexpr std::string_view kSplitCountKey = "split.count";            // number of parts
inline constexpr std::string_view kSplitTensorsKey = "split.tensors.count";  // tensors in all parts
inline constexpr uint32_t kMaxSplitParts = 99999;                            // five digits in the name

// "<prefix>-00002-of-00005.gguf" for index 1 of 5.
std::string split_path(std::string_view prefix, uint32_t index, uint32_t count);

// What a part's file name says: "a/b-00002-of-00005.gguf" -> {"a/b", 1, 5}; nullopt for a name
// without the suffix.
struct SplitName {
  std::string prefix;
  uint32_t index = 0, count = 1;
};
std::optional<SplitName> parse_split_path(std::string_view path);

}  // namespace vkllm
