// `vkllm chat [-m MODEL] [--system TEXT | --system-file FILE] [-n N] [sampling flags as run]
// [--ctx N]`: a conversation. Each line of stdin is a user turn (a terminal gets a line editor with
// history); the reply streams to stdout. /reset clears the conversation, /exit or end of input
// ends it. A failed turn prints one error line and the conversation goes on; the exit status is
// then 1. The conversation logic is ChatSession (model/engine/chat_session.h).
#include <editline/readline.h>
#include <fmt/format.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "commands.h"
#include "engine/chat_session.h"
#include "error.h"
#include "model_options.h"

namespace vkllm::cli {

namespace {

struct ChatOptions {
  ModelOptions model;
  std::string system, system_file;
  uint32_t n = 512;
  SamplerOptions sampling;
  std::optional<uint64_t> seed;
};

// Lines from stdin: through libedit on a terminal, plain reads otherwise (piped turns).
class LineReader {
 public:
  LineReader() : tty_(isatty(STDIN_FILENO)) {}
  std::optional<std::string> next() {
    if (!tty_) {
      std::string line;
      if (!std::getline(std::cin, line)) return std::nullopt;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    char* raw = readline("> ");
    if (!raw) return std::nullopt;
    std::string line(raw);
    std::free(raw);
    if (!line.empty()) add_history(line.c_str());
    return line;
  }

 private:
  bool tty_;
};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  ENSURE(f.good(), path + ": cannot open");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void print(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// Runs the conversation; returns how many turns failed.
int chat(ChatOptions& o) {
  ENSURE(o.system.empty() || o.system_file.empty(), "give --system or --system-file, not both");
  std::string system = o.system_file.empty() ? o.system : read_file(o.system_file);
  LoadedModel m = load_model(o.model);
  ChatTemplate chat_template = ChatTemplate::from_gguf(*m.file);
  if (chat_template.is_fallback())
    std::fprintf(stderr, "%s has no chat template: using ChatML\n", m.file->name().c_str());
  o.sampling.seed = o.seed ? *o.seed : std::random_device{}();
  Sampler sampler(o.sampling);
  ChatSession session(*m.engine, sampler, std::move(chat_template), system);
  LineReader input;
  int failures = 0;
  while (std::optional<std::string> line = input.next()) {
    if (*line == "/exit") break;
    if (*line == "/reset") {
      session.reset();
      std::fprintf(stderr, "(conversation cleared)\n");
      continue;
    }
    if (line->empty()) continue;
    try {
      session.reply(*line, o.n, print);
      print("\n");
      const ChatTurnStats& s = session.last_turn();
      if (s.dropped_turns)
        std::fprintf(stderr, "(dropped the %u oldest messages to fit the context of %u tokens)\n", s.dropped_turns,
                     m.engine->n_ctx());
    } catch (const Error& e) {
      print("");
      std::fprintf(stderr, "error: %s\n", e.what());
      ++failures;
    }
  }
  return failures;
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("chat", "Hold a conversation with the model (one line of input per turn)");
  auto o = std::make_shared<ChatOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("--system", o->system, "System message");
  cmd->add_option("--system-file", o->system_file, "File holding the system message");
  cmd->add_option("-n,--n-predict", o->n, "Most tokens per reply");
  cmd->add_option("--temp", o->sampling.temperature, "Temperature (0: greedy)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-k", o->sampling.top_k, "Keep the k most likely tokens (0: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", o->sampling.top_p, "Keep the most likely tokens up to this total probability")
      ->check(CLI::Range(0.0f, 1.0f));
  cmd->add_option("--min-p", o->sampling.min_p, "Drop tokens below this fraction of the best's probability")
      ->check(CLI::Range(0.0f, 1.0f));
  cmd->add_option("--repeat-penalty", o->sampling.repeat_penalty, "Penalty for recent tokens (1: off)");
  cmd->add_option("--repeat-last-n", o->sampling.repeat_last_n, "How many recent tokens the penalty sees");
  cmd->add_option("--seed", o->seed, "Random seed (default: random)");
  cmd->callback([o] {
    int failures = chat(*o);  // the model is released before exiting
    if (failures) std::exit(1);
  });
}

}  // namespace vkllm::cli
