// forkpty and a read loop with timeouts.
#include "pty_session.h"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "catch.h"

namespace vkllm::test {

using Clock = std::chrono::steady_clock;

PtySession::PtySession(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  winsize ws{.ws_row = 40, .ws_col = 120, .ws_xpixel = 0, .ws_ypixel = 0};
  pid_ = forkpty(&fd_, nullptr, nullptr, &ws);
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    setenv("TERM", "xterm", 1);
    std::vector<char*> argv = {const_cast<char*>(VKLLM_BIN)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(VKLLM_BIN, argv.data());
    _exit(127);
  }
}

PtySession::~PtySession() {
  if (pid_ > 0 && status_ < 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) close(fd_);
}

// Appends what arrives within `seconds`; false once the other side is gone.
bool PtySession::read_some(double seconds) {
  pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
  if (poll(&p, 1, int(seconds * 1000)) <= 0) return true;
  char buf[4096];
  ssize_t n = read(fd_, buf, sizeof buf);
  if (n <= 0) return false;
  out_.append(buf, size_t(n));
  return true;
}

bool PtySession::wait_for(const std::string& text, double seconds, size_t from) {
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (out_.find(text, from) == std::string::npos) {
    if (Clock::now() > end || !read_some(0.05)) return out_.find(text, from) != std::string::npos;
  }
  return true;
}

bool PtySession::type(const std::string& keys, double seconds) {
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  auto prompt = [&] { return out_.ends_with("> ") && out_.size() - 2 >= sent_at_; };
  while (!prompt()) {
    if (Clock::now() > end || !read_some(0.05)) return false;
  }
  // libedit takes the terminal over after printing its prompt; keys typed before that would be
  // echoed twice (and a Ctrl-C would find nothing typed).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  send(keys);
  return true;
}

void PtySession::send(const std::string& bytes) {
  REQUIRE(write(fd_, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
  sent_at_ = out_.size();
}

int PtySession::wait_exit(double seconds) {
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    read_some(0.05);
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      for (size_t before = out_.size() + 1; out_.size() != before;) {  // what is still in the pty
        before = out_.size();
        if (!read_some(0.05)) break;
      }
      return status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
  }
  return -1;
}

}  // namespace vkllm::test
