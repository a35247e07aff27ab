// Part names of split GGUF files, as llama.cpp's llama_split_path / llama_split_prefix spell them.
#include "gguf/split.h"

#include <fmt/format.h>

#include <cctype>

namespace vkllm {

std::string split_path(std::string_view prefix, uint32_t index, uint32_t count) {
  return fmt::format("{}-{:05}-of-{:05}.gguf", prefix, index + 1, count);
}

std::optional<SplitName> parse_split_path(std::string_view path) {
  // "-NNNNN-of-NNNNN.gguf" is 20 characters.
  constexpr size_t kSuffix = 20;
  if (path.size() <= kSuffix) return std::nullopt;
  std::string_view s = path.substr(path.size() - kSuffix);
  auto digits = [](std::string_view d) {
    for (char c : d)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
  };
  if (s[0] != '-' || s.substr(6, 4) != "-of-" || s.substr(15) != ".gguf" || !digits(s.substr(1, 5)) ||
      !digits(s.substr(10, 5)))
    return std::nullopt;
  uint32_t number = uint32_t(std::stoul(std::string(s.substr(1, 5))));
  uint32_t count = uint32_t(std::stoul(std::string(s.substr(10, 5))));
  if (number == 0 || number > count) return std::nullopt;
  return SplitName{std::string(path.substr(0, path.size() - kSuffix)), number - 1, count};
}

}  // namespace vkllm
