// vkllm under a pseudo-terminal, as a person at a terminal runs it (forkpty): what it prints, keys
// typed, Ctrl-C and Ctrl-D as the terminal sends them, and the exit status. For `vkllm chat`.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace vkllm::test {

class PtySession {
 public:
  // vkllm with these arguments; env: NAME=VALUE settings added to the environment.
  explicit PtySession(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
  ~PtySession();  // kills it if still running
  PtySession(const PtySession&) = delete;

  // Reads until `text` appears after `from` (an offset into output()); false on timeout or exit.
  bool wait_for(const std::string& text, double seconds = 120, size_t from = 0);
  // Waits for the next prompt ("> " at the end of the output, printed after the last keys sent),
  // then types the keys; type_line adds Enter.
  bool type(const std::string& keys, double seconds = 120);
  bool type_line(const std::string& line, double seconds = 120) { return type(line + "\r", seconds); }
  void send(const std::string& bytes);  // as typed: "\x03" is Ctrl-C, "\x04" Ctrl-D
  // The exit status once it ends (128 + signal if killed by one); -1 when it did not end in time.
  int wait_exit(double seconds = 60);
  const std::string& output() const { return out_; }  // everything it printed (\r\n line ends)

 private:
  bool read_some(double seconds);

  pid_t pid_ = -1;
  int fd_ = -1;
  int status_ = -1;
  std::string out_;
  size_t sent_at_ = 0;  // the output's size when keys were last sent
};

}  // namespace vkllm::test
