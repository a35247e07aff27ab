// Buffer: one VkBuffer with its own VkDeviceMemory, device-local or host-visible, never larger
// than the device allows. BufferView: a byte range of a buffer, what kernels bind.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "handle.h"

namespace vkllm {

class Context;

struct BufferView {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  bool overlaps(const BufferView& o) const {
    return buffer == o.buffer && offset < o.offset + o.size && o.offset < offset + size;
  }
};

enum class Memory {
  Device,  // for kernels; mapped directly on unified-memory devices, else filled through staging
  Host,    // host-visible (staging, readback, small per-step parameters)
};

class Buffer {
 public:
  Buffer(const Context& ctx, VkDeviceSize size, Memory memory, std::string name);
  Buffer(Buffer&&) noexcept = default;
  Buffer& operator=(Buffer&&) noexcept = default;

  VkBuffer handle() const { return buffer_.get(); }
  VkDeviceSize size() const { return size_; }
  const std::string& name() const { return name_; }
  // Host pointer to the contents, or nullptr when the memory cannot be mapped.
  std::byte* mapped() const { return mapped_; }

  BufferView view() const { return {handle(), 0, size_}; }
  BufferView view(VkDeviceSize offset, VkDeviceSize size) const;
  operator BufferView() const { return view(); }

  // Blocking copies between host memory and the buffer (through staging where not mapped).
  void upload(const void* src, VkDeviceSize bytes, VkDeviceSize offset = 0);
  void download(void* dst, VkDeviceSize bytes, VkDeviceSize offset = 0) const;
  template <class T>
  void upload(std::span<const T> src, VkDeviceSize offset = 0) {
    upload(src.data(), src.size_bytes(), offset);
  }
  template <class T>
  std::vector<T> download(size_t count, VkDeviceSize offset = 0) const {
    std::vector<T> out(count);
    download(out.data(), count * sizeof(T), offset);
    return out;
  }

 private:
  // This buffer's bytes in the context's memory accounting, given back when the buffer goes.
  class Charge {
   public:
    Charge() = default;
    Charge(const Context& ctx, VkDeviceSize bytes) : ctx_(&ctx), bytes_(bytes) {}
    Charge(Charge&& o) noexcept : ctx_(o.ctx_), bytes_(std::exchange(o.bytes_, 0)) {}
    Charge& operator=(Charge&& o) noexcept {
      if (this != &o) {
        release();
        ctx_ = o.ctx_, bytes_ = std::exchange(o.bytes_, 0);
      }
      return *this;
    }
    ~Charge() { release(); }

   private:
    void release();
    const Context* ctx_ = nullptr;
    VkDeviceSize bytes_ = 0;
  };

  const Context* ctx_;
  VkDeviceSize size_;
  std::string name_;
  Charge charge_;
  UniqueBuffer buffer_;
  UniqueMemory memory_;
  std::byte* mapped_ = nullptr;  // unmapped implicitly when memory_ is freed
};

// Fills many ranges of device buffers from host memory with one reusable staging buffer (or a
// memcpy where the destination is mapped). The staging buffer is created at the first copy that
// needs it, so on unified memory none is. Copies become visible to streams submitted after
// flush(), which the destructor also calls.
class Uploader {
 public:
  explicit Uploader(const Context& ctx, VkDeviceSize staging_bytes = 64ull << 20);
  ~Uploader();
  void write(const Buffer& dst, VkDeviceSize offset, const void* src, VkDeviceSize bytes);
  void flush();
  // Bytes of staging memory held (0 when every destination was mapped).
  VkDeviceSize staging_bytes() const { return staging_ ? staging_->size() : 0; }

 private:
  struct Copy {
    VkBuffer dst;
    VkBufferCopy region;
  };
  const Context& ctx_;
  VkDeviceSize staging_size_;
  std::optional<Buffer> staging_;
  VkDeviceSize used_ = 0;
  std::vector<Copy> copies_;
};

}  // namespace vkllm
