// The file type (`general.file_type`): llama.cpp's name for a file's quantisation mix, "Q4_K_M"
// or "IQ3_M". It names a policy, not the type of every tensor (docs/formats.md §1.2, §2.3):
// `vkllm info` prints it with the tensor types the file really holds.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dtype.h"

namespace vkllm {

class GgufFile;
class GgufWriter;

struct FileType {
  uint32_t id;            // the llama_ftype value stored in general.file_type
  std::string_view name;  // "Q3_K_M"
  DType base;             // the type most matrices get (llama.cpp's default type of the mix)
};

std::optional<FileType> file_type(uint32_t id);
std::optional<FileType> file_type_named(std::string_view name);  // case-insensitive
std::string file_type_name(uint32_t id);                         // "Q4_K_M", or "file type 99" when unknown
// general.file_type if the file has it (any integer width); nullopt when absent.
std::optional<uint32_t> read_file_type(const GgufFile& f);
void write_file_type(GgufWriter& w, uint32_t id);

}  // namespace vkllm
