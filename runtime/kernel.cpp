// Pipeline creation from embedded SPIR-V; the lazy cache of built kernels.
#include "kernel.h"

#include <chrono>

#include "check.h"
#include "context.h"
#include "shader_features.h"

namespace vkllm {

namespace {

// The subgroup size a pipeline requires: the one its profile was planned for, where the device
// allows requiring it for a workgroup of `wg` threads (constant_id 0 is every kernel's
// local_size_x); else none, and the driver's default applies (path_notes() reports the change).
uint32_t required_subgroup_size(const Context& ctx, uint32_t wg) {
  const DeviceCaps& caps = ctx.caps();
  uint32_t size = ctx.profile().run_subgroup_size;
  if (ctx.profile().subgroup_size == 0 || size != ctx.profile().subgroup_size) return 0;
  if (!caps.can_require_subgroup_size(size) || uint64_t(caps.max_workgroup_subgroups) * size < wg) return 0;
  return size;
}

}  // namespace

Kernel::Kernel(const Context& ctx, const spirv::Shader& shader, const KernelKey& key)
    : name_(shader.name), n_buffers_(key.n_buffers), push_size_(key.push_size) {
  VkDevice dev = ctx.device();
  std::vector<VkDescriptorSetLayoutBinding> bindings(n_buffers_);
  for (uint32_t i = 0; i < n_buffers_; ++i)
    bindings[i] = {.binding = i,
                   .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                   .descriptorCount = 1,
                   .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo set_info{.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = n_buffers_,
                                           .pBindings = bindings.data()};
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VK_CHECK(vkCreateDescriptorSetLayout(dev, &set_info, nullptr, &set_layout));
  set_layout_ = UniqueDescriptorSetLayout(dev, set_layout);

  VkPushConstantRange range{.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = push_size_};
  VkPipelineLayoutCreateInfo layout_info{.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                         .setLayoutCount = 1,
                                         .pSetLayouts = &set_layout,
                                         .pushConstantRangeCount = push_size_ ? 1u : 0u,
                                         .pPushConstantRanges = &range};
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VK_CHECK(vkCreatePipelineLayout(dev, &layout_info, nullptr, &layout));
  layout_ = UniquePipelineLayout(dev, layout);

  // A kernel asking to keep f32 subnormals gets the request only where the device can honour it.
  std::span<const uint32_t> code = shader.code;
  std::vector<uint32_t> stripped;
  if (!ctx.caps().denorm_preserve_f32 && declares_denorm_preserve(code))
    code = stripped = without_denorm_preserve(code);
  VkShaderModuleCreateInfo module_info{
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = code.size_bytes(), .pCode = code.data()};
  VkShaderModule module = VK_NULL_HANDLE;
  VK_CHECK(vkCreateShaderModule(dev, &module_info, nullptr, &module));
  UniqueShaderModule owned_module(dev, module);  // only needed until the pipeline exists

  std::vector<VkSpecializationMapEntry> entries(key.spec.size());
  for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {.constantID = i, .offset = i * 4, .size = 4};
  VkSpecializationInfo spec{.mapEntryCount = static_cast<uint32_t>(entries.size()),
                            .pMapEntries = entries.data(),
                            .dataSize = key.spec.size() * 4,
                            .pData = key.spec.data()};
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo required{
      .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
      .requiredSubgroupSize = key.subgroup_size};
  VkComputePipelineCreateInfo info{.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                   .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                             .pNext = key.subgroup_size ? &required : nullptr,
                                             .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                             .module = module,
                                             .pName = "main",
                                             .pSpecializationInfo = &spec},
                                   .layout = layout};
  VkPipeline pipeline = VK_NULL_HANDLE;
  VK_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline));
  pipeline_ = UniquePipeline(dev, pipeline);
  ctx.set_name(VK_OBJECT_TYPE_PIPELINE, reinterpret_cast<uint64_t>(pipeline), name_);
}

const Kernel& KernelCache::get(const spirv::Shader& shader, std::span<const SpecConst> spec, uint32_t n_buffers,
                               uint32_t push_size) {
  KernelKey key{.code = shader.code.data(), .n_buffers = n_buffers, .push_size = push_size};
  for (const SpecConst& s : spec) key.spec.push_back(s.bits);
  key.subgroup_size = required_subgroup_size(ctx_, key.spec.empty() ? 1 : key.spec[0]);
  auto it = kernels_.find(key);
  if (it == kernels_.end()) {
    auto t0 = std::chrono::steady_clock::now();
    it = kernels_.emplace(key, std::make_unique<Kernel>(ctx_, shader, key)).first;
    compile_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return *it->second;
}

}  // namespace vkllm
