// StopStrings: generated text streamed past a set of stop strings (`vkllm run --stop`, the
// server's "stop"). Text that could be the start of a stop string is held back until it is known
// not to be; a stop string and everything after it are never returned.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace vkllm {

class StopStrings {
 public:
  explicit StopStrings(std::vector<std::string> stops);  // empty strings are ignored

  // Appends generated text and returns what may be shown now: up to the first stop string, or
  // all but the longest tail that begins one. Once a stop string is seen, stopped() is true and
  // later text is dropped.
  std::string push(std::string_view text);
  // The end of generation: the held-back tail (it began no stop string after all).
  std::string flush();
  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }  // the stop string seen, if any

 private:
  std::vector<std::string> stops_;
  std::string pending_, matched_;
  bool stopped_ = false;
};

}  // namespace vkllm
