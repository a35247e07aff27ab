// Command recording: descriptor sets, automatic barriers from buffer-range hazards, submit,
// replay and timestamps.
#include "stream.h"

#include <fmt/format.h>
#include <chrono>

#include "check.h"
#include "context.h"

namespace vkllm {

namespace {

constexpr uint32_t kSetsPerPool = 256;
constexpr uint32_t kMaxBindings = 16;
constexpr uint32_t kMaxTimestamps = 16384;

bool any_overlap(const std::vector<BufferView>& pending, std::initializer_list<BufferView> views) {
  for (const BufferView& v : views)
    for (const BufferView& p : pending)
      if (v.overlaps(p)) return true;
  return false;
}

}  // namespace

Stream::Stream(const Context& ctx, bool profiling) : ctx_(ctx), profiling_(profiling) {
  VkDevice dev = ctx.device();
  VkCommandPoolCreateInfo pool{.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                               .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                               .queueFamilyIndex = ctx.caps().compute_queue_family};
  VkCommandPool p = VK_NULL_HANDLE;
  VK_CHECK(vkCreateCommandPool(dev, &pool, nullptr, &p));
  pool_ = UniqueCommandPool(dev, p);
  VkCommandBufferAllocateInfo alloc{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = p,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VK_CHECK(vkAllocateCommandBuffers(dev, &alloc, &cb_));
  VkFenceCreateInfo fence{.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence f = VK_NULL_HANDLE;
  VK_CHECK(vkCreateFence(dev, &fence, nullptr, &f));
  fence_ = UniqueFence(dev, f);
  if (profiling_) {
    ENSURE(ctx.caps().timestamp_valid_bits > 0, "this device's compute queue has no timestamps; cannot profile");
    VkQueryPoolCreateInfo q{.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                            .queryType = VK_QUERY_TYPE_TIMESTAMP,
                            .queryCount = kMaxTimestamps};
    VkQueryPool qp = VK_NULL_HANDLE;
    VK_CHECK(vkCreateQueryPool(dev, &q, nullptr, &qp));
    queries_ = UniqueQueryPool(dev, qp);
  }
}

Stream::Stream(const Context& ctx, Tracing) : ctx_(ctx), profiling_(false), tracing_(true) {}

Stream::~Stream() = default;  // submit_wait() always waits, so nothing is in flight here

VkCommandBuffer Stream::recording() {
  if (ended_) reset();
  if (!open_) {
    VkCommandBufferBeginInfo begin{.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK_CHECK(vkBeginCommandBuffer(cb_, &begin));
    open_ = true;
    if (profiling_) {
      vkCmdResetQueryPool(cb_, queries_.get(), 0, kMaxTimestamps);
      vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_.get(), 0);
    }
    // Work from earlier submissions (uploads, other streams) is ordered before this one.
    full_barrier();
  }
  return cb_;
}

void Stream::full_barrier() {
  VkMemoryBarrier b{.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                    .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                    .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
  constexpr VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(cb_, stages, stages, 0, 1, &b, 0, nullptr, 0, nullptr);
  pending_reads_.clear();
  pending_writes_.clear();
}

// A barrier is needed when this command reads what an earlier one wrote (RAW), or writes what an
// earlier one read or wrote (WAR, WAW), since the last barrier. Independent commands (say the
// Q, K and V projections of one input) run without one between them.
void Stream::hazard_barrier(std::initializer_list<BufferView> reads, std::initializer_list<BufferView> writes) {
  if (profiling_ || any_overlap(pending_writes_, reads) || any_overlap(pending_writes_, writes) ||
      any_overlap(pending_reads_, writes))
    full_barrier();
  pending_reads_.insert(pending_reads_.end(), reads.begin(), reads.end());
  pending_writes_.insert(pending_writes_.end(), writes.begin(), writes.end());
}

void Stream::check_binding(const BufferView& v, const char* kernel) const {
  const DeviceCaps& caps = ctx_.caps();
  ENSURE(v.buffer != VK_NULL_HANDLE && v.size > 0, fmt::format("{}: empty buffer binding", kernel));
  ENSURE(v.size <= caps.max_storage_buffer_range,
         fmt::format("{}: binding of {} bytes exceeds the device's maxStorageBufferRange ({})", kernel, v.size,
                     caps.max_storage_buffer_range));
  ENSURE(v.offset % caps.storage_offset_alignment == 0,
         fmt::format("{}: binding offset {} is not a multiple of minStorageBufferOffsetAlignment ({})", kernel,
                     v.offset, caps.storage_offset_alignment));
}

VkDescriptorSet Stream::allocate_set(VkDescriptorSetLayout layout) {
  if (descriptor_pools_.empty() || sets_in_last_pool_ == kSetsPerPool) {
    VkDescriptorPoolSize size{.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .descriptorCount = kSetsPerPool * kMaxBindings};
    VkDescriptorPoolCreateInfo info{.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                    .maxSets = kSetsPerPool,
                                    .poolSizeCount = 1,
                                    .pPoolSizes = &size};
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VK_CHECK(vkCreateDescriptorPool(ctx_.device(), &info, nullptr, &pool));
    descriptor_pools_.emplace_back(ctx_.device(), pool);
    sets_in_last_pool_ = 0;
  }
  VkDescriptorSetAllocateInfo alloc{.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = descriptor_pools_.back().get(),
                                    .descriptorSetCount = 1,
                                    .pSetLayouts = &layout};
  VkDescriptorSet set = VK_NULL_HANDLE;
  VK_CHECK(vkAllocateDescriptorSets(ctx_.device(), &alloc, &set));
  ++sets_in_last_pool_;
  return set;
}

void Stream::dispatch_raw(const spirv::Shader& shader, std::initializer_list<SpecConst> spec, Bindings bindings,
                          const void* push, uint32_t push_size, Groups groups) {
  uint32_t n = static_cast<uint32_t>(bindings.reads.size() + bindings.writes.size());
  ENSURE(n <= kMaxBindings, fmt::format("{}: {} bindings, at most {}", shader.name, n, kMaxBindings));
  const DeviceCaps& caps = ctx_.caps();
  ENSURE(groups.x <= caps.max_workgroup_count[0] && groups.y <= caps.max_workgroup_count[1] &&
             groups.z <= caps.max_workgroup_count[2],
         fmt::format("{}: {}x{}x{} workgroups exceed the device's limit {}x{}x{}", shader.name, groups.x, groups.y,
                     groups.z, caps.max_workgroup_count[0], caps.max_workgroup_count[1], caps.max_workgroup_count[2]));
  if (groups.x == 0 || groups.y == 0 || groups.z == 0) return;  // nothing to do (an empty batch)
  if (tracing_) {
    std::vector<BufferView> reads(bindings.reads);
    for (const BufferView& v : bindings.writes_read)
      if (v.buffer != VK_NULL_HANDLE) reads.push_back(v);
    trace_.push_back({shader.name, std::move(reads), bindings.writes});
    labels_.push_back(shader.name);
    return;
  }
  const Kernel& k = ctx_.kernels().get(shader, {spec.begin(), spec.size()}, n, push_size);
  VkCommandBuffer cb = recording();
  for (const BufferView& v : bindings.writes_read)
    if (v.buffer != VK_NULL_HANDLE) hazard_barrier({v}, {});
  hazard_barrier(bindings.reads, bindings.writes);

  VkDescriptorSet set = allocate_set(k.set_layout());
  VkDescriptorBufferInfo infos[kMaxBindings];
  VkWriteDescriptorSet writes[kMaxBindings];
  uint32_t i = 0;
  for (auto list : {bindings.reads, bindings.writes})
    for (const BufferView& v : list) {
      check_binding(v, shader.name);
      infos[i] = {.buffer = v.buffer, .offset = v.offset, .range = v.size};
      writes[i] = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                   .dstSet = set,
                   .dstBinding = i,
                   .descriptorCount = 1,
                   .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                   .pBufferInfo = &infos[i]};
      ++i;
    }
  vkUpdateDescriptorSets(ctx_.device(), n, writes, 0, nullptr);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline());
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout(), 0, 1, &set, 0, nullptr);
  if (push_size) vkCmdPushConstants(cb, k.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
  vkCmdDispatch(cb, groups.x, groups.y, groups.z);
  labels_.push_back(shader.name);
  if (profiling_) {
    ENSURE(labels_.size() < kMaxTimestamps, "too many dispatches in one profiled stream");
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_.get(),
                        static_cast<uint32_t>(labels_.size()));
  }
}

void Stream::copy(BufferView src, BufferView dst) {
  ENSURE(src.size == dst.size, "copy between ranges of different sizes");
  if (tracing_) return trace_.push_back({"copy", {src}, {dst}});
  VkCommandBuffer cb = recording();
  hazard_barrier({src}, {dst});
  VkBufferCopy region{.srcOffset = src.offset, .dstOffset = dst.offset, .size = src.size};
  vkCmdCopyBuffer(cb, src.buffer, dst.buffer, 1, &region);
}

void Stream::fill(BufferView dst, uint32_t value) {
  ENSURE(dst.size % 4 == 0 && dst.offset % 4 == 0, "fill needs a 4-byte aligned range");
  if (tracing_) return trace_.push_back({"fill", {}, {dst}});
  VkCommandBuffer cb = recording();
  hazard_barrier({}, {dst});
  vkCmdFillBuffer(cb, dst.buffer, dst.offset, dst.size, value);
}

void Stream::submit_wait() {
  ENSURE(!tracing_, "a tracing stream cannot be submitted");
  if (!open_ && !ended_) return;  // nothing recorded
  if (open_) {
    VkMemoryBarrier to_host{.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
    VK_CHECK(vkEndCommandBuffer(cb_));
    open_ = false;
    ended_ = true;
  }
  VkSubmitInfo submit{.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb_};
  VkFence fence = fence_.get();
  VK_CHECK(vkResetFences(ctx_.device(), 1, &fence));
  VK_CHECK(vkQueueSubmit(ctx_.queue(), 1, &submit, fence));
  auto t0 = std::chrono::steady_clock::now();
  ctx_.wait(fence);
  last_wait_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Stream::reset() {
  trace_.clear();
  if (!tracing_) VK_CHECK(vkResetCommandBuffer(cb_, 0));
  descriptor_pools_.clear();
  sets_in_last_pool_ = 0;
  labels_.clear();
  pending_reads_.clear();
  pending_writes_.clear();
  open_ = ended_ = false;
}

std::vector<KernelTime> Stream::timings() const {
  std::vector<KernelTime> out;
  if (!profiling_ || !ended_ || labels_.empty()) return out;
  std::vector<uint64_t> t(labels_.size() + 1);
  VK_CHECK(vkGetQueryPoolResults(ctx_.device(), queries_.get(), 0, static_cast<uint32_t>(t.size()),
                                 t.size() * sizeof(uint64_t), t.data(), sizeof(uint64_t),
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  uint32_t bits = ctx_.caps().timestamp_valid_bits;
  uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  double ns_per_tick = ctx_.caps().timestamp_period_ns;
  for (size_t i = 0; i < labels_.size(); ++i)
    out.push_back({labels_[i], static_cast<double>((t[i + 1] - t[i]) & mask) * ns_per_tick * 1e-6});
  return out;
}

}  // namespace vkllm
