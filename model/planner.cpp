// Greedy arena placement by lifetime.
#include "planner.h"

#include <algorithm>
#include <numeric>

#include "check.h"

namespace vkllm {

namespace {

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

ArenaPlanner::ArenaPlanner(uint64_t alignment) : alignment_(std::max<uint64_t>(alignment, 4)) {}

int ArenaPlanner::add(std::string name, uint64_t bytes, int first, int last) {
  ENSURE(first <= last, "tensor '" + name + "' is read before it is written");
  ENSURE(!planned_, "tensor '" + name + "' added after planning");
  tensors_.push_back({std::move(name), align_up(std::max<uint64_t>(bytes, 4), alignment_), first, last});
  return static_cast<int>(tensors_.size() - 1);
}

void ArenaPlanner::use(int id, int last) {
  Tensor& t = tensors_.at(id);
  t.last = std::max(t.last, last);
}

// Largest first; each goes at the lowest offset where it overlaps no placed tensor whose lifetime
// intersects its own. Placed intervals are few (tens per layer), so a simple scan suffices.
void ArenaPlanner::plan() {
  std::vector<int> order(tensors_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return tensors_[a].bytes > tensors_[b].bytes; });
  std::vector<int> placed;
  total_ = 0;
  for (int id : order) {
    Tensor& t = tensors_[id];
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [begin, end) of live neighbours
    for (int p : placed) {
      const Tensor& o = tensors_[p];
      if (o.first <= t.last && t.first <= o.last) busy.emplace_back(o.offset, o.offset + o.bytes);
    }
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

uint64_t ArenaPlanner::unshared_bytes() const {
  uint64_t sum = 0;
  for (const Tensor& t : tensors_) sum += t.bytes;
  return sum;
}

}  // namespace vkllm
