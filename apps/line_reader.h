// The chat's input: lines from a terminal through libedit (editing, history), or from a pipe.
// A Ctrl-C while waiting for a line is reported, with whether anything had been typed, so the
// chat can clear the line or leave; Ctrl-D (or the end of a pipe) ends the input.
#pragma once
#include <memory>
#include <string>

namespace vkllm::cli {

class LineReader {
 public:
  // color: the prompt in green (on a terminal).
  explicit LineReader(bool color = false);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  struct Input {
    enum Kind { Line, Interrupted, End } kind = End;
    std::string text;    // the line, without its newline
    bool typed = false;  // Interrupted: something had been typed on the line
  };
  // One line; `prompt` is shown on a terminal only. Needs a SigintScope for Ctrl-C to be seen.
  Input read(const std::string& prompt);
  bool terminal() const { return terminal_; }

 private:
  struct Editor;
  bool terminal_, color_;
  std::unique_ptr<Editor> editor_;
};

}  // namespace vkllm::cli
