// Ctrl-C as a request rather than a kill, for the work that can stop cleanly (a generation, a
// reply, a download): while a SigintScope lives, SIGINT only sets a flag the work polls. Reads
// are not restarted, so a wait for input ends too (EINTR).
#pragma once

namespace vkllm::cli {

class SigintScope {
 public:
  // once: a second Ctrl-C kills as usual (the default action comes back after the first).
  explicit SigintScope(bool once = true);
  ~SigintScope();
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;
};

bool interrupted();      // Ctrl-C came since the last clear_interrupt()
void clear_interrupt();  // forget it (chat: the reply stopped, the session goes on)

}  // namespace vkllm::cli
