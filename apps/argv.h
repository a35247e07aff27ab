// The command line before CLI11 sees it: the spellings CLI11 cannot be told (llama.cpp's
// multi-letter single-dash `-ngl`, `-i` for chat, `vkllm help CMD`) and the messages it words
// badly (an unknown command or option, `-fa` read as `-f a`).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace vkllm::cli {

// argv[1..] checked and rewritten, in the reversed order CLI11's App::parse(vector&) takes:
//   help [CMD]             -> [CMD] --help
//   -ngl N                 -> --n-gpu-layers N
//   -i (alone or in run)   -> the chat command, where one is registered
// Throws CLI::ParseError with one line for an unknown command, an unknown option, or a
// multi-letter single-dash word (short options are one letter: `-n 5`, never `-ngl` as `-n gl`).
// Values of options that take one are never touched (`-p -x`, `-n -1`).
std::vector<std::string> prepare_args(CLI::App& app, int argc, char** argv);

}  // namespace vkllm::cli
