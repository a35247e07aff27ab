// StepInputs: what a forward step's kernels read besides weights, caches and activations: per
// token its id, position and KV-cache row (slot * n_ctx + position); per sequence its StepParams
// and the batch index of its last token. Positions have four sections of max_batch entries: the
// token's position, then (sectioned rope, M-RoPE) the positions its 2nd, 3rd and 4th rope sections
// turn with (a text token's position twice and 0; an image token's row and column). The host writes them before each
// submit of a recorded graph.
//
// Kernels read them from device-local memory. On a discrete GPU the host writes a host-visible
// staging copy, and every recorded step starts with one small copy into the device-local buffer:
// otherwise every rope, kv_store and attention workgroup would read them across PCIe each step.
// On unified memory the device-local buffer is mapped and written directly, with no copy.
#pragma once
#include <cstdint>
#include <memory>

#include "buffer.h"
#include "push.h"

namespace vkllm {

class Context;
class Stream;

class StepInputs {
 public:
  StepInputs(const Context& ctx, uint32_t max_batch, uint32_t slots);

  // Where the host writes (the staging copy on a discrete GPU).
  int32_t* tokens() const { return host<int32_t>(tokens_); }
  int32_t* positions() const { return host<int32_t>(positions_); }
  int32_t* kv_rows() const { return host<int32_t>(kv_rows_); }
  push::StepParams* step() const { return host<push::StepParams>(step_); }
  int32_t* last_rows() const { return host<int32_t>(last_rows_); }

  // What kernels bind: n tokens' or seqs sequences' entries, device-local.
  BufferView tokens(uint32_t n) const { return device_view(tokens_, 4ull * n); }
  BufferView positions(uint32_t n) const { return device_view(positions_, 4ull * n); }
  BufferView section_positions() const { return device_view(positions_, 16ull * max_batch_); }
  uint32_t section_stride() const { return max_batch_; }
  BufferView kv_rows(uint32_t n) const { return device_view(kv_rows_, 4ull * n); }
  BufferView step(uint32_t seqs) const { return device_view(step_, uint64_t(seqs) * sizeof(push::StepParams)); }
  BufferView last_rows(uint32_t seqs) const { return device_view(last_rows_, 4ull * seqs); }

  // Records the staging copy at the start of a step's stream (nothing on unified memory).
  void record_upload(Stream& s) const;
  bool staged() const { return staging_ != nullptr; }
  uint64_t bytes() const;  // device and staging memory held

 private:
  template <class T>
  T* host(uint64_t offset) const {
    return reinterpret_cast<T*>((staging_ ? staging_.get() : device_.get())->mapped() + offset);
  }
  BufferView device_view(uint64_t offset, uint64_t size) const { return device_->view(offset, size); }

  uint32_t max_batch_ = 0;
  uint64_t tokens_ = 0, positions_ = 0, kv_rows_ = 0, step_ = 0, last_rows_ = 0, size_ = 0;  // byte offsets
  std::unique_ptr<Buffer> device_, staging_;
};

}  // namespace vkllm
