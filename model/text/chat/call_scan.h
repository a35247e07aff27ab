// The small scanning steps every tool-call reader takes (tool_call_parsers.cpp, literal_calls.cpp):
// space, literal markers that may be cut short by a streaming reply, and the three ways a reader
// can end. Internal to the chat readers.
#pragma once
#include <algorithm>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/chat/chat_output.h"
#include "text/chat/json_scan.h"

namespace vkllm::call_scan {

constexpr std::string_view kSpace = " \t\r\n";

// Done (the end of the calls), Partial (the text ends inside them) or Invalid (not that syntax
// after all: then, for a whole reply, everything is content).
enum class Read { Done, Partial, Invalid };

inline std::string_view rtrim(std::string_view s) {
  size_t i = s.find_last_not_of(kSpace);
  return i == std::string_view::npos ? std::string_view() : s.substr(0, i + 1);
}

inline std::string_view trim(std::string_view s) {
  size_t i = s.find_first_not_of(kSpace);
  return i == std::string_view::npos ? std::string_view() : rtrim(s.substr(i));
}

inline size_t skip_space(std::string_view t, size_t i) {
  while (i < t.size() && kSpace.find(t[i]) != std::string_view::npos) ++i;
  return i;
}

enum class Match { Yes, Prefix, No };

// Whether `lit` is at t[i] (then i moves past it), or the text ends inside it (a marker cut
// short; where the text simply ends, No: nothing more is known to come).
inline Match expect(std::string_view t, size_t& i, std::string_view lit) {
  std::string_view rest = t.substr(std::min(i, t.size()));
  if (rest.starts_with(lit)) {
    i += lit.size();
    return Match::Yes;
  }
  return !rest.empty() && lit.starts_with(rest) ? Match::Prefix : Match::No;
}

// The Read for a marker that had to come: Partial where the text ends inside it.
inline Read missing(Match m) { return m == Match::Prefix ? Read::Partial : Read::Invalid; }

// Whether another call starts at t[i] (after space): Yes, Prefix (the text ends inside a start
// marker) or No.
inline Match next_call(std::string_view t, size_t i, std::initializer_list<std::string_view> starts) {
  size_t j = skip_space(t, i);
  Match best = Match::No;
  for (std::string_view s : starts) {
    size_t k = j;
    Match m = expect(t, k, s);
    if (m == Match::Yes) return m;
    if (m == Match::Prefix) best = m;
  }
  return best;
}

// MARKER [ ITEM, ITEM ] CLOSE at t[i], each item read by item(i) (a Read; i past it when Done);
// with a CLOSE such blocks may repeat, without one the calls end at the list's end.
template <class Item>
Read marked_lists(std::string_view t, size_t& i, std::string_view marker, std::string_view close, Item&& item) {
  for (;;) {
    i = skip_space(t, i);
    if (Match m = expect(t, i, marker); m != Match::Yes) return missing(m);
    i = skip_space(t, i);
    if (Match m = expect(t, i, "["); m != Match::Yes) return missing(m);
    for (bool first = true;; first = false) {
      i = skip_space(t, i);
      if (i >= t.size()) return Read::Partial;
      if (t[i] == ']' && first) break;
      if (Read r = item(i); r != Read::Done) return r;
      i = skip_space(t, i);
      if (i >= t.size()) return Read::Partial;
      if (t[i] == ']') break;
      if (t[i] != ',') return Read::Invalid;
      ++i;
    }
    ++i;
    if (close.empty()) return Read::Done;
    i = skip_space(t, i);
    if (Match m = expect(t, i, close); m != Match::Yes) return missing(m);
    if (Match m = next_call(t, i, {marker}); m != Match::Yes) return m == Match::Prefix ? Read::Partial : Read::Done;
  }
}

// JSON string escapes for '"', '\\' and control characters; other bytes as they are.
void append_escaped(std::string& out, std::string_view s);

// A scalar at t[i] as JSON text: one of `words` (as written, and its JSON spelling) or a JSON
// number; a word or number the text ends inside is written as far as it goes.
JsonScan scalar_value(std::string_view t, size_t& i, std::string& out,
                      std::span<const std::pair<std::string_view, std::string_view>> words);

// The formats whose argument values are not JSON (literal_calls.cpp): they write the arguments
// as JSON text as the reply comes, so that a longer reply only extends them.
// Gemma 4: <|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|>, repeated.
Read read_gemma4(std::string_view t, size_t& i, std::vector<ToolCall>& calls);
// LFM2: <|tool_call_start|>[NAME(key='text', n=1, ok=True), ...]<|tool_call_end|>, repeated.
Read read_python_calls(std::string_view t, size_t& i, std::vector<ToolCall>& calls);

}  // namespace vkllm::call_scan
