// StepInputs: one buffer of the step's inputs, each region at a binding-aligned offset.
#include "graph/step_inputs.h"

#include "align.h"
#include "context.h"
#include "stream.h"

namespace vkllm {

StepInputs::StepInputs(const Context& ctx, uint32_t max_batch, uint32_t slots) : max_batch_(max_batch) {
  uint64_t align = ctx.caps().binding_alignment();
  auto region = [&](uint64_t bytes) {
    uint64_t at = size_;
    size_ = align_up(size_ + bytes, align);
    return at;
  };
  tokens_ = region(4ull * max_batch);
  positions_ = region(16ull * max_batch);  // four sections
  kv_rows_ = region(4ull * max_batch);
  step_ = region(uint64_t(slots) * sizeof(push::StepParams));
  last_rows_ = region(4ull * slots);
  device_ = std::make_unique<Buffer>(ctx, size_, Memory::Device, "step inputs");
  if (!ctx.caps().uma || !device_->mapped())
    staging_ = std::make_unique<Buffer>(ctx, size_, Memory::Host, "step inputs (staging)");
}

void StepInputs::record_upload(Stream& s) const {
  if (staging_) s.copy(staging_->view(), device_->view());
}

uint64_t StepInputs::bytes() const { return size_ * (staging_ ? 2 : 1); }

}  // namespace vkllm
