// Instance (loader, validation layer, debug messenger), device survey and choice, and Context:
// the logical device, its compute queue and the kernel cache. The only place that reads the
// environment (VKLLM_VALIDATE, VKLLM_DEVICE, VKLLM_PROFILE, VKLLM_COOPMAT, ...). Created first,
// outlives everything.
// One thread drives a Context: KernelCache (built lazily on first use), run_now's one command pool
// and fence, and set_profile share state without locks. Only the allocation counters are atomic.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "caps.h"
#include "coopmat.h"
#include "handle.h"

namespace vkllm {

class KernelCache;

struct ContextOptions {
  std::optional<uint32_t> device;  // index in the device list; else $VKLLM_DEVICE; else the best one
  std::optional<bool> validation;  // else $VKLLM_VALIDATE=1; a missing layer is then an error
  // A profile name, with overrides ("nvidia:matvec_wg=256", ":attn_br=64": profile_overrides.h);
  // else $VKLLM_PROFILE; else chosen from the device's caps.
  std::string profile;
  // Most bytes of buffer memory held at once (0: no limit beyond the device's); else
  // $VKLLM_MEMORY_LIMIT ("512M", "2G", bytes). Past it an allocation fails as out of memory.
  uint64_t memory_limit = 0;
  // Treat the device as a discrete GPU even where its memory is unified (else
  // $VKLLM_DISCRETE_MEMORY=1): what the host writes for kernels goes through staging copies.
  // Lets lavapipe run the paths a discrete card takes.
  std::optional<bool> discrete_memory;
  // Cooperative matrices for prefill: "auto" (the default), "off", "nv" or "khr"; else
  // $VKLLM_COOPMAT (runtime/coopmat.h).
  std::string coopmat;
};

void destroy_debug_messenger(VkInstance instance, VkDebugUtilsMessengerEXT m, const VkAllocationCallbacks*);

class Instance {
 public:
  explicit Instance(bool validation);
  VkInstance get() const { return instance_.get(); }
  bool validation() const { return validation_; }
  // The validation layer's specVersion (0 without it).
  uint32_t layer_version() const { return layer_version_; }
  std::vector<VkPhysicalDevice> physical_devices() const;

 private:
  bool validation_;
  uint32_t layer_version_ = 0;
  UniqueInstance instance_;
  Unique<destroy_debug_messenger> messenger_;
};

// Validation-layer errors reported since the program started; tests fail on any.
uint64_t validation_error_count();
// Whether options (or the environment) ask for the validation layer.
bool validation_requested(const ContextOptions& options);
// $VKLLM_CHECK=1: model code should run its reference beside the GPU and report where they part
// (read here, as every environment variable).
bool check_requested();
// The device index and profile request options (or $VKLLM_DEVICE, $VKLLM_PROFILE) ask for, as a
// Context would read them; `vkllm devices` reports the choice run would make.
std::optional<uint32_t> requested_device(const ContextOptions& options);
std::string requested_profile(const ContextOptions& options);
uint64_t requested_memory_limit(const ContextOptions& options);  // 0: none
// The cooperative-matrix request options (or $VKLLM_COOPMAT) and the instance's layer make.
CoopRequest coop_request(const Instance& instance, const ContextOptions& options);
// The device memory this process may use: the largest device-local heap's budget (or size), or
// the memory limit where that is smaller (limited). What "fits" and the default context are
// judged against.
struct UsableMemory {
  uint64_t bytes = 0;
  bool limited = false;  // by the memory limit (VKLLM_MEMORY_LIMIT)
};
UsableMemory usable_memory(const DeviceCaps& caps, uint64_t memory_limit);

struct DeviceReport {
  uint32_t index = 0;
  DeviceCaps caps;
  Profile profile;
  std::vector<std::string> problems;  // empty: vkllm can run on it
  CoopPlan coopmat;                   // the prefill kernels' cooperative matrices ($VKLLM_COOPMAT)
};
std::vector<DeviceReport> survey_devices(const Instance& instance);
// The device used when none is requested: the first suitable one, discrete GPUs first.
std::optional<uint32_t> preferred_device(const std::vector<DeviceReport>& reports);

class Context {
 public:
  explicit Context(const ContextOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice device() const { return device_.get(); }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkQueue queue() const { return queue_; }
  uint32_t device_index() const { return index_; }
  const DeviceCaps& caps() const { return caps_; }
  const Profile& profile() const { return profile_; }
  // Tests run every profile on one device; results must not change.
  void set_profile(const Profile& p) { profile_ = fit_profile(p, caps_); }
  KernelCache& kernels() const { return *kernels_; }
  // The cooperative-matrix path this device was created for (its extension is enabled only when
  // the plan has one), and what the self-checks of its pipelines found so far (ops_matmul_coop.h).
  const CoopPlan& coopmat() const { return coop_plan_; }
  CoopChecks& coop_checks() const { return coop_checks_; }

  // Records with `record` into a one-off command buffer, submits it and waits.
  void run_now(const std::function<void(VkCommandBuffer)>& record) const;
  // Waits for a fence, at most VKLLM_GPU_TIMEOUT seconds (default 60 on a GPU, 600 on a CPU
  // device: lavapipe is that much slower); past it the device counts as lost (DeviceLost), so
  // that a hung driver cannot hang a server.
  void wait(VkFence fence) const;
  // Index of a memory type allowed by `type_bits` with all of `need`, preferring all of `want`.
  std::optional<uint32_t> memory_type(uint32_t type_bits, VkMemoryPropertyFlags need, VkMemoryPropertyFlags want) const;
  // Labels a handle for validation messages and GPU debuggers (no-op without debug utils).
  void set_name(VkObjectType type, uint64_t handle, const std::string& name) const;

  // Buffer memory held now, the most held at once, and the limit (0: none).
  uint64_t allocated_bytes() const { return allocated_.load(); }
  uint64_t peak_allocated_bytes() const { return peak_.load(); }
  uint64_t memory_limit() const { return memory_limit_; }
  // Counts an allocation; false (nothing counted) when it would pass the limit.
  bool charge(uint64_t bytes) const;
  void refund(uint64_t bytes) const { allocated_ -= bytes; }

 private:
  Instance instance_;
  uint32_t index_ = 0;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  DeviceCaps caps_;
  Profile profile_;
  CoopPlan coop_plan_;
  mutable CoopChecks coop_checks_;
  UniqueDevice device_;
  VkQueue queue_ = VK_NULL_HANDLE;
  UniqueCommandPool one_off_pool_;
  UniqueFence one_off_fence_;
  std::unique_ptr<KernelCache> kernels_;
  PFN_vkSetDebugUtilsObjectNameEXT set_name_ = nullptr;
  uint64_t memory_limit_ = 0;
  mutable std::atomic<uint64_t> allocated_{0}, peak_{0};
};

}  // namespace vkllm
