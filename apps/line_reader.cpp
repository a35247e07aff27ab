// libedit's native interface (histedit.h): unlike its readline emulation it says what was typed
// when a signal ends el_gets, which the chat needs to tell "clear this line" from "leave".
#include "line_reader.h"

#include <histedit.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>

#include "interrupt.h"

namespace vkllm::cli {

struct LineReader::Editor {
  EditLine* el = nullptr;
  History* history = nullptr;
  HistEvent event{};
  std::string prompt;  // el_gets asks for it through prompt_of

  static char* prompt_of(EditLine* el) {
    Editor* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    return self->prompt.data();
  }

  Editor() {
    el = el_init("vkllm", stdin, stdout, stderr);
    history = history_init();
    ::history(history, &event, H_SETSIZE, 1000);
    el_set(el, EL_HIST, ::history, history);
    el_set(el, EL_EDITOR, "emacs");
    el_set(el, EL_CLIENTDATA, this);
    // '\1' brackets the colour codes so that libedit does not count them as columns.
    el_set(el, EL_PROMPT_ESC, prompt_of, '\1');
    el_set(el, EL_SIGNAL, 0);  // Ctrl-C is the chat's: el_gets returns with EINTR
  }
  ~Editor() {
    history_end(history);
    el_end(el);
  }
};

LineReader::LineReader(bool color) : terminal_(isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)), color_(color) {
  if (terminal_) editor_ = std::make_unique<Editor>();
}

LineReader::~LineReader() = default;

LineReader::Input LineReader::read(const std::string& prompt) {
  if (!terminal_) {
    std::string line;
    if (!std::getline(std::cin, line)) return {interrupted() ? Input::Interrupted : Input::End, "", false};
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return {Input::Line, line, true};
  }
  editor_->prompt = color_ ? "\1\033[32m\1" + prompt + "\1\033[0m\1" : prompt;
  int count = 0;
  const char* raw = el_gets(editor_->el, &count);
  if (!raw) {
    const LineInfo* li = el_line(editor_->el);
    bool typed = li && li->lastchar > li->buffer;
    if (count < 0 && interrupted()) return {Input::Interrupted, "", typed};
    return {Input::End, "", false};
  }
  std::string line(raw, size_t(count));
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (!line.empty()) ::history(editor_->history, &editor_->event, H_ENTER, line.c_str());
  return {Input::Line, line, true};
}

}  // namespace vkllm::cli
