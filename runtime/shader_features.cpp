// Reads OpCapability from the embedded SPIR-V and maps each capability to a Vulkan feature.
#include "shader_features.h"

#include <fmt/format.h>
#include <map>
#include <optional>
#include <utility>

#include "caps.h"
#include "error.h"
#include "spirv.h"

namespace vkllm {

namespace {

constexpr uint32_t kMagic = 0x07230203, kOpCapability = 17, kOpMemoryModel = 14;

// SPIR-V capability numbers (the SPIR-V specification's Capability table) and what allows each.
struct Allowed {
  ShaderFeature feature;
  VkSubgroupFeatureFlags subgroup_op = 0;
};
std::optional<Allowed> allowed_by(uint32_t capability) {
  switch (capability) {
    case 9:  // Float16
      return Allowed{ShaderFeature::Float16};
    case 11:  // Int64
      return Allowed{ShaderFeature::Int64};
    case 22:  // Int16
      return Allowed{ShaderFeature::Int16};
    case 39:  // Int8
      return Allowed{ShaderFeature::Int8};
    case 61:  // GroupNonUniform
      return Allowed{ShaderFeature::Subgroup, VK_SUBGROUP_FEATURE_BASIC_BIT};
    case 62:
      return Allowed{ShaderFeature::Subgroup, VK_SUBGROUP_FEATURE_VOTE_BIT};
    case 63:
      return Allowed{ShaderFeature::Subgroup, VK_SUBGROUP_FEATURE_ARITHMETIC_BIT};
    case 64:
      return Allowed{ShaderFeature::Subgroup, VK_SUBGROUP_FEATURE_BALLOT_BIT};
    case 65:
      return Allowed{ShaderFeature::Subgroup, VK_SUBGROUP_FEATURE_SHUFFLE_BIT};
    case 66:
      return Allowed{ShaderFeature::Subgroup, VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT};
    case 67:
      return Allowed{ShaderFeature::Subgroup, VK_SUBGROUP_FEATURE_CLUSTERED_BIT};
    case 68:
      return Allowed{ShaderFeature::Subgroup, VK_SUBGROUP_FEATURE_QUAD_BIT};
    case 4433:  // StorageBuffer16BitAccess
      return Allowed{ShaderFeature::Storage16};
    case 4448:  // StorageBuffer8BitAccess
      return Allowed{ShaderFeature::Storage8};
    case 6016:  // DotProductInputAll
    case 6017:  // DotProductInput4x8Bit
    case 6018:  // DotProductInput4x8BitPacked
    case 6019:  // DotProduct
      return Allowed{ShaderFeature::DotProduct};
    default:
      return std::nullopt;
  }
}

ShaderRequirements read_requirements() {
  ShaderRequirements r;
  std::map<std::pair<ShaderFeature, VkSubgroupFeatureFlags>, std::vector<const char*>> uses;
  for (const spirv::Shader* s : spirv::all) {
    for (uint32_t cap : spirv_capabilities(s->code)) {
      if (cap == 1) continue;                     // Shader: every Vulkan compute module
      if (cap == kSpirvDenormPreserve) continue;  // asked where the device has it, else removed
      std::optional<Allowed> a = allowed_by(cap);
      if (!a) {
        r.unknown.push_back(fmt::format("{}: capability {}", s->name, cap));
        continue;
      }
      uses[{a->feature, a->subgroup_op}].push_back(s->name);
    }
  }
  for (auto& [key, shaders] : uses)
    r.uses.push_back({.feature = key.first, .subgroup_op = key.second, .shaders = std::move(shaders)});
  return r;
}

}  // namespace

std::vector<uint32_t> spirv_capabilities(std::span<const uint32_t> code) {
  ENSURE(code.size() >= 5 && code[0] == kMagic, "not a SPIR-V module");
  std::vector<uint32_t> caps;
  for (size_t i = 5; i < code.size();) {
    uint32_t words = code[i] >> 16, op = code[i] & 0xffff;
    ENSURE(words >= 1 && i + words <= code.size(), "a SPIR-V module with a malformed instruction");
    if (op == kOpMemoryModel) break;  // capabilities all come before it
    if (op == kOpCapability && words == 2) caps.push_back(code[i + 1]);
    i += words;
  }
  return caps;
}

namespace {

constexpr uint32_t kOpExecutionMode = 16;

bool is_denorm_preserve(std::span<const uint32_t> code, size_t i) {
  uint32_t words = code[i] >> 16, op = code[i] & 0xffff;
  return (op == kOpCapability && words == 2 && code[i + 1] == kSpirvDenormPreserve) ||
         (op == kOpExecutionMode && words >= 3 && code[i + 2] == kSpirvModeDenormPreserve);
}

// Calls `each(i)` for the index of every instruction before the first function.
template <class F>
void for_each_preamble_instruction(std::span<const uint32_t> code, F each) {
  constexpr uint32_t kOpFunction = 54;
  ENSURE(code.size() >= 5 && code[0] == kMagic, "not a SPIR-V module");
  for (size_t i = 5; i < code.size();) {
    uint32_t words = code[i] >> 16, op = code[i] & 0xffff;
    ENSURE(words >= 1 && i + words <= code.size(), "a SPIR-V module with a malformed instruction");
    if (op == kOpFunction) break;
    each(i);
    i += words;
  }
}

}  // namespace

bool declares_denorm_preserve(std::span<const uint32_t> code) {
  bool found = false;
  for_each_preamble_instruction(code, [&](size_t i) { found = found || is_denorm_preserve(code, i); });
  return found;
}

std::vector<uint32_t> without_denorm_preserve(std::span<const uint32_t> code) {
  std::vector<uint32_t> out(code.begin(), code.begin() + 5);
  size_t end = 5;
  for_each_preamble_instruction(code, [&](size_t i) {
    end = i + (code[i] >> 16);
    if (!is_denorm_preserve(code, i)) out.insert(out.end(), code.begin() + i, code.begin() + end);
  });
  out.insert(out.end(), code.begin() + end, code.end());
  return out;
}

const ShaderRequirements& shader_requirements() {
  static const ShaderRequirements r = read_requirements();
  return r;
}

std::string feature_name(const FeatureUse& use) {
  switch (use.feature) {
    case ShaderFeature::Storage16:
      return "storageBuffer16BitAccess";
    case ShaderFeature::Storage8:
      return "storageBuffer8BitAccess";
    case ShaderFeature::Float16:
      return "shaderFloat16";
    case ShaderFeature::Int8:
      return "shaderInt8";
    case ShaderFeature::Int16:
      return "shaderInt16";
    case ShaderFeature::Int64:
      return "shaderInt64";
    case ShaderFeature::DotProduct:
      return "shaderIntegerDotProduct";
    case ShaderFeature::Subgroup:
      break;
  }
  std::vector<std::string> names = subgroup_op_names(use.subgroup_op);
  return fmt::format("subgroup {} in compute shaders", names.empty() ? "?" : names.front());
}

bool device_has(const DeviceCaps& c, const FeatureUse& use) {
  switch (use.feature) {
    case ShaderFeature::Storage16:
      return c.storage16;
    case ShaderFeature::Storage8:
      return c.storage8;
    case ShaderFeature::Float16:
      return c.fp16;
    case ShaderFeature::Int8:
      return c.int8;
    case ShaderFeature::Int16:
      return c.int16;
    case ShaderFeature::Int64:
      return c.int64;
    case ShaderFeature::DotProduct:
      return c.integer_dot_product;
    case ShaderFeature::Subgroup:
      return (c.subgroup_ops & use.subgroup_op) == use.subgroup_op;
  }
  return false;
}

}  // namespace vkllm
