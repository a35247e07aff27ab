// What the device must offer, read from the SPIR-V itself: each module's OpCapability list, mapped
// to the Vulkan features that allow it. vkllm requires and enables exactly the union over its
// embedded shaders, so the contract cannot drift from the kernels (a shader that starts using
// f16 arithmetic makes shaderFloat16 required by itself).
#pragma once
#include <vulkan/vulkan.h>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vkllm {

struct DeviceCaps;

enum class ShaderFeature {
  Storage16,   // storageBuffer16BitAccess
  Storage8,    // storageBuffer8BitAccess
  Float16,     // shaderFloat16
  Int8,        // shaderInt8
  Int16,       // shaderInt16
  Int64,       // shaderInt64
  DotProduct,  // shaderIntegerDotProduct
  Subgroup,    // a subgroup operation class (subgroup_op: its VkSubgroupFeatureFlagBits) in compute
};

struct FeatureUse {
  ShaderFeature feature;
  VkSubgroupFeatureFlags subgroup_op = 0;  // ShaderFeature::Subgroup only
  std::vector<const char*> shaders;        // the shaders declaring it, in name order
};

struct ShaderRequirements {
  std::vector<FeatureUse> uses;  // one per feature, in ShaderFeature order
  // Capabilities vkllm does not know how to enable: "shader: capability N". A test keeps it empty.
  std::vector<std::string> unknown;
};

// The capabilities a SPIR-V module declares (OpCapability operands); throws Error on a word
// stream that is not SPIR-V.
std::vector<uint32_t> spirv_capabilities(std::span<const uint32_t> code);

// SPIR-V's DenormPreserve capability and execution mode (float controls, core in SPIR-V 1.4): a
// kernel asks to keep f32 subnormals with it; it is a property (shaderDenormPreserveFloat32), not
// a feature, so a device without it runs the kernel with the mode taken out (without_denorm_preserve)
// and may flush subnormals to zero.
constexpr uint32_t kSpirvDenormPreserve = 4464, kSpirvModeDenormPreserve = 4459;
// Whether the module declares DenormPreserve for any width.
bool declares_denorm_preserve(std::span<const uint32_t> code);
// The module with its DenormPreserve capability and execution modes removed (word for word the
// rest); throws Error on a word stream that is not SPIR-V.
std::vector<uint32_t> without_denorm_preserve(std::span<const uint32_t> code);

// The union over every embedded shader (spirv::all), computed once.
const ShaderRequirements& shader_requirements();

// The feature's Vulkan name ("storageBuffer8BitAccess", "subgroup arithmetic").
std::string feature_name(const FeatureUse& use);
bool device_has(const DeviceCaps& caps, const FeatureUse& use);

}  // namespace vkllm
