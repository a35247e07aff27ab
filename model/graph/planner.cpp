// Live intervals from traced accesses, and greedy arena placement by them.
#include "graph/planner.h"

#include <algorithm>
#include <numeric>

#include "align.h"
#include "error.h"

namespace vkllm {

ArenaPlanner::ArenaPlanner(uint64_t alignment) : alignment_(std::max<uint64_t>(alignment, 4)) {}

int ArenaPlanner::add(std::string name, uint64_t bytes) {
  ENSURE(!planned_, "tensor '" + name + "' added after planning");
  uint64_t size = align_up(std::max<uint64_t>(bytes, 4), alignment_);
  tensors_.push_back({.name = std::move(name), .bytes = size, .unshared_offset = unshared_total_});
  unshared_total_ += size;
  return static_cast<int>(tensors_.size() - 1);
}

int ArenaPlanner::at_unshared(uint64_t offset) const {
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (offset >= tensors_[i].unshared_offset && offset < tensors_[i].unshared_offset + tensors_[i].bytes)
      return static_cast<int>(i);
  return -1;
}

void ArenaPlanner::access(int id, int op, bool write) {
  Tensor& t = tensors_.at(id);
  ENSURE(!planned_, "tensor '" + t.name + "' accessed after planning");
  if (t.live.empty() || (write && t.read_since_write)) {
    // A new value. (A read with no write before it still starts one: that value came from
    // outside the recording, and it must not be overwritten before this read either.)
    t.live.push_back({op, op});
    t.read_since_write = !write;
    return;
  }
  ENSURE(op >= t.live.back().last, "tensor '" + t.name + "' accessed out of recording order");
  t.live.back().last = op;
  if (!write) t.read_since_write = true;
}

bool ArenaPlanner::live_together(int a, int b) const {
  for (const Interval& x : tensors_.at(a).live)
    for (const Interval& y : tensors_.at(b).live)
      if (x.first <= y.last && y.first <= x.last) return true;
  return false;
}

// Largest first; each goes at the lowest offset where it overlaps no placed tensor live at the
// same time. Tensors are few (tens), so a simple scan suffices.
void ArenaPlanner::plan() {
  std::vector<int> order(tensors_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return tensors_[a].bytes > tensors_[b].bytes; });
  std::vector<int> placed;
  total_ = 0;
  for (int id : order) {
    Tensor& t = tensors_[id];
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [begin, end) of live neighbours
    for (int p : placed)
      if (live_together(id, p)) busy.emplace_back(tensors_[p].offset, tensors_[p].offset + tensors_[p].bytes);
    std::sort(busy.begin(), busy.end());
    uint64_t at = 0;
    for (auto [begin, end] : busy) {
      if (at + t.bytes <= begin) break;
      at = std::max(at, end);
    }
    t.offset = at;
    total_ = std::max(total_, at + t.bytes);
    placed.push_back(id);
  }
  planned_ = true;
}

}  // namespace vkllm
