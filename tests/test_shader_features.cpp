// The capability contract: what vkllm requires of a device is read from its own SPIR-V
// (shader_features.h), every capability there is one vkllm knows how to enable, and a device
// lacking one is refused naming the feature and the kernels that declare it.
#include <algorithm>
#include <vector>

#include "catch.h"
#include "device_descriptions.h"
#include "error.h"
#include "shader_features.h"
#include "spirv.h"

using namespace vkllm;

namespace {

// A module of the header and the given instructions (word count in the high half).
std::vector<uint32_t> module_of(std::vector<uint32_t> body) {
  std::vector<uint32_t> m = {0x07230203, 0x00010500, 0, 100, 0};
  m.insert(m.end(), body.begin(), body.end());
  return m;
}

bool declares(const spirv::Shader& s, uint32_t cap) {
  std::vector<uint32_t> caps = spirv_capabilities(s.code);
  return std::find(caps.begin(), caps.end(), cap) != caps.end();
}

}  // namespace

TEST_CASE("capabilities are read from a module's preamble", "[caps][spirv]") {
  // OpCapability Shader, OpCapability StorageBuffer8BitAccess, OpMemoryModel, then a word that
  // would read as OpCapability Int64 if the scan went past the preamble.
  auto m = module_of({(2u << 16) | 17, 1, (2u << 16) | 17, 4448, (3u << 16) | 14, 0, 1, (2u << 16) | 17, 11});
  CHECK(spirv_capabilities(m) == std::vector<uint32_t>{1, 4448});
  CHECK_THROWS_AS(spirv_capabilities(std::vector<uint32_t>{1, 2, 3}), Error);
  auto truncated = module_of({(9u << 16) | 17, 1});
  CHECK_THROWS_AS(spirv_capabilities(truncated), Error);
  auto zero = module_of({0u, 1});
  CHECK_THROWS_AS(spirv_capabilities(zero), Error);
}

TEST_CASE("every capability the kernels declare maps to a feature vkllm enables", "[caps][spirv]") {
  const ShaderRequirements& r = shader_requirements();
  INFO((r.unknown.empty() ? std::string() : r.unknown.front()));
  CHECK(r.unknown.empty());
  // Each requirement is backed by the modules it names; nothing is required that none declares.
  for (const FeatureUse& use : r.uses) {
    INFO(feature_name(use));
    REQUIRE(!use.shaders.empty());
  }
  // Spot checks against what the shaders are known to use: f16 KV caches need 16-bit storage,
  // MXFP4's 17-byte blocks are read bytewise, and reductions use subgroup arithmetic.
  auto find = [&](ShaderFeature f, VkSubgroupFeatureFlags op = 0) {
    return std::find_if(r.uses.begin(), r.uses.end(),
                        [&](const FeatureUse& u) { return u.feature == f && u.subgroup_op == op; });
  };
  REQUIRE(find(ShaderFeature::Storage16) != r.uses.end());
  REQUIRE(find(ShaderFeature::Storage8) != r.uses.end());
  REQUIRE(find(ShaderFeature::Subgroup, VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != r.uses.end());
  for (const char* name : find(ShaderFeature::Storage8)->shaders) {
    const spirv::Shader* s = *std::find_if(spirv::all.begin(), spirv::all.end(),
                                           [&](const spirv::Shader* x) { return std::string(x->name) == name; });
    CHECK(declares(*s, 4448));
  }
  CHECK(declares(spirv::matvec_mxfp4, 4448));
  CHECK(!declares(spirv::matvec_q4_0, 4448));
  // What no kernel declares is not required, so a device without it runs vkllm.
  if (find(ShaderFeature::Float16) == r.uses.end()) {
    DeviceCaps c = test::nvidia_device();
    c.fp16 = c.int8 = false;
    CHECK(c.problems().empty());
  }
}

TEST_CASE("a device lacking a declared feature is refused, naming the kernels", "[caps][spirv]") {
  DeviceCaps c = test::intel_device();
  REQUIRE(c.problems().empty());
  c.storage8 = false;
  auto why = c.problems();
  REQUIRE(why.size() == 1);
  CHECK(why[0].starts_with("no storageBuffer8BitAccess (declared by "));
  CHECK(why[0].find("mxfp4") != std::string::npos);
  c = test::intel_device();
  c.subgroup_ops = VK_SUBGROUP_FEATURE_BASIC_BIT;
  why = c.problems();
  REQUIRE(why.size() == 1);
  CHECK(why[0].starts_with("no subgroup arithmetic in compute shaders (declared by "));
}
