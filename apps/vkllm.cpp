// vkllm: the command line. Parses with CLI11 (after apps/argv.cpp's checks); every error becomes
// one "error: ..." line on stderr and a non-zero exit, and output lost on a full or closed stdout
// is an error too.
#include <cstdio>
#include <exception>
#include <string>

#include "argv.h"
#include "commands.h"
#include "error.h"
#include "options.h"
#include "output.h"

namespace {

// A CLI11 message plus where to read more, unless it says so already.
std::string with_hint(const std::string& message, const std::string& command) {
  if (message.find("--help") != std::string::npos) return message;
  return message + (command.empty() ? " (see vkllm --help)" : " (see vkllm " + command + " --help)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vkllm: run Transformer language models (GGUF files) on any Vulkan GPU", "vkllm"};
  vkllm::cli::setup_app(app);
  vkllm::cli::add_devices_command(app);
  vkllm::cli::add_info_command(app);
  vkllm::cli::add_tokenize_commands(app);
  vkllm::cli::add_run_command(app);
  vkllm::cli::add_logits_command(app);
  vkllm::cli::add_attention_command(app);
  vkllm::cli::add_bench_command(app);
  vkllm::cli::add_perplexity_command(app);
  vkllm::cli::add_embed_command(app);
  vkllm::cli::add_chat_command(app);
  vkllm::cli::add_template_command(app);
  vkllm::cli::add_serve_command(app);
  vkllm::cli::add_pull_command(app);
  vkllm::cli::add_list_commands(app);
  std::string command;
  try {
    std::vector<std::string> args = vkllm::cli::prepare_args(app, argc, argv);
    if (!args.empty() && !args.back().starts_with("-")) command = args.back();
    app.parse(args);
    vkllm::cli::finish_stdout();
  } catch (const CLI::RuntimeError& e) {  // a command's own exit status (Ctrl-C: 130)
    return e.get_exit_code();
  } catch (const CLI::Success& e) {  // --help, --version
    app.exit(e);
    try {
      vkllm::cli::finish_stdout();
    } catch (const std::exception& w) {
      std::fprintf(stderr, "error: %s\n", w.what());
      return 1;
    }
    return 0;
  } catch (const CLI::ValidationError& e) {  // the message names the allowed values
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\n", with_hint(e.what(), command).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
