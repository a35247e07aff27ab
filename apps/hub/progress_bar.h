// How a download shows itself on stderr: on a terminal one line redrawn a few times a second
// (bytes, percent, bar, rate, time left); otherwise a line when a file starts and one when it is
// done, so logs and pipes stay quiet.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace vkllm::hub {

class ProgressBar {
 public:
  // label: the file; total: its size (0: unknown); start: bytes already on disk (a resume).
  ProgressBar(std::string label, uint64_t total, uint64_t start, bool terminal);
  void update(uint64_t done);           // bytes of the file on disk now
  void note(const std::string& line);   // a line of its own (a resume, a retry) above the bar
  void finish(const std::string& how);  // the closing line: size, time, rate and `how`

  // "  42% [########            ] 57.1 MiB / 135.0 MiB  12.3 MiB/s  ETA 0:06", the redrawn part.
  static std::string bar_text(uint64_t done, uint64_t total, double rate);

 private:
  using Clock = std::chrono::steady_clock;
  void clear();

  std::string label_;
  uint64_t total_, start_, done_;
  bool terminal_, drawn_ = false;
  Clock::time_point t0_, last_draw_;
};

}  // namespace vkllm::hub
