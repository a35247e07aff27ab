// Response objects and stream chunks from generation events.
#include "serve/reply_builder.h"

#include <fmt/format.h>
#include <random>

#include "text/tokenizer.h"

namespace vkllm::serve {

namespace {

std::string random_call_id() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  const char* alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += alphabet[rng() % 62];
  return id;
}

// What `now` adds to `sent` when it extends it ("" when it does not, e.g. a call that turned out
// to be text at the very end: what was streamed stays).
std::string added(const std::string& sent, const std::string& now) {
  return now.size() > sent.size() && now.starts_with(sent) ? now.substr(sent.size()) : "";
}

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(int(c));
  return b;
}

}  // namespace

ReplyBuilder::ReplyBuilder(ResponseHeader header, std::optional<ChatReplyOptions> parse, json tools,
                           const Tokenizer& tokenizer, bool logprobs)
    : h_(std::move(header)), parse_(std::move(parse)), tools_(std::move(tools)), tok_(tokenizer), logprobs_(logprobs) {}

ChatReply ReplyBuilder::read(bool partial) const {
  if (!parse_) return {.content = text_};
  ChatReplyOptions o = *parse_;
  o.tools = &tools_;
  return parse_chat_reply(text_, o, partial);
}

std::string& ReplyBuilder::call_id(size_t i) {
  while (ids_.size() <= i) ids_.push_back({});
  return ids_[i];
}

json ReplyBuilder::delta(const ChatReply& now) {
  json d = json::object();
  if (std::string r = added(sent_.reasoning, now.reasoning); !r.empty()) d["reasoning_content"] = r;
  if (std::string c = added(sent_.content, now.content); !c.empty()) d["content"] = c;
  if (now.reasoning.starts_with(sent_.reasoning)) sent_.reasoning = now.reasoning;
  if (now.content.starts_with(sent_.content)) sent_.content = now.content;
  json calls = json::array();
  for (size_t i = 0; i < now.tool_calls.size(); ++i) {
    const ToolCall& c = now.tool_calls[i];
    if (i >= sent_.tool_calls.size()) {
      std::string& id = call_id(i);
      id = c.id.empty() ? random_call_id() : c.id;
      calls.push_back({{"index", i},
                       {"id", id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
      sent_.tool_calls.push_back(c);
    } else if (std::string a = added(sent_.tool_calls[i].arguments, c.arguments); !a.empty()) {
      calls.push_back({{"index", i}, {"function", {{"arguments", a}}}});
      sent_.tool_calls[i].arguments = c.arguments;
    }
  }
  if (!calls.empty()) d["tool_calls"] = calls;
  return d;
}

// Chat: {"content": [{token, logprob, bytes, top_logprobs}]}; completions: OpenAI's legacy
// {tokens, token_logprobs, top_logprobs, text_offset}.
json ReplyBuilder::logprobs_json(const std::vector<TokenLogprob>& lp, size_t offset) const {
  if (!logprobs_) return nullptr;
  if (h_.chat) {
    json content = json::array();
    for (const TokenLogprob& t : lp) {
      std::string piece = tok_.piece(t.token);
      json top = json::array();
      for (auto [id, l] : t.top) {
        std::string p = tok_.piece(id);
        top.push_back({{"token", p}, {"logprob", l}, {"bytes", bytes_of(p)}});
      }
      content.push_back({{"token", piece}, {"logprob", t.logprob}, {"bytes", bytes_of(piece)}, {"top_logprobs", top}});
    }
    return {{"content", content}, {"refusal", nullptr}};
  }
  json tokens = json::array(), values = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenLogprob& t : lp) {
    std::string piece = tok_.piece(t.token);
    tokens.push_back(piece);
    values.push_back(t.logprob);
    json top = json::object();
    for (auto [id, l] : t.top) top[tok_.piece(id)] = l;
    tops.push_back(top);
    offsets.push_back(offset);
    offset += piece.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json ReplyBuilder::chunk(json delta_or_text, const std::vector<TokenLogprob>& lp, std::optional<std::string> finish) {
  json j = header_json(h_, true);
  json choice = {{"index", 0}};
  if (h_.chat)
    choice["delta"] = std::move(delta_or_text);
  else
    choice["text"] = std::move(delta_or_text);
  choice["logprobs"] = lp.empty() ? json(nullptr) : logprobs_json(lp, streamed_bytes_);
  for (const TokenLogprob& t : lp) streamed_bytes_ += tok_.piece(t.token).size();
  choice["finish_reason"] = finish ? json(*finish) : json(nullptr);
  j["choices"] = json::array({choice});
  return j;
}

json ReplyBuilder::first_chunk() { return chunk({{"role", "assistant"}, {"content", ""}}, {}, std::nullopt); }

std::string ReplyBuilder::finish_reason(const GenerationEvent& last, const ChatReply& reply) const {
  if (last.finish == RequestFinish::Length) return "length";
  return reply.tool_calls.empty() ? "stop" : "tool_calls";
}

std::vector<json> ReplyBuilder::chunks(const GenerationEvent& e) {
  text_ += e.text;
  pending_logprobs_.insert(pending_logprobs_.end(), e.logprobs.begin(), e.logprobs.end());
  std::vector<json> out;
  json d;
  ChatReply now;
  if (!h_.chat) {
    d = e.text;
  } else {
    now = read(!e.done);
    d = delta(now);
  }
  bool has = h_.chat ? !d.empty() : !e.text.empty();
  if (has || (!pending_logprobs_.empty() && !e.done)) {
    out.push_back(chunk(std::move(d), pending_logprobs_, std::nullopt));
    pending_logprobs_.clear();
  }
  if (!e.done || (e.finish != RequestFinish::Stop && e.finish != RequestFinish::Length)) return out;
  if (!pending_logprobs_.empty()) {
    out.push_back(chunk(h_.chat ? json::object() : json(""), pending_logprobs_, std::nullopt));
    pending_logprobs_.clear();
  }
  out.push_back(chunk(h_.chat ? json::object() : json(""), {}, finish_reason(e, now)));
  if (!e.stop.empty()) out.back()["choices"][0]["stop_sequence"] = e.stop;
  return out;
}

void ReplyBuilder::add(const GenerationEvent& e) {
  text_ += e.text;
  all_logprobs_.insert(all_logprobs_.end(), e.logprobs.begin(), e.logprobs.end());
}

json ReplyBuilder::response(const GenerationEvent& last) const {
  json j = header_json(h_, false);
  ChatReply reply = read(false);
  json choice = {
      {"index", 0}, {"logprobs", logprobs_json(all_logprobs_, 0)}, {"finish_reason", finish_reason(last, reply)}};
  if (!last.stop.empty()) choice["stop_sequence"] = last.stop;
  if (h_.chat) {
    json message = {{"role", "assistant"}};
    message["content"] = reply.content.empty() && !reply.tool_calls.empty() ? json(nullptr) : json(reply.content);
    if (!reply.reasoning.empty()) message["reasoning_content"] = reply.reasoning;
    if (!reply.tool_calls.empty()) {
      json calls = json::array();
      for (size_t i = 0; i < reply.tool_calls.size(); ++i) {
        const ToolCall& c = reply.tool_calls[i];
        calls.push_back({{"id", c.id.empty() ? random_call_id() : c.id},
                         {"type", "function"},
                         {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
      }
      message["tool_calls"] = calls;
    }
    choice["message"] = message;
  } else {
    choice["text"] = reply.content;
  }
  j["choices"] = json::array({choice});
  j["usage"] = usage_json(last.usage);
  j["timings"] = timings_json(last.usage);
  return j;
}

}  // namespace vkllm::serve
