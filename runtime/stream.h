// Stream: records kernel dispatches into one command buffer, inserts the barriers their buffer
// ranges need, submits and waits. A recorded stream can be submitted again (graph replay).
// With profiling on, each dispatch gets a GPU timestamp so time per kernel can be reported.
#pragma once
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "buffer.h"
#include "handle.h"
#include "kernel.h"

namespace vkllm {

class Context;

struct Groups {
  uint32_t x = 1, y = 1, z = 1;
};

inline uint32_t ceil_div(uint64_t n, uint64_t d) { return static_cast<uint32_t>((n + d - 1) / d); }

// n workgroups laid out as a 2-D grid (x at most 65535, the guaranteed limit); kernels index
// them by group_index() (shaders/grid.glsl) and skip ids >= n.
inline Groups grid(uint64_t n) {
  if (n <= 65535) return {static_cast<uint32_t>(n), 1, 1};
  return {65535, ceil_div(n, 65535), 1};
}

// Bindings 0..N-1 of a kernel: what it only reads first, then what it writes (or updates in place).
struct Bindings {
  std::initializer_list<BufferView> reads;
  std::initializer_list<BufferView> writes;
  // Writes the kernel also reads (y += ...): ordered and traced as reads too, bound only once.
  // Views of no buffer are ignored (a kernel that reads its output only sometimes).
  std::initializer_list<BufferView> writes_read = {};
};

struct KernelTime {
  std::string name;
  double ms = 0;
};

// One command as a tracing stream logs it: what it reads and what it writes, in binding order.
struct TracedCommand {
  std::string name;
  std::vector<BufferView> reads, writes;
};

class Stream {
 public:
  explicit Stream(const Context& ctx, bool profiling = false);
  // A tracing stream records nothing on the GPU: it logs each command's buffer ranges (trace())
  // and cannot be submitted. Views need not name real buffers (a layout being planned).
  struct Tracing {};
  Stream(const Context& ctx, Tracing);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  const Context& context() const { return ctx_; }

  template <class Push>
  void dispatch(const spirv::Shader& shader, std::initializer_list<SpecConst> spec, Bindings bindings, const Push& push,
                Groups groups) {
    static_assert(std::is_trivially_copyable_v<Push> && sizeof(Push) % 4 == 0 && sizeof(Push) <= 128,
                  "push constants: 4-byte fields, at most 128 bytes (the guaranteed minimum)");
    dispatch_raw(shader, spec, bindings, &push, sizeof(Push), groups);
  }
  void copy(BufferView src, BufferView dst);
  void fill(BufferView dst, uint32_t value);  // dst.size must be a multiple of 4

  // Ends recording (if open), submits, and waits for the GPU. Can be called again to replay.
  void submit_wait();
  // Forgets everything recorded; the next command starts a new recording.
  void reset();
  size_t dispatch_count() const { return labels_.size(); }
  const std::vector<TracedCommand>& trace() const { return trace_; }
  // GPU time of each dispatch of the last submit (profiling streams only).
  std::vector<KernelTime> timings() const;
  // Wall time the last submit_wait spent waiting for the GPU (the rest of a step is host work).
  double last_wait_seconds() const { return last_wait_seconds_; }

 private:
  void dispatch_raw(const spirv::Shader& shader, std::initializer_list<SpecConst> spec, Bindings bindings,
                    const void* push, uint32_t push_size, Groups groups);
  VkCommandBuffer recording();
  VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);
  void hazard_barrier(std::initializer_list<BufferView> reads, std::initializer_list<BufferView> writes);
  void full_barrier();
  void check_binding(const BufferView& v, const char* kernel) const;

  const Context& ctx_;
  bool profiling_;
  bool tracing_ = false;
  std::vector<TracedCommand> trace_;  // tracing streams only
  UniqueCommandPool pool_;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  bool open_ = false;  // recording in progress
  double last_wait_seconds_ = 0;
  bool ended_ = false;  // recording ended, ready to (re)submit
  std::vector<UniqueDescriptorPool> descriptor_pools_;
  uint32_t sets_in_last_pool_ = 0;
  UniqueFence fence_;
  UniqueQueryPool queries_;
  std::vector<std::string> labels_;  // one per dispatch, for timings
  // Buffer ranges touched since the last barrier (the hazard tracker's whole state).
  std::vector<BufferView> pending_reads_, pending_writes_;
};

}  // namespace vkllm
