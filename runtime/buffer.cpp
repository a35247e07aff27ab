// Buffer allocation within the device's limits, and staged uploads and downloads.
#include "buffer.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstring>

#include "check.h"
#include "context.h"

namespace vkllm {

namespace {

constexpr VkDeviceSize kStagingChunk = 64ull << 20;

std::string mib(VkDeviceSize bytes) { return fmt::format("{:.1f} MiB", bytes / 1048576.0); }

}  // namespace

Buffer::Buffer(const Context& ctx, VkDeviceSize size, Memory memory, std::string name)
    : ctx_(&ctx), size_(size), name_(std::move(name)) {
  const DeviceCaps& caps = ctx.caps();
  ENSURE(size > 0, fmt::format("buffer '{}' has size 0", name_));
  ENSURE(size <= caps.max_memory_allocation && size <= caps.max_buffer_size,
         fmt::format("buffer '{}' of {} exceeds the device's largest allocation ({})", name_, mib(size),
                     mib(std::min(caps.max_memory_allocation, caps.max_buffer_size))));
  VkDevice dev = ctx.device();
  VkBufferCreateInfo info{
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = size,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkBuffer buffer = VK_NULL_HANDLE;
  VK_CHECK(vkCreateBuffer(dev, &info, nullptr, &buffer));
  buffer_ = UniqueBuffer(dev, buffer);
  ctx.set_name(VK_OBJECT_TYPE_BUFFER, reinterpret_cast<uint64_t>(buffer), name_);

  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, buffer, &req);
  constexpr VkMemoryPropertyFlags kLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  constexpr VkMemoryPropertyFlags kMappable =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  std::optional<uint32_t> type;
  if (memory == Memory::Host)
    type = ctx.memory_type(req.memoryTypeBits, kMappable, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  else if (caps.uma)  // one memory: map it and skip staging
    type = ctx.memory_type(req.memoryTypeBits, kLocal | kMappable, 0);
  if (!type) type = ctx.memory_type(req.memoryTypeBits, kLocal, 0);
  ENSURE(type, fmt::format("no memory type can hold buffer '{}'", name_));

  VkMemoryAllocateInfo alloc{
      .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size, .memoryTypeIndex = *type};
  ENSURE(ctx.charge(req.size), fmt::format("out of GPU memory allocating {} for '{}' ({} in use, memory limit {})",
                                           mib(size), name_, mib(ctx.allocated_bytes()), mib(ctx.memory_limit())));
  charge_ = Charge(ctx, req.size);
  VkDeviceMemory mem = VK_NULL_HANDLE;
  VkResult r = vkAllocateMemory(dev, &alloc, nullptr, &mem);
  ENSURE(r != VK_ERROR_OUT_OF_DEVICE_MEMORY && r != VK_ERROR_OUT_OF_HOST_MEMORY,
         fmt::format("out of GPU memory allocating {} for '{}' ({} in use; device-local memory: {})", mib(size), name_,
                     mib(ctx.allocated_bytes() - req.size), mib(caps.device_local_bytes())));
  VK_CHECK(r);
  memory_ = UniqueMemory(dev, mem);
  VK_CHECK(vkBindBufferMemory(dev, buffer, mem, 0));

  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(ctx.physical_device(), &mp);
  if ((mp.memoryTypes[*type].propertyFlags & kMappable) == kMappable) {
    void* p = nullptr;
    VK_CHECK(vkMapMemory(dev, mem, 0, VK_WHOLE_SIZE, 0, &p));
    mapped_ = static_cast<std::byte*>(p);
  }
}

void Buffer::Charge::release() {
  if (bytes_) ctx_->refund(std::exchange(bytes_, 0));
}

BufferView Buffer::view(VkDeviceSize offset, VkDeviceSize size) const {
  ENSURE(offset <= size_ && size <= size_ - offset,
         fmt::format("view [{}, +{}) is outside buffer '{}' of {} bytes", offset, size, name_, size_));
  return {handle(), offset, size};
}

void Buffer::upload(const void* src, VkDeviceSize bytes, VkDeviceSize offset) {
  view(offset, bytes);  // range check
  if (mapped_) {
    std::memcpy(mapped_ + offset, src, bytes);
    return;
  }
  Buffer staging(*ctx_, std::min(bytes, kStagingChunk), Memory::Host, name_ + " (staging)");
  for (VkDeviceSize done = 0; done < bytes; done += kStagingChunk) {
    VkDeviceSize n = std::min(kStagingChunk, bytes - done);
    std::memcpy(staging.mapped(), static_cast<const std::byte*>(src) + done, n);
    ctx_->run_now([&](VkCommandBuffer cb) {
      VkBufferCopy region{.srcOffset = 0, .dstOffset = offset + done, .size = n};
      vkCmdCopyBuffer(cb, staging.handle(), handle(), 1, &region);
    });
  }
}

void Buffer::download(void* dst, VkDeviceSize bytes, VkDeviceSize offset) const {
  view(offset, bytes);
  if (mapped_) {
    std::memcpy(dst, mapped_ + offset, bytes);
    return;
  }
  Buffer staging(*ctx_, std::min(bytes, kStagingChunk), Memory::Host, name_ + " (readback)");
  for (VkDeviceSize done = 0; done < bytes; done += kStagingChunk) {
    VkDeviceSize n = std::min(kStagingChunk, bytes - done);
    ctx_->run_now([&](VkCommandBuffer cb) {
      VkBufferCopy region{.srcOffset = offset + done, .dstOffset = 0, .size = n};
      vkCmdCopyBuffer(cb, handle(), staging.handle(), 1, &region);
      VkMemoryBarrier to_host{.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr,
                           0, nullptr);
    });
    std::memcpy(static_cast<std::byte*>(dst) + done, staging.mapped(), n);
  }
}

// --- uploader

Uploader::Uploader(const Context& ctx, VkDeviceSize staging_bytes)
    : ctx_(ctx), staging_size_(std::max<VkDeviceSize>(staging_bytes, 1)) {}

Uploader::~Uploader() {
  try {
    flush();
  } catch (...) {  // destructors never throw; a failed upload was reported by flush() if called
  }
}

void Uploader::write(const Buffer& dst, VkDeviceSize offset, const void* src, VkDeviceSize bytes) {
  dst.view(offset, bytes);  // range check
  if (dst.mapped()) {
    std::memcpy(dst.mapped() + offset, src, bytes);
    return;
  }
  const std::byte* p = static_cast<const std::byte*>(src);
  if (!staging_ && bytes > 0) staging_.emplace(ctx_, staging_size_, Memory::Host, "upload staging");
  while (bytes > 0) {
    if (used_ == staging_->size()) flush();
    VkDeviceSize n = std::min(bytes, staging_->size() - used_);
    std::memcpy(staging_->mapped() + used_, p, n);
    copies_.push_back({dst.handle(), {.srcOffset = used_, .dstOffset = offset, .size = n}});
    used_ += n, offset += n, p += n, bytes -= n;
  }
}

void Uploader::flush() {
  if (copies_.empty()) return;
  ctx_.run_now([&](VkCommandBuffer cb) {
    for (const Copy& c : copies_) vkCmdCopyBuffer(cb, staging_->handle(), c.dst, 1, &c.region);
  });
  copies_.clear();
  used_ = 0;
}

}  // namespace vkllm
