// vkllm: the command line. Parses with CLI11; every error becomes one "error: ..." line on
// stderr and a non-zero exit.
#include <cstdio>
#include <exception>

#include "commands.h"
#include "error.h"

int main(int argc, char** argv) {
  CLI::App app{"vkllm: run Transformer language models on any Vulkan GPU", "vkllm"};
  app.require_subcommand(1);
  vkllm::cli::add_devices_command(app);
  vkllm::cli::add_info_command(app);
  vkllm::cli::add_tokenize_commands(app);
  vkllm::cli::add_run_command(app);
  vkllm::cli::add_logits_command(app);
  vkllm::cli::add_bench_command(app);
  vkllm::cli::add_perplexity_command(app);
  vkllm::cli::add_chat_command(app);
  vkllm::cli::add_template_command(app);
  vkllm::cli::add_serve_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s (see vkllm --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
