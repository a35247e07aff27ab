// The llama_ftype table (llama.cpp include/llama.h) and the general.file_type key.
#include "arch/file_type.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "arch/keys.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

constexpr std::string_view kFileType = "general.file_type";

constexpr FileType kFileTypes[] = {
    {0, "F32", DType::F32},        {1, "F16", DType::F16},          {2, "Q4_0", DType::Q4_0},
    {3, "Q4_1", DType::Q4_1},      {7, "Q8_0", DType::Q8_0},        {8, "Q5_0", DType::Q5_0},
    {9, "Q5_1", DType::Q5_1},      {10, "Q2_K", DType::Q2_K},       {11, "Q3_K_S", DType::Q3_K},
    {12, "Q3_K_M", DType::Q3_K},   {13, "Q3_K_L", DType::Q3_K},     {14, "Q4_K_S", DType::Q4_K},
    {15, "Q4_K_M", DType::Q4_K},   {16, "Q5_K_S", DType::Q5_K},     {17, "Q5_K_M", DType::Q5_K},
    {18, "Q6_K", DType::Q6_K},     {19, "IQ2_XXS", DType::IQ2_XXS}, {20, "IQ2_XS", DType::IQ2_XS},
    {21, "Q2_K_S", DType::Q2_K},   {22, "IQ3_XS", DType::IQ3_S},    {23, "IQ3_XXS", DType::IQ3_XXS},
    {24, "IQ1_S", DType::IQ1_S},   {25, "IQ4_NL", DType::IQ4_NL},   {26, "IQ3_S", DType::IQ3_S},
    {27, "IQ3_M", DType::IQ3_S},   {28, "IQ2_S", DType::IQ2_XS},    {29, "IQ2_M", DType::IQ2_S},
    {30, "IQ4_XS", DType::IQ4_XS}, {31, "IQ1_M", DType::IQ1_M},     {32, "BF16", DType::BF16},
    {36, "TQ1_0", DType::TQ1_0},   {37, "TQ2_0", DType::TQ2_0},     {38, "MXFP4_MOE", DType::MXFP4},
};

}  // namespace

std::optional<FileType> file_type(uint32_t id) {
  for (const FileType& t : kFileTypes)
    if (t.id == id) return t;
  return std::nullopt;
}

std::optional<FileType> file_type_named(std::string_view name) {
  for (const FileType& t : kFileTypes)
    if (std::equal(name.begin(), name.end(), t.name.begin(), t.name.end(),
                   [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; }))
      return t;
  return std::nullopt;
}

std::string file_type_name(uint32_t id) {
  std::optional<FileType> t = file_type(id);
  return t ? std::string(t->name) : fmt::format("file type {}", id);
}

std::optional<uint32_t> read_file_type(const GgufFile& f) {
  if (!f.find(kFileType)) return std::nullopt;
  return read_u32(f, std::string(kFileType));
}

void write_file_type(GgufWriter& w, uint32_t id) { w.add(kFileType, id); }

}  // namespace vkllm
