// Unique<Destroy>: the one move-only owner of a Vulkan handle. The destroy function is part of
// the type, so the handle type and its parent (VkInstance, VkDevice or none) follow from it:
//   Unique<vkDestroyBuffer> buf{device, handle};   // calls vkDestroyBuffer(device, handle, nullptr)
#pragma once
#include <vulkan/vulkan.h>
#include <utility>

namespace vkllm {

template <auto Destroy>
struct DestroyTraits;

template <class Parent, class H, void(VKAPI_PTR* D)(Parent, H, const VkAllocationCallbacks*)>
struct DestroyTraits<D> {
  using Handle = H;
  struct Owner {
    Parent parent = VK_NULL_HANDLE;
    void destroy(H h) const { D(parent, h, nullptr); }
  };
};

template <class H, void(VKAPI_PTR* D)(H, const VkAllocationCallbacks*)>
struct DestroyTraits<D> {
  using Handle = H;
  struct Owner {
    void destroy(H h) const { D(h, nullptr); }
  };
};

template <auto Destroy>
class Unique {
  using Traits = DestroyTraits<Destroy>;
  using Owner = typename Traits::Owner;

 public:
  using Handle = typename Traits::Handle;

  Unique() = default;
  explicit Unique(Handle h) requires std::is_empty_v<Owner> : h_(h) {}
  template <class Parent>
  Unique(Parent parent, Handle h) : owner_{parent}, h_(h) {}
  Unique(Unique&& o) noexcept : owner_(o.owner_), h_(std::exchange(o.h_, VK_NULL_HANDLE)) {}
  Unique& operator=(Unique&& o) noexcept {
    if (this != &o) {
      reset();
      owner_ = o.owner_;
      h_ = std::exchange(o.h_, VK_NULL_HANDLE);
    }
    return *this;
  }
  Unique(const Unique&) = delete;
  Unique& operator=(const Unique&) = delete;
  ~Unique() { reset(); }

  Handle get() const { return h_; }
  explicit operator bool() const { return h_ != VK_NULL_HANDLE; }
  void reset() {
    if (h_ != VK_NULL_HANDLE) owner_.destroy(h_);
    h_ = VK_NULL_HANDLE;
  }

 private:
  [[no_unique_address]] Owner owner_{};
  Handle h_ = VK_NULL_HANDLE;
};

using UniqueInstance = Unique<vkDestroyInstance>;
using UniqueDevice = Unique<vkDestroyDevice>;
using UniqueBuffer = Unique<vkDestroyBuffer>;
using UniqueMemory = Unique<vkFreeMemory>;
using UniqueShaderModule = Unique<vkDestroyShaderModule>;
using UniqueDescriptorSetLayout = Unique<vkDestroyDescriptorSetLayout>;
using UniquePipelineLayout = Unique<vkDestroyPipelineLayout>;
using UniquePipeline = Unique<vkDestroyPipeline>;
using UniqueDescriptorPool = Unique<vkDestroyDescriptorPool>;
using UniqueCommandPool = Unique<vkDestroyCommandPool>;
using UniqueFence = Unique<vkDestroyFence>;
using UniqueQueryPool = Unique<vkDestroyQueryPool>;

}  // namespace vkllm
