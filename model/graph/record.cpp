// RecordContext: views of the activation arena and the step's inputs, and taps.
#include "graph/record.h"

#include "error.h"
#include "push.h"

namespace vkllm {

BufferView RecordContext::act(int id, uint64_t bytes, uint64_t offset) const {
  ENSURE(id >= 0 && offset + bytes <= planner.bytes(id), "activation out of its planned size");
  if (unshared) return {.buffer = unshared, .offset = planner.unshared_offset(id) + offset, .size = bytes};
  return arena->view(planner.offset(id) + offset, bytes);
}

void RecordContext::tap(int layer, const char* name, BufferView v, uint32_t rows, uint32_t width) const {
  if (!taps) return;
  uint64_t bytes = 4ull * rows * width;
  TapCopy t{.tap = {.layer = layer, .name = name, .rows = rows, .width = width},
            .host = std::make_unique<Buffer>(ctx, bytes, Memory::Host, std::string("tap ") + name)};
  s.copy({v.buffer, v.offset, bytes}, t.host->view());
  taps->push_back(std::move(t));
}

}  // namespace vkllm
