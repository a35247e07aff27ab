// The table of storage types.
#include "dtype.h"

#include <algorithm>
#include <cctype>

#include "error.h"

namespace vkllm {

namespace {

// Geometry from ggml's type traits (gguf-py's GGML_QUANT_SIZES; docs/formats.md §2).
constexpr DTypeInfo kTypes[] = {
    {DType::F32, "f32", 1, 4},           {DType::F16, "f16", 1, 2},
    {DType::BF16, "bf16", 1, 2},         {DType::Q4_0, "q4_0", 32, 18},
    {DType::Q4_1, "q4_1", 32, 20},       {DType::Q5_0, "q5_0", 32, 22},
    {DType::Q5_1, "q5_1", 32, 24},       {DType::Q8_0, "q8_0", 32, 34},
    {DType::Q8_1, "q8_1", 32, 36},       {DType::Q2_K, "q2_k", 256, 84},
    {DType::Q3_K, "q3_k", 256, 110},     {DType::Q4_K, "q4_k", 256, 144},
    {DType::Q5_K, "q5_k", 256, 176},     {DType::Q6_K, "q6_k", 256, 210},
    {DType::Q8_K, "q8_k", 256, 292},     {DType::IQ2_XXS, "iq2_xxs", 256, 66},
    {DType::IQ2_XS, "iq2_xs", 256, 74},  {DType::IQ3_XXS, "iq3_xxs", 256, 98},
    {DType::IQ1_S, "iq1_s", 256, 50},    {DType::IQ4_NL, "iq4_nl", 32, 18},
    {DType::IQ3_S, "iq3_s", 256, 110},   {DType::IQ2_S, "iq2_s", 256, 82},
    {DType::IQ4_XS, "iq4_xs", 256, 136}, {DType::I8, "i8", 1, 1},
    {DType::I16, "i16", 1, 2},           {DType::I32, "i32", 1, 4},
    {DType::I64, "i64", 1, 8},           {DType::F64, "f64", 1, 8},
    {DType::IQ1_M, "iq1_m", 256, 56},    {DType::TQ1_0, "tq1_0", 256, 54},
    {DType::TQ2_0, "tq2_0", 256, 66},    {DType::MXFP4, "mxfp4", 32, 17},
    {DType::NVFP4, "nvfp4", 64, 36},     {DType::Q1_0, "q1_0", 128, 18},
    {DType::Q2_0, "q2_0", 64, 18},
};
}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t ggml_id) {
  for (const DTypeInfo& i : kTypes)
    if (static_cast<uint32_t>(i.type) == ggml_id) return i;
  return std::nullopt;
}

const DTypeInfo& info(DType t) {
  for (const DTypeInfo& i : kTypes)
    if (i.type == t) return i;
  throw Error("unknown tensor type id " + std::to_string(static_cast<uint32_t>(t)));
}

std::optional<DType> dtype_named(std::string_view name) {
  for (const DTypeInfo& i : kTypes)
    if (std::equal(name.begin(), name.end(), i.name.begin(), i.name.end(),
                   [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }))
      return i.type;
  return std::nullopt;
}

}  // namespace vkllm
