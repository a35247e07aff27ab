// Reasoning (think tags, harmony channels) and the dispatch to the tool-call parsers.
#include "text/chat/chat_output.h"

#include <optional>

#include "text/chat/tool_call_parsers.h"

namespace vkllm {

namespace {

constexpr std::string_view kSpace = " \t\r\n";

std::string_view ltrim(std::string_view s) {
  size_t i = s.find_first_not_of(kSpace);
  return i == std::string_view::npos ? std::string_view() : s.substr(i);
}

std::string_view rtrim(std::string_view s) {
  size_t i = s.find_last_not_of(kSpace);
  return i == std::string_view::npos ? std::string_view() : s.substr(0, i + 1);
}

// <think>REASONING</think>CONTENT (the opening tag absent when the prompt opened it). Returns the
// content part, or nothing while it is still unknown whether the reply starts with reasoning.
// Reasoning is trimmed, and so is the space between it and the content; while streaming, the
// reasoning is cut at its last non-space character, so that it only ever grows.
std::optional<std::string_view> split_think(std::string_view text, const ChatReplyOptions& o, bool partial,
                                            std::string& reasoning) {
  constexpr std::string_view open = "<think>", close = "</think>";
  size_t start = 0;
  if (!o.reasoning_open) {
    std::string_view head = ltrim(text);
    if (head.starts_with(open)) {
      start = text.size() - head.size() + open.size();
    } else {
      if (partial && open.starts_with(head)) return std::nullopt;  // "", "<", "<thi", ...
      return text;
    }
  }
  size_t end = text.find(close, start);
  if (end == std::string_view::npos) {
    std::string_view r = text.substr(start);
    reasoning = std::string(partial ? rtrim(ltrim(hold_back(r, {close}))) : rtrim(ltrim(r)));
    return std::string_view();
  }
  reasoning = std::string(rtrim(ltrim(text.substr(start, end - start))));
  return ltrim(text.substr(end + close.size()));
}

// gpt-oss harmony: messages `<|start|>assistant<|channel|>C( to=R)?( <|constrain|>json)?<|message|>
// BODY` ending in <|end|>, <|call|> or <|return|> (the first message's <|start|>assistant is in
// the prompt). Analysis bodies are reasoning, final and commentary bodies content, a message to
// functions.NAME a tool call with the body as its arguments.
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
    size_t to = header.find("to=functions.");
    size_t channel_at = header.find("<|channel|>");
    std::string_view channel;
    if (channel_at != std::string_view::npos) {
      channel = header.substr(channel_at + 11);
      channel = channel.substr(0, channel.find_first_of(" <"));
    }
    if (to != std::string_view::npos && o.tool_calls) {
      std::string_view name = header.substr(to + 13);
      name = name.substr(0, name.find_first_of(" <"));
      r.tool_calls.push_back({std::string(name), std::string(rtrim(ltrim(text))), ""});
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

std::string_view hold_back(std::string_view text, std::initializer_list<std::string_view> markers) {
  size_t keep = text.size();
  for (std::string_view m : markers)
    for (size_t n = std::min(m.size() - 1, text.size()); n > 0; --n)
      if (text.substr(text.size() - n) == m.substr(0, n)) {
        keep = std::min(keep, text.size() - n);
        break;
      }
  return text.substr(0, keep);
}

ChatReply parse_chat_reply(std::string_view text, const ChatReplyOptions& o, bool partial) {
  ChatReply r;
  if (o.format.harmony()) {
    parse_harmony(text, o, partial, r);
    return r;
  }
  std::string_view rest = text;
  if (o.split_reasoning && (o.format.think_tags || o.reasoning_open)) {
    std::optional<std::string_view> content = split_think(text, o, partial, r.reasoning);
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
