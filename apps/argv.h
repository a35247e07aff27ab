// The command line before CLI11 sees it: the spellings CLI11 cannot be told (llama.cpp's
// multi-letter single-dash flags such as -ngl and -hf, flags whose value is optional such as -fa,
// -i and -cnv for chat, `vkllm help CMD`) and the messages it words badly (an unknown command or
// option, `-x5` read as `-x 5`).
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace vkllm::cli {

// argv[1..] checked and rewritten, in the reversed order CLI11's App::parse(vector&) takes:
//   help [CMD]                        -> [CMD] --help
//   -ngl -hf -hfr -hff -ctk -ctv -np -sys -sysf -co -fa
//                                     -> their long options, where the command has them
//   -fa/--flash-attn, -co/--color without on|off|auto after them -> with one (on; auto)
//   -i, -cnv (alone or in run)        -> the chat command, where one is registered
// Throws CLI::ParseError with one line for an unknown command, an unknown option, or a
// multi-letter single-dash word (short options are one letter: `-n 5`, never `-ngl` as `-n gl`).
// Values of options that take one are never touched (`-p -x`, `-n -1`).
std::vector<std::string> prepare_args(CLI::App& app, int argc, char** argv);

}  // namespace vkllm::cli
