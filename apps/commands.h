// Subcommands of the `vkllm` program; each file apps/cmd_<name>.cpp adds one to the CLI.
#pragma once
#include <CLI/CLI.hpp>

namespace vkllm::cli {

void add_devices_command(CLI::App& app);

}  // namespace vkllm::cli
