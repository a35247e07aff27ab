// Stop strings over streamed text: search the unsent text for each stop, and hold back the longest
// tail that is a prefix of one. Stops are few and short, so plain searches suffice.
#include "text/stop_strings.h"

#include <algorithm>

namespace vkllm {

StopStrings::StopStrings(std::vector<std::string> stops) {
  for (std::string& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
}

std::string StopStrings::push(std::string_view text) {
  if (stopped_) return {};
  pending_ += text;
  size_t first = std::string::npos;
  for (const std::string& s : stops_) {
    size_t at = pending_.find(s);
    if (at < first) first = at, matched_ = s;
  }
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = pending_.substr(0, first);
    pending_.clear();
    return out;
  }
  // The longest tail of pending_ that a stop string starts with must wait for more text.
  size_t hold = 0;
  for (const std::string& s : stops_)
    for (size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n)
      if (std::string_view(pending_).substr(pending_.size() - n) == std::string_view(s).substr(0, n)) {
        hold = n;
        break;
      }
  std::string out = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StopStrings::flush() {
  std::string out = std::move(pending_);
  pending_.clear();
  return out;
}

}  // namespace vkllm
