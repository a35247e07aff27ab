// Rounding sizes and offsets up to an alignment (any positive value, not only powers of two).
#pragma once
#include <cstdint>

namespace vkllm {

// Written to overflow only when the result itself would not fit (file offsets come from input).
constexpr uint64_t align_up(uint64_t x, uint64_t a) { return x + (a - x % a) % a; }

}  // namespace vkllm
