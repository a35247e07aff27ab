// `vkllm chat [MODEL | -m MODEL | -hf USER/REPO[:QUANT]] [--system TEXT | --system-file FILE] [-p TEXT] [-n N]
// [sampling flags as run] [--ctx N] [--verbose] [--color] [--no-reasoning]` (also `vkllm run -i` / `-cnv` and
// `vkllm -i`, apps/argv.cpp): a conversation, as llama-cli -cnv and `ollama run` hold one. Each
// line of input is a user turn (a terminal gets a line editor with history; `"""` or a trailing
// backslash continues a turn over several lines); the reply streams to stdout, a thinking model's
// reasoning dimmed on a terminal (or left out with --no-reasoning). Slash commands
// (chat_commands.h) are not sent to the model. Ctrl-C stops a reply and keeps the conversation;
// at an empty prompt it leaves, as Ctrl-D, /bye and /exit do, with exit status 0. A failed turn
// prints one error line and the conversation goes on; from a pipe, the exit status is then 1.
// The conversation logic is ChatSession (model/engine/chat_session.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "chat_commands.h"
#include "commands.h"
#include "engine/chat_session.h"
#include "error.h"
#include "interrupt.h"
#include "line_reader.h"
#include "model_options.h"
#include "output.h"
#include "text/chat/chat_output.h"

