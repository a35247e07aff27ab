// DType: how a tensor's elements are stored, with ggml's type ids (GGUF files use them) and the
// block geometry of the quantised formats (byte layouts: docs/formats.md §2). Every id ggml
// defines is known here, so any GGUF file can be read and described; which types the kernels
// run is theirs to say (ops::weight_types()).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace vkllm {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
  Q2_0 = 42,
};

struct DTypeInfo {
  DType type;
  std::string_view name;  // lower case, as `vkllm-bench --type` spells it: "q4_k"
  uint32_t block_values;  // elements per block (1 for plain floats)
  uint32_t block_bytes;   // bytes per block
};

// Facts about a ggml type id; nullopt for ids vkllm does not know (the caller names the tensor).
std::optional<DTypeInfo> dtype_info(uint32_t ggml_id);
const DTypeInfo& info(DType t);
std::optional<DType> dtype_named(std::string_view name);  // "f16", "q8_0", ... (case-insensitive)

// Bytes of a row of n elements; n must be a multiple of the block size.
inline uint64_t row_bytes(DType t, uint64_t n) {
  const DTypeInfo& i = info(t);
  return n / i.block_values * i.block_bytes;
}

}  // namespace vkllm
