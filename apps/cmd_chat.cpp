// `vkllm chat [-m MODEL] [--system TEXT | --system-file FILE] [-n N] [sampling flags as run]
// [--ctx N] [--no-reasoning]` (also `vkllm run -i` and `vkllm -i`, apps/argv.cpp): a conversation. Each line of stdin
// is a user turn (a terminal gets a line editor with history); the reply streams to stdout, a thinking model's
// reasoning dimmed on a terminal (or left out with --no-reasoning). /reset clears the conversation, /exit or end of
// input ends it. A failed turn prints one error line and the conversation goes on; the exit status is then 1. The
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
#include "text/chat/chat_output.h"

namespace vkllm::cli {

namespace {

struct ChatOptions {
  ModelOptions model;
  std::optional<std::string> system, system_file;
  GenerationOptions gen{.n_predict = 512};
  bool no_reasoning = false;
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

// Prints a reply as it streams, its reasoning (<think>...</think>, gpt-oss's analysis channel)
// apart from the answer: dimmed on a terminal, left out with --no-reasoning. On a pipe without
// --no-reasoning the reply is printed as the model wrote it.
class ReplyPrinter {
 public:
  // reasoning_open: the prompt left the model inside <think> (prompt_opens_reasoning).
  ReplyPrinter(const ChatFormat& format, bool reasoning_open, bool hide) : hide_(hide), dim_(isatty(STDOUT_FILENO)) {
    o_.format = format;
    o_.reasoning_open = reasoning_open;
    split_ = hide_ || dim_;
  }
  void push(std::string_view piece) {
    text_ += piece;
    if (!split_) return print(piece);
    show(parse_chat_reply(text_, o_, true));
  }
  void finish() {
    if (split_) show(parse_chat_reply(text_, o_, false));
  }

 private:
  void show(const ChatReply& r) {
    if (!hide_ && r.reasoning.size() > reasoning_ && r.reasoning.starts_with(shown_reasoning_)) {
      print("\x1b[2m" + r.reasoning.substr(reasoning_) + "\x1b[0m");
      shown_reasoning_ = r.reasoning;
      reasoning_ = r.reasoning.size();
    }
    if (r.content.size() > content_ && r.content.starts_with(shown_content_)) {
      if (!hide_ && reasoning_ > 0 && content_ == 0) print("\n");
      print(r.content.substr(content_));
      shown_content_ = r.content;
      content_ = r.content.size();
    }
  }

  ChatReplyOptions o_;
  bool hide_, dim_, split_;
  std::string text_, shown_reasoning_, shown_content_;
  size_t reasoning_ = 0, content_ = 0;
};

// Whether the prompt of this turn leaves the model inside its reasoning (a template that ends the
// generation prompt with <think>, as QwQ's and DeepSeek-R1's do).
bool opens_reasoning(const ChatSession& session, const std::string& line, const ChatFormat& format) {
  if (!format.think_tags) return false;
  nlohmann::ordered_json messages = session.messages();
  messages.push_back({{"role", "user"}, {"content", line}});
  const ChatTemplate& t = session.chat_template();
  return prompt_opens_reasoning(format, t.render(messages, {.bos_token = t.bos_token(), .eos_token = t.eos_token()}));
}

// Runs the conversation; returns how many turns failed.
int chat(ChatOptions& o) {
  std::string system = o.system_file ? read_text_file(*o.system_file) : o.system.value_or("");
  LoadedModel m = load_model(o.model);
  ChatTemplate chat_template = ChatTemplate::from_gguf(*m.file);
  if (chat_template.is_fallback())
    std::fprintf(stderr, "%s has no chat template: using ChatML\n", m.file->name().c_str());
  Sampler sampler(sampler_options(o.gen));
  uint32_t max_tokens = o.gen.n_predict < 0 ? UINT32_MAX : uint32_t(o.gen.n_predict);
  ChatFormat format = ChatFormat::detect(chat_template.source());
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
      ReplyPrinter printer(format, opens_reasoning(session, *line, format), o.no_reasoning);
      session.reply(*line, max_tokens, [&](std::string_view piece) { printer.push(piece); });
      printer.finish();
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
  cmd->add_flag("--no-reasoning", o->no_reasoning,
                "Leave a thinking model's reasoning out of the printed reply (shown dimmed on a terminal otherwise)");
  cmd->callback([o] {
    if (chat(*o)) throw CLI::RuntimeError(1);  // a turn failed (its error line was printed)
  });
}

}  // namespace vkllm::cli
