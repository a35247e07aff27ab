// Subcommands of the `vkllm` program; each file apps/cmd_<name>.cpp adds one to the CLI.
#pragma once
#include <CLI/CLI.hpp>

namespace vkllm::cli {

void add_devices_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_tokenize_commands(CLI::App& app);  // tokenize and detokenize
void add_run_command(CLI::App& app);
void add_logits_command(CLI::App& app);
void add_attention_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_perplexity_command(CLI::App& app);
void add_embed_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_template_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_pull_command(CLI::App& app);
void add_list_commands(CLI::App& app);  // list and rm

}  // namespace vkllm::cli
