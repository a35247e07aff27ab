// ArenaPlanner: places activation tensors in one arena so that tensors alive at the same time
// never overlap, and tensors with disjoint lifetimes share bytes. Lifetimes are op indices.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkllm {

class ArenaPlanner {
 public:
  // Offsets are multiples of `alignment` (the device's minStorageBufferOffsetAlignment).
  explicit ArenaPlanner(uint64_t alignment);

  // A tensor of `bytes` first written by op `first` and last read by op `last` (first <= last).
  // Returns its id.
  int add(std::string name, uint64_t bytes, int first, int last);
  // Extends a tensor's lifetime to op `last` (when a later op turns out to read it).
  void use(int id, int last);

  // Assigns offsets (largest tensors first, each at the lowest offset free for its lifetime).
  void plan();
  uint64_t offset(int id) const { return tensors_.at(id).offset; }
  uint64_t bytes(int id) const { return tensors_.at(id).bytes; }
  const std::string& name(int id) const { return tensors_.at(id).name; }
  uint64_t total_bytes() const { return total_; }
  // What the arena would need without sharing (for reports and tests).
  uint64_t unshared_bytes() const;
  size_t size() const { return tensors_.size(); }

 private:
  struct Tensor {
    std::string name;
    uint64_t bytes;
    int first, last;
    uint64_t offset = 0;
  };
  uint64_t alignment_;
  std::vector<Tensor> tensors_;
  uint64_t total_ = 0;
  bool planned_ = false;
};

}  // namespace vkllm
