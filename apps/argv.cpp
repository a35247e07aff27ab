// The command line checked word by word against the commands' own option tables (CLI11's
// lookup), so the words CLI11 would misread never reach it.
#include "argv.h"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <map>

namespace vkllm::cli {

namespace {

[[noreturn]] void fail(const std::string& message) { throw CLI::ExtrasError(message, CLI::ExitCodes::ExtrasError); }

std::vector<CLI::App*> commands(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

CLI::App* find_command(CLI::App& app, const std::string& name) {
  for (CLI::App* c : commands(app))
    if (c->get_name() == name) return c;
  return nullptr;
}

[[noreturn]] void unknown_command(CLI::App& app, const std::string& name) {
  std::vector<std::string> names;
  for (CLI::App* c : commands(app)) names.push_back(c->get_name());
  fail(fmt::format("unknown command '{}' (commands: {}; see {} --help)", name, fmt::join(names, ", "), app.get_name()));
}

[[noreturn]] void unknown_option(const CLI::App* cmd, const std::string& word, const std::string& why = "") {
  std::string name = cmd->get_parent()->get_name() + " " + cmd->get_name();
  fail(fmt::format("unknown option {} for {}{} (see {} --help)", word, name, why, name));
}

bool takes_value(const CLI::Option* o) { return o->get_expected_max() > 0; }

bool letters(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '-'; });
}

// llama.cpp's single-dash spellings of long options.
const std::map<std::string, std::string>& llama_spellings() {
  static const std::map<std::string, std::string> m = {
      {"-ngl", "--n-gpu-layers"}, {"-hf", "--hf-repo"},       {"-hfr", "--hf-repo"}, {"-hff", "--hf-file"},
      {"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"}, {"-np", "--parallel"}, {"-sys", "--system"},
      {"-sysf", "--system-file"}, {"-fa", "--flash-attn"},    {"-co", "--color"},
  };
  return m;
}

// Options whose value llama.cpp lets one leave out, and the value that means.
const std::map<std::string, std::string>& optional_values() {
  static const std::map<std::string, std::string> m = {{"--flash-attn", "on"}, {"--color", "auto"}};
  return m;
}

bool chat_switch(const std::string& w) {
  return w == "-i" || w == "--interactive" || w == "-cnv" || w == "--conversation";
}

// The option a word names in `cmd` (after llama.cpp's spellings), or null.
const CLI::Option* option_of(const CLI::App* cmd, const std::string& w) {
  auto it = llama_spellings().find(w);
  std::string name = it != llama_spellings().end() ? it->second
                     : w.starts_with("--")         ? w.substr(0, w.find('='))
                                                   : w.substr(0, 2);
  return cmd->get_option_no_throw(name);
}

// -i or -cnv anywhere in `run` (or in chat itself) make it the chat command; found before the
// other words are checked, so that chat's own flags are known wherever they stand.
void switch_to_chat(CLI::App& app, CLI::App*& cmd, std::vector<std::string>& args) {
  CLI::App* chat = find_command(app, "chat");
  for (size_t j = 1; j < args.size(); ++j) {
    const std::string& w = args[j];
    if (w == "--") return;
    if (chat_switch(w)) {
      if (!chat || (cmd != chat && cmd->get_name() != "run")) unknown_option(cmd, w);
      cmd = chat, args[0] = "chat";
      args.erase(args.begin() + std::ptrdiff_t(j--));
      continue;
    }
    const CLI::Option* opt = w.starts_with("-") ? option_of(cmd, w) : nullptr;
    if (!opt && chat && w.starts_with("-")) opt = option_of(chat, w);
    bool attached = w.starts_with("--") && w.find('=') != std::string::npos;
    if (opt && takes_value(opt) && !attached && !optional_values().count(opt->get_name())) ++j;  // its value
  }
}

// Checks the words after the command, rewriting llama.cpp's spellings.
void check_options(CLI::App& app, CLI::App* cmd, std::vector<std::string>& args) {
  for (size_t j = 1; j < args.size(); ++j) {
    std::string& w = args[j];
    if (w == "--") return;  // the rest is positional
    if (w.size() < 2 || w[0] != '-') continue;
    if (auto it = llama_spellings().find(w); it != llama_spellings().end()) {
      if (!cmd->get_option_no_throw(it->second))
        unknown_option(
            cmd, w, fmt::format(" (llama.cpp's {}, which {} {} has not)", it->second, app.get_name(), cmd->get_name()));
      w = it->second;
    }
    std::string name = w.starts_with("--") ? w.substr(0, w.find('=')) : w.substr(0, 2);
    if (!w.starts_with("--") && w.size() > 2 && letters(w.substr(1)))
      unknown_option(cmd, w, ": short options are one letter, as in -n 5");
    const CLI::Option* opt = cmd->get_option_no_throw(name);
    if (!opt) unknown_option(cmd, w);
    bool attached = w.starts_with("--") ? w.find('=') != std::string::npos : w.size() > 2;
    if (!takes_value(opt) || attached) continue;
    if (auto o = optional_values().find(name); o != optional_values().end()) {
      bool given = j + 1 < args.size() && (args[j + 1] == "on" || args[j + 1] == "off" || args[j + 1] == "auto");
      w += "=" + (given ? args[j + 1] : o->second);
      if (given) args.erase(args.begin() + std::ptrdiff_t(j + 1));
      continue;
    }
    std::string type = opt->get_type_name();
    if (++j == args.size())  // its value may start with '-', so only the end can be missing
      fail(fmt::format("{} needs a value ({}; see {} {} --help)", w, type.substr(0, type.find(':')), app.get_name(),
                       cmd->get_name()));
  }
}

}  // namespace

std::vector<std::string> prepare_args(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::vector<std::string> names;
    for (CLI::App* c : commands(app)) names.push_back(c->get_name());
    fail(fmt::format("no command given (commands: {}; see {} --help)", fmt::join(names, ", "), app.get_name()));
  }
  if (args[0] == "help") {
    args.erase(args.begin());
    if (!args.empty() && !find_command(app, args[0])) unknown_command(app, args[0]);
    args.resize(std::min<size_t>(args.size(), 1));
    args.push_back("--help");
  } else if (chat_switch(args[0])) {
    if (!find_command(app, "chat")) fail(fmt::format("unknown option {} (vkllm has no chat command yet)", args[0]));
    args[0] = "chat";
  }
  const std::string& first = args[0];
  if (first == "-h" || first == "--help" || first == "--version") {
    args.resize(1);
  } else if (first.starts_with("-")) {
    fail(fmt::format("unknown option {} before the command: options follow it ({} COMMAND [OPTIONS]; see {} --help)",
                     first, app.get_name(), app.get_name()));
  } else {
    CLI::App* cmd = find_command(app, first);
    if (!cmd) unknown_command(app, first);
    switch_to_chat(app, cmd, args);
    check_options(app, cmd, args);
  }
  std::reverse(args.begin(), args.end());
  return args;
}

}  // namespace vkllm::cli
