// Reasoning (think tags, harmony channels) and the dispatch to the tool-call parsers.
#include "text/chat/chat_output.h"

#include <optional>

#include "text/chat/tool_call_parsers.h"

namespace vkllm {

namespace {

constexpr std::string_view kWhitespace = " \t\r\n";

std::string_view ltrim(std::string_view s) {
  size_t i = s.find_first_not_of(kWhitespace);
  return i == std::string_view::npos ? std::string_view() : s.substr(i);
}

std::string_view rtrim(std::string_view s) {
  size_t i = s.find_last_not_of(kWhitespace);
  return i == std::string_view::npos ? std::string_view() : s.substr(0, i + 1);
}

// OPEN REASONING CLOSE CONTENT (<think>...</think>; the opening tag absent when the prompt opened
// it). Fills r.reasoning and returns the content part, or nothing while it is still unknown
// whether the reply starts with reasoning. Reasoning is trimmed, and so is the space between it
// and the content; while streaming, the reasoning is cut at its last non-space character, so
// that it only ever grows. Where the family calls from inside its reasoning (Qwen3.5:
// ChatFormat::call_in_reasoning), the reasoning ends at the first of the closing tag and the call
// marker, as llama.cpp reads it; after a marker the calls are read into r, and nothing is
// returned. Whichever comes first decides, so a longer reply never undoes a shorter one's reading.
std::optional<std::string_view> split_think(std::string_view text, const ChatReplyOptions& o, bool partial,
                                            ChatReply& r) {
  std::string_view open = o.format.reasoning_open(), close = o.format.reasoning_close();
  if (open.empty()) open = "<think>", close = "</think>";
  size_t start = 0;
  if (o.reasoning_open.empty()) {
    std::string_view head = ltrim(text);
    if (head.starts_with(open)) {
      start = text.size() - head.size() + open.size();
    } else {
      if (partial && open.starts_with(head)) return std::nullopt;  // "", "<", "<thi", ...
      return text;
    }
  }
  size_t end = text.find(close, start);
  std::vector<std::string_view> held = {close};
  if (std::string_view marker = o.format.call_in_reasoning(); o.tool_calls && !marker.empty()) {
    held.push_back(marker);
    if (size_t at = text.find(marker, start); at < end) {
      r.reasoning = std::string(rtrim(ltrim(text.substr(start, at - start))));
      parse_tool_calls(text.substr(at), o, partial, r);
      return std::nullopt;
    }
  }
  if (end != std::string_view::npos) {
    r.reasoning = std::string(rtrim(ltrim(text.substr(start, end - start))));
    return ltrim(text.substr(end + close.size()));
  }
  std::string_view rest = text.substr(start);
  r.reasoning = std::string(partial ? rtrim(ltrim(hold_back(rest, held))) : rtrim(ltrim(rest)));
  return std::string_view();
}

// gpt-oss harmony: messages `<|start|>assistant( to=R)?<|channel|>C( to=R)?( <|constrain|>json)?
// <|message|>BODY` ending in <|end|>, <|call|> or <|return|> (the first message's <|start|>assistant
// is in the prompt). Analysis bodies are reasoning, final and commentary bodies content, a message
// to functions.NAME a tool call with the body as its arguments.
void parse_harmony(std::string_view t, const ChatReplyOptions& o, bool partial, ChatReply& r) {
  constexpr std::string_view start = "<|start|>", message = "<|message|>";
  size_t pos = 0;
  while (pos < t.size()) {
    if (t.substr(pos).starts_with(start)) pos += start.size();
    size_t body = t.find(message, pos);
    if (body == std::string_view::npos) {
      if (!partial) r.content += t.substr(pos);  // no header: plain text
      return;
    }
    std::string_view header = t.substr(pos, body - pos);
    body += message.size();
    size_t stop = t.size(), next = t.size();
    for (std::string_view end : {"<|end|>", "<|call|>", "<|return|>", "<|start|>"}) {
      size_t at = t.find(end, body);
      if (at < stop) stop = at, next = end == start ? at : at + end.size();
    }
    bool open = stop == t.size();
    std::string_view text = t.substr(body, stop - body);
    if (open && partial) text = hold_back(text, {"<|end|>", "<|call|>", "<|return|>", "<|start|>"});
    // The last channel named wins ("<|channel|>commentary to=assistant<|channel|>analysis"); a
    // recipient other than the assistant makes the message a call: to a function the client
    // offered, or to a built-in tool (python, container.exec, browser.*), whose message is
    // neither content nor reasoning.
    std::string_view channel, recipient;
    if (size_t at = header.rfind("<|channel|>"); at != std::string_view::npos) {
      channel = header.substr(at + 11);
      channel = channel.substr(0, channel.find_first_of(" <"));
    }
    for (size_t at = header.find("to="); at != std::string_view::npos; at = header.find("to=", at + 3)) {
      std::string_view to = header.substr(at + 3);
      to = to.substr(0, to.find_first_of(" <"));
      if (to != "assistant") recipient = to;
    }
    if (!recipient.empty()) {
      if (recipient.starts_with("functions.") && o.tool_calls)
        r.tool_calls.push_back({std::string(recipient.substr(10)), std::string(rtrim(ltrim(text))), ""});
    } else if (channel == "analysis" && o.split_reasoning) {
      r.reasoning += text;
    } else if (channel == "analysis") {
      r.content += "<|channel|>analysis<|message|>" + std::string(text) + (open ? "" : "<|end|>");
    } else {
      r.content += text;
    }
    pos = next;
  }
}

}  // namespace

std::string_view hold_back(std::string_view text, std::span<const std::string_view> markers) {
  size_t keep = text.size();
  for (std::string_view m : markers)
    for (size_t n = std::min(m.size() - 1, text.size()); n > 0; --n)
      if (text.substr(text.size() - n) == m.substr(0, n)) {
        keep = std::min(keep, text.size() - n);
        break;
      }
  return text.substr(0, keep);
}

std::string_view hold_back(std::string_view text, std::initializer_list<std::string_view> markers) {
  return hold_back(text, std::span<const std::string_view>(markers.begin(), markers.size()));
}

ChatReply parse_chat_reply(std::string_view text, const ChatReplyOptions& o, bool partial) {
  ChatReply r;
  if (o.format.harmony()) {  // a prefilled message's header, left open by the prompt, comes first
    parse_harmony(o.reasoning_open.empty() ? text : std::string_view(o.reasoning_open + std::string(text)), o, partial,
                  r);
    return r;
  }
  std::string restored;  // reasoning_format none after a prompt that opened the reasoning
  std::string_view rest = text;
  if (!o.split_reasoning && !o.reasoning_open.empty()) {
    restored = o.reasoning_open + std::string(text);
    rest = restored;
  } else if (o.split_reasoning && (o.format.reasoning != Reasoning::None || !o.reasoning_open.empty())) {
    std::optional<std::string_view> content = split_think(text, o, partial, r);
    if (!content) return r;
    rest = *content;
  }
  if (o.tool_calls)
    parse_tool_calls(rest, o, partial, r);
  else
    r.content = std::string(rest);
  return r;
}

}  // namespace vkllm
