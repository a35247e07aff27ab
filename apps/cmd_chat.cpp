// `vkllm chat [-m MODEL] [--system TEXT | --system-file FILE] [-n N] [sampling flags as run]
// [--ctx N]` (also `vkllm run -i` and `vkllm -i`, apps/argv.cpp): a conversation. Each line of stdin is a user turn (a
// terminal gets a line editor with history); the reply streams to stdout. /reset clears the conversation, /exit or end
// of input ends it. A failed turn prints one error line and the conversation goes on; the exit status is then 1. The
// conversation logic is ChatSession (model/engine/chat_session.h).
#include <editline/readline.h>
#include <fmt/format.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "engine/chat_session.h"
#include "error.h"
#include "model_options.h"
#include "output.h"

namespace vkllm::cli {

namespace {

struct ChatOptions {
  ModelOptions model;
  std::optional<std::string> system, system_file;
  GenerationOptions gen{.n_predict = 512};
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

void print(std::string_view text) { write_stdout(text); }

// Runs the conversation; returns how many turns failed.
int chat(ChatOptions& o) {
  std::string system = o.system_file ? read_text_file(*o.system_file) : o.system.value_or("");
  LoadedModel m = load_model(o.model);
  ChatTemplate chat_template = ChatTemplate::from_gguf(*m.file);
  if (chat_template.is_fallback())
    std::fprintf(stderr, "%s has no chat template: using ChatML\n", m.file->name().c_str());
  Sampler sampler(sampler_options(o.gen));
  uint32_t max_tokens = o.gen.n_predict < 0 ? UINT32_MAX : uint32_t(o.gen.n_predict);
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
      session.reply(*line, max_tokens, print);
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
  auto* system = cmd->add_option("--system", o->system, "System message")->type_name("TEXT");
  cmd->add_option("--system-file", o->system_file, "System message from a file")
      ->type_name("FILE")
      ->check(non_empty)
      ->check(CLI::Validator(
          [](std::string& f) -> std::string { return f == "-" ? "standard input holds the turns" : ""; }, ""))
      ->excludes(system);
  add_generation_options(cmd, o->gen, false);  // -n is per reply; ChatSession stops at end of turn
  cmd->callback([o] {
    if (chat(*o)) throw CLI::RuntimeError(1);  // a turn failed (its error line was printed)
  });
}

}  // namespace vkllm::cli
