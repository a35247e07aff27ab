// The download progress line.
#include "hub/progress_bar.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "output.h"

namespace vkllm::hub {

namespace {

std::string duration(double s) {
  if (s < 0 || s > 99 * 3600) return "--:--";
  auto t = uint64_t(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02}", t / 60, t % 60);
}

}  // namespace

ProgressBar::ProgressBar(std::string label, uint64_t total, uint64_t start, bool terminal)
    : label_(std::move(label)), total_(total), start_(start), done_(start), terminal_(terminal), t0_(Clock::now()) {
  if (!terminal_)
    std::fprintf(
        stderr, "%s\n",
        fmt::format("downloading {} ({}{})", label_, total_ ? cli::human_bytes(double(total_)) : "size unknown",
                    start_ ? ", resuming at " + cli::human_bytes(double(start_)) : "")
            .c_str());
}

std::string ProgressBar::bar_text(uint64_t done, uint64_t total, double rate) {
  std::string rate_text = fmt::format("{}/s", cli::human_bytes(rate));
  if (total == 0) return fmt::format("{}  {}", cli::human_bytes(double(done)), rate_text);
  double frac = std::min(1.0, double(done) / double(total));
  constexpr int kWidth = 20;
  int filled = int(frac * kWidth);
  std::string eta = rate > 0 ? duration(double(total - std::min(done, total)) / rate) : "--:--";
  return fmt::format("{:3}% [{}{}] {} / {}  {}  ETA {}", int(frac * 100), std::string(size_t(filled), '#'),
                     std::string(size_t(kWidth - filled), ' '), cli::human_bytes(double(done)),
                     cli::human_bytes(double(total)), rate_text, eta);
}

void ProgressBar::update(uint64_t done) {
  done_ = done;
  if (!terminal_) return;
  Clock::time_point now = Clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(200) && done != total_) return;
  last_draw_ = now;
  double seconds = std::chrono::duration<double>(now - t0_).count();
  double rate = seconds > 0.2 ? double(done - start_) / seconds : 0;
  std::string label = label_.size() > 32 ? "..." + label_.substr(label_.size() - 29) : label_;
  std::fprintf(stderr, "\r%s  %s\033[K", label.c_str(), bar_text(done, total_, rate).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

void ProgressBar::note(const std::string& line) {
  clear();
  std::fprintf(stderr, "%s\n", line.c_str());
}

void ProgressBar::finish(const std::string& how) {
  clear();
  double seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
  double rate = seconds > 0 ? double(done_ - start_) / seconds : 0;
  std::fprintf(stderr, "%s\n",
               fmt::format("{}: {} in {:.1f} s ({}/s){}", label_, cli::human_bytes(double(done_)), seconds,
                           cli::human_bytes(rate), how.empty() ? "" : ", " + how)
                   .c_str());
}

}  // namespace vkllm::hub
