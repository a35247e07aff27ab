// Test runner: one shared GPU context with the validation layer on. A test case during which the
// layer reports an error fails: the runner names it and exits non-zero. When nothing failed but a
// test was skipped (test::skip: an optional tool such as the llama.cpp oracle is missing), it
// exits 77, which ctest counts as skipped.
#define CATCH_CONFIG_RUNNER
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "catch.h"
#include "context.h"
#include "harness.h"

namespace {

std::vector<std::string> g_failed;

struct ValidationListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  uint64_t before = 0;
  void testCaseStarting(const Catch::TestCaseInfo&) override { before = vkllm::validation_error_count(); }
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    uint64_t n = vkllm::validation_error_count() - before;
    // A test tagged [validation-error] provokes an error on purpose and checks it itself.
    bool expected = std::find(stats.testInfo.tags.begin(), stats.testInfo.tags.end(), "validation-error") !=
                    stats.testInfo.tags.end();
    if (n == 0 || expected) return;
    std::fprintf(stderr, "FAILED: %llu Vulkan validation error(s) during '%s'\n", (unsigned long long)n,
                 stats.testInfo.name.c_str());
    g_failed.push_back(stats.testInfo.name);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(ValidationListener)

int main(int argc, char** argv) {
  vkllm::test::run_at_start();
  int result = Catch::Session().run(argc, argv);
  if (!g_failed.empty() && result == 0) result = 1;
  if (result == 0 && !vkllm::test::skipped().empty()) {
    std::fprintf(stderr, "%zu skipped: %s\n", vkllm::test::skipped().size(), vkllm::test::skipped().front().c_str());
    result = 77;
  }
  return result;
}
