// vkllm-bench: kernel benchmarks timed by GPU timestamps (median of several runs after warm-up), and
// the tokenizer benchmark (CPU wall clock).
#include <cstdio>
#include <exception>

#include "bench.h"

int main(int argc, char** argv) {
  CLI::App app{"vkllm-bench: GPU kernel benchmarks", "vkllm-bench"};
  app.require_subcommand(1);
  vkllm::bench::add_elementwise_bench(app);
  vkllm::bench::add_matvec_bench(app);
  vkllm::bench::add_matmul_bench(app);
  vkllm::bench::add_attention_bench(app);
  vkllm::bench::add_fixture_command(app);
  vkllm::bench::add_serve_bench(app);
  vkllm::bench::add_tokenize_bench(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s (see vkllm-bench --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
