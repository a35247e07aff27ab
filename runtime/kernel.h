// Kernel: one compute pipeline built from embedded SPIR-V and specialization constants, with
// its descriptor-set layout (N storage buffers at set 0, bindings 0..N-1) and push range.
// KernelCache builds each (shader, constants, bindings, push size) once, on first use.
#pragma once
#include <bit>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "handle.h"
#include "spirv.h"

namespace vkllm {

class Context;

// One specialization constant: constant_id i is the i-th value given. All are 32-bit.
struct SpecConst {
  uint32_t bits;
  SpecConst(uint32_t v) : bits(v) {}
  SpecConst(int32_t v) : bits(static_cast<uint32_t>(v)) {}
  SpecConst(float v) : bits(std::bit_cast<uint32_t>(v)) {}
  SpecConst(bool v) : bits(v ? 1u : 0u) {}
};

struct KernelKey {
  const uint32_t* code;
  std::vector<uint32_t> spec;
  uint32_t n_buffers;
  uint32_t push_size;
  uint32_t subgroup_size = 0;  // required of the pipeline (VK_EXT_subgroup_size_control); 0: the driver's
  auto operator<=>(const KernelKey&) const = default;
};

class Kernel {
 public:
  Kernel(const Context& ctx, const spirv::Shader& shader, const KernelKey& key);
  const char* name() const { return name_; }
  VkPipeline pipeline() const { return pipeline_.get(); }
  VkPipelineLayout layout() const { return layout_.get(); }
  VkDescriptorSetLayout set_layout() const { return set_layout_.get(); }
  uint32_t n_buffers() const { return n_buffers_; }
  uint32_t push_size() const { return push_size_; }

 private:
  const char* name_;
  uint32_t n_buffers_;
  uint32_t push_size_;
  UniqueDescriptorSetLayout set_layout_;
  UniquePipelineLayout layout_;
  UniquePipeline pipeline_;
};

class KernelCache {
 public:
  explicit KernelCache(const Context& ctx) : ctx_(ctx) {}
  const Kernel& get(const spirv::Shader& shader, std::span<const SpecConst> spec, uint32_t n_buffers,
                    uint32_t push_size);
  size_t size() const { return kernels_.size(); }
  // Seconds spent creating pipelines so far: the driver compiling kernels for this device, which
  // a first run pays and its prompt speed should not be charged with (lavapipe compiles the rest
  // at a kernel's first dispatch).
  double compile_seconds() const { return compile_seconds_; }

 private:
  const Context& ctx_;
  double compile_seconds_ = 0;
  std::map<KernelKey, std::unique_ptr<Kernel>> kernels_;
};

}  // namespace vkllm