namespace vkllm::cli {

namespace {

struct ChatOptions {
  ModelOptions model;
  std::optional<std::string> system, system_file;
  std::optional<std::string> first;     // -p: the first user message, as llama-cli -cnv -p takes it
  std::vector<std::string> positional;  // the model, as Ollama takes it
  GenerationOptions gen{.n_predict = 512};
  bool verbose = false, no_reasoning = false;
  std::string color = "off";
};

void print(std::string_view text) { write_stdout(text); }

// Prints a reply as it streams, its reasoning (<think>...</think>, gpt-oss's analysis channel)
// apart from the answer: dimmed on a terminal, left out with --no-reasoning. On a pipe without
// --no-reasoning the reply is printed as the model wrote it.
class ReplyPrinter {
 public:
  // reasoning_open: the prompt left the model inside <think> (prompt_opens_reasoning's tail).
  ReplyPrinter(const ChatFormat& format, std::string reasoning_open, bool hide)
      : hide_(hide), dim_(isatty(STDOUT_FILENO)) {
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
std::string opens_reasoning(const ChatSession& session, const std::string& line, const ChatFormat& format) {
  if (format.reasoning_open().empty()) return "";
  nlohmann::ordered_json messages = session.messages();
  messages.push_back({{"role", "user"}, {"content", line}});
  const ChatTemplate& t = session.chat_template();
  return prompt_opens_reasoning(format, t.render(messages, {.bos_token = t.bos_token(), .eos_token = t.eos_token()}));
}

// One user turn: a line, or several between """ marks (as Ollama takes them) or joined by
// trailing backslashes (as llama-cli does). `"""` alone on the first line opens the block.
LineReader::Input read_turn(LineReader& in) {
  LineReader::Input turn = in.read("> ");
  const std::string quotes = "\"\"\"";
  bool quoted = turn.kind == LineReader::Input::Line && turn.text.starts_with(quotes);
  if (turn.kind != LineReader::Input::Line || (!quoted && !turn.text.ends_with("\\"))) return turn;
  std::vector<std::string> lines;
  for (std::string line = quoted ? turn.text.substr(3) : turn.text;;) {
    bool last = quoted ? line.ends_with(quotes) : !line.ends_with("\\");
    if (quoted && last) line.resize(line.size() - 3);  // the closing """
    if (!quoted && !last) line.pop_back();             // the backslash
    lines.push_back(line);
    if (last) break;
    LineReader::Input next = in.read("... ");
    if (next.kind != LineReader::Input::Line) return {next.kind, "", true};  // the unfinished turn is dropped
    line = next.text;
  }
  if (quoted && lines.size() > 1 && lines.front().empty()) lines.erase(lines.begin());
  return {LineReader::Input::Line, fmt::format("{}", fmt::join(lines, "\n")), true};
}

// --verbose: what `run` prints, after each reply.
void print_stats(const ChatTurnStats& s) {
  double prompt_tps = s.prompt_seconds > 0 ? s.evaluated_tokens / s.prompt_seconds : 0;
  double gen_tps = s.generation_seconds > 0 ? s.generated_tokens / s.generation_seconds : 0;
  std::fprintf(stderr, "%s\n",
               fmt::format("prompt: {} ({} cached), {:.1f} tokens/s; generation: {}, {:.1f} tokens/s; first token "
                           "after {:.2f} s",
                           count(s.evaluated_tokens, "token"), s.reused_tokens, prompt_tps,
                           count(s.generated_tokens, "token"), gen_tps, s.first_token_seconds)
                   .c_str());
}

// One reply; false when it failed (its error line printed).
bool answer(ChatState& st, const std::string& text) {
  try {
    ChatFormat format = ChatFormat::detect(st.session->chat_template().source());
    ReplyPrinter printer(format, opens_reasoning(*st.session, text, format), st.no_reasoning);
    st.session->reply(
        text, st.max_tokens(), [&](std::string_view piece) { printer.push(piece); }, interrupted);
    printer.finish();
    print("\n");
    const ChatTurnStats& s = st.session->last_turn();
    if (s.dropped_turns)
      std::fprintf(stderr, "%s\n",
                   fmt::format("(dropped the oldest {} to fit the context of {})", count(s.dropped_turns, "turn"),
                               count(st.model.engine->n_ctx(), "token"))
                       .c_str());
    if (st.verbose) print_stats(s);
    return true;
  } catch (const Error& e) {
    print("");
    std::fprintf(stderr, "error: %s\n", e.what());
    return false;
  }
}

// Runs the conversation; returns how many turns or commands failed.
int converse(ChatState& st, LineReader& input) {
  int failures = 0;
  for (;;) {
    clear_interrupt();
    LineReader::Input in = read_turn(input);
    if (in.kind == LineReader::Input::End || (in.kind == LineReader::Input::Interrupted && !in.typed)) {
      if (input.terminal()) print("\n");  // the shell's prompt starts on a line of its own
      return failures;
    }
    if (in.kind == LineReader::Input::Interrupted) {  // Ctrl-C on a typed line clears it
      print("\n");
      continue;
    }
    if (in.text.starts_with("/")) {
      try {
        if (run_chat_command(st, in.text) == ChatCommand::Exit) return failures;
      } catch (const Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        ++failures;
      }
      continue;
    }
    if (in.text.find_first_not_of(" \t") == std::string::npos) continue;
    if (!answer(st, in.text)) ++failures;
  }
}

int chat(ChatOptions& o) {
  take_positional_model(o.model, o.positional, names_model);
  if (!o.positional.empty()) throw Error(fmt::format("{}: no such file (a model is a .gguf file)", o.positional[0]));
  ChatState st{.model_options = o.model,
               .gen = o.gen,
               .sampling = sampler_options(o.gen),
               .verbose = o.verbose,
               .no_reasoning = o.no_reasoning};
  st.system = o.system_file ? read_text_file(*o.system_file) : o.system.value_or("");
  st.start();
  if (st.session->chat_template().is_fallback())
    std::fprintf(stderr, "%s has no chat template: using ChatML\n", st.model.file->name().c_str());
  LineReader input(use_color(o.color));
  std::fprintf(stderr, "Send a message (/? for help)\n");
  SigintScope sigint(false);  // every Ctrl-C is the chat's: a reply stops, an empty prompt leaves
  int failures = 0;
  if (o.first) {
    if (input.terminal()) print("> " + *o.first + "\n");  // as if typed
    if (!answer(st, *o.first)) ++failures;
  }
  failures += converse(st, input);
  return input.terminal() ? 0 : failures;  // at a terminal the errors were seen; a script needs the status
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("chat", "Hold a conversation with the model (one line of input per turn)");
  auto o = std::make_shared<ChatOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("model", o->positional, "The model, as -m")->type_name("MODEL")->expected(0, 1);
  auto* system =
      cmd->add_option("--system,--system-prompt", o->system, "System message (also -sys)")->type_name("TEXT");
  cmd->add_option("--system-file,--system-prompt-file", o->system_file, "System message from a file (also -sysf)")
      ->type_name("FILE")
      ->check(non_empty)
      ->check(CLI::Validator(
          [](std::string& f) -> std::string { return f == "-" ? "standard input holds the turns" : ""; }, ""))
      ->excludes(system);
  cmd->add_option("-p,--prompt", o->first,
                  "The first message, answered before any input is read (as llama-cli -cnv -p; the system message "
                  "is --system)")
      ->type_name("TEXT");
  add_generation_options(cmd, o->gen, false);  // -n is per reply; ChatSession stops at end of turn
  cmd->add_flag("-v,--verbose", o->verbose, "After every reply: prompt and generation tokens/s, time to first token");
  cmd->add_flag("--no-reasoning", o->no_reasoning,
                "Leave a thinking model's reasoning out of the printed reply (shown dimmed on a terminal otherwise)");
  add_mmproj_options(cmd, o->model);
  add_jinja_flag(cmd);
  add_color_option(cmd, o->color);
  cmd->footer(std::string("Slash commands (a line that starts with /):\n") + kChatCommandsHelp);
  cmd->callback([o] {
    if (chat(*o)) throw CLI::RuntimeError(1);  // a turn failed (its error line was printed)
  });
}

}  // namespace vkllm::cli
