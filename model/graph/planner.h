// ArenaPlanner: places activation tensors in one arena so that tensors alive at the same time
// never overlap, and tensors with disjoint lifetimes share bytes. Lifetimes are not typed in:
// they are derived from the order of the commands that touch each tensor (a traced recording).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkllm {

class ArenaPlanner {
 public:
  // Offsets are multiples of `alignment` (the device's binding alignment).
  explicit ArenaPlanner(uint64_t alignment);

  // Declares a tensor of `bytes`; returns its id. Before plan(), each tensor has a range of its
  // own (unshared_offset), so a traced recording tells the tensors apart by offset.
  int add(std::string name, uint64_t bytes);
  uint64_t unshared_offset(int id) const { return tensors_.at(id).unshared_offset; }
  // The tensor whose unshared range holds this byte offset; -1 if none.
  int at_unshared(uint64_t offset) const;

  // Command `op` (numbered in recording order, never decreasing) reads or writes tensor `id`.
  // A value lives from its first write to its last read; a write after a read starts a new value.
  void access(int id, int op, bool write);

  // Assigns offsets (largest tensors first, each at the lowest offset free for its lifetimes).
  void plan();
  uint64_t offset(int id) const { return tensors_.at(id).offset; }
  uint64_t bytes(int id) const { return tensors_.at(id).bytes; }
  const std::string& name(int id) const { return tensors_.at(id).name; }
  uint64_t total_bytes() const { return total_; }
  // What the arena would need without sharing (for reports and tests).
  uint64_t unshared_bytes() const { return unshared_total_; }
  size_t size() const { return tensors_.size(); }

  struct Interval {
    int first, last;  // commands, inclusive
  };
  // The live intervals of a tensor (empty for a tensor nothing touched).
  const std::vector<Interval>& live(int id) const { return tensors_.at(id).live; }
  bool live_together(int a, int b) const;

 private:
  struct Tensor {
    std::string name;
    uint64_t bytes, unshared_offset;
    std::vector<Interval> live;
    bool read_since_write = false;
    uint64_t offset = 0;
  };
  uint64_t alignment_;
  std::vector<Tensor> tensors_;
  uint64_t total_ = 0, unshared_total_ = 0;
  bool planned_ = false;
};

}  // namespace vkllm
