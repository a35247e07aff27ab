// vkllm-bench: kernel benchmarks timed by GPU timestamps (median of several runs after warm-up), and
// the tokenizer benchmark (CPU wall clock).
#include <cstdio>
#include <exception>

#include "argv.h"
#include "bench.h"
#include "output.h"

int main(int argc, char** argv) {
  CLI::App app{"vkllm-bench: GPU kernel benchmarks", "vkllm-bench"};
  vkllm::cli::setup_app(app);
  vkllm::bench::add_elementwise_bench(app);
  vkllm::bench::add_copy_bench(app);
  vkllm::bench::add_matvec_bench(app);
  vkllm::bench::add_matmul_bench(app);
  vkllm::bench::add_coopmat_bench(app);
  vkllm::bench::add_attention_bench(app);
  vkllm::bench::add_fixture_command(app);
  vkllm::bench::add_serve_bench(app);
  vkllm::bench::add_tokenize_bench(app);
  vkllm::bench::add_grammar_bench(app);
  vkllm::bench::add_vision_bench(app);
  try {
    std::vector<std::string> args = vkllm::cli::prepare_args(app, argc, argv);
    app.parse(args);
    vkllm::cli::finish_stdout();
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
