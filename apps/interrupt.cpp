// The SIGINT flag and its handler.
#include "interrupt.h"

#include <csignal>

namespace vkllm::cli {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
struct sigaction g_old {};

void on_sigint(int) { g_interrupted = 1; }

}  // namespace

SigintScope::SigintScope(bool once) {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sa.sa_flags = once ? SA_RESETHAND : 0;  // no SA_RESTART: a blocked read returns EINTR
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old);
}

SigintScope::~SigintScope() { sigaction(SIGINT, &g_old, nullptr); }

bool interrupted() { return g_interrupted != 0; }

void clear_interrupt() { g_interrupted = 0; }

}  // namespace vkllm::cli
