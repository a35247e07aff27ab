// Argument checks shared by the ops:: entry points: a view must hold what the kernel will touch.
#pragma once
#include <fmt/format.h>
#include <cstdint>

#include "buffer.h"
#include "check.h"

namespace vkllm::ops {

// Throws "<op>: <arg> holds N bytes, needs M" when the view is missing or too small.
inline void ensure_holds(const BufferView& v, uint64_t bytes, const char* op, const char* arg) {
  ENSURE(v.buffer != VK_NULL_HANDLE, fmt::format("{}: {} is not bound", op, arg));
  ENSURE(v.size >= bytes, fmt::format("{}: {} holds {} bytes, needs {}", op, arg, v.size, bytes));
}

inline bool is_bound(const BufferView& v) { return v.buffer != VK_NULL_HANDLE; }

}  // namespace vkllm::ops
