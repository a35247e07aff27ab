// The rewrite of a SPIR-V module from SPV_NV_cooperative_matrix to SPV_KHR_cooperative_matrix.
// Debian 12's glslang compiles GL_NV_cooperative_matrix but not GL_KHR_cooperative_matrix, so the
// cooperative-matrix kernels are written in the NV dialect and the build derives their KHR form
// with this (shaders/coopmat_khr_tool.cpp; docs/decisions.md "Prefill on the matrix units").
// The two extensions differ only in spelling:
//   OpTypeCooperativeMatrixNV  component scope rows cols   -> ...KHR  component scope rows cols use
//   OpCooperativeMatrixLoadNV  pointer stride column_major -> ...KHR  pointer layout stride
//   OpCooperativeMatrixStoreNV pointer object stride column_major -> ...KHR pointer object layout stride
//   MulAdd and Length: the opcode; the capability and the extension: their names.
// Each matrix type's use (A, B or accumulator) is read off the multiply-adds it feeds: a type
// must be one multiply-add operand only, and every matrix type must feed one. The layouts
// become 32-bit integer constants (RowMajorKHR 0, ColumnMajorKHR 1), reused where the module
// has them. Anything the rewrite does not know how to carry over is an error, never a guess.
// Dependency-free (the standard library only): the build runs it as a host tool.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace vkllm::coopmat_khr {

// SPIR-V numbers both forms use (the SPIR-V registry's extension texts).
namespace op {
constexpr uint32_t kTypeNV = 5358, kLoadNV = 5359, kStoreNV = 5360, kMulAddNV = 5361, kLengthNV = 5362;
constexpr uint32_t kTypeKHR = 4456, kLoadKHR = 4457, kStoreKHR = 4458, kMulAddKHR = 4459, kLengthKHR = 4460;
}  // namespace op
constexpr uint32_t kCapabilityNV = 5357, kCapabilityKHR = 6022;
enum class Use : uint32_t { A = 0, B = 1, Accumulator = 2 };     // CooperativeMatrixUse
enum class Layout : uint32_t { RowMajor = 0, ColumnMajor = 1 };  // CooperativeMatrixLayout

struct RewriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The module in the KHR form; throws RewriteError for a module it cannot rewrite faithfully.
std::vector<uint32_t> nv_to_khr(std::span<const uint32_t> nv);

}  // namespace vkllm::coopmat_khr
