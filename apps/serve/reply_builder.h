// ReplyBuilder: a request's generation events as OpenAI's response. Chat replies are read with
// parse_chat_reply (reasoning_content, tool_calls) when the request is a chat; a stream sends,
// for each event, what the reply gained (content, reasoning_content and tool-call deltas, each
// call first with its id and name, then its arguments piece by piece, as OpenAI streams them),
// and the log-probabilities of the event's tokens. finish_reason is "tool_calls" when the reply
// ended in calls, "length" when max_tokens or the context cut it (even mid-call), else "stop";
// a reply ended by a stop string names it in the choice's "stop_sequence" (the Messages API's field).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "serve/openai.h"
#include "text/chat/chat_output.h"

namespace vkllm {
class Tokenizer;
}

namespace vkllm::serve {

class ReplyBuilder {
 public:
  // parse: how to read a chat reply (null: the text is the content); tools: the request's.
  ReplyBuilder(ResponseHeader header, std::optional<ChatReplyOptions> parse, json tools, const Tokenizer& tokenizer,
               bool logprobs);

  // Streams: the first chunk (chat: the role), then the chunks of each event (the last event
  // included: its deltas and then the finish chunk).
  json first_chunk();
  std::vector<json> chunks(const GenerationEvent& e);
  // A whole reply, after add() got every event.
  void add(const GenerationEvent& e);
  json response(const GenerationEvent& last) const;

 private:
  ChatReply read(bool partial) const;
  json delta(const ChatReply& now);  // what `now` adds to what was sent; updates sent_
  json logprobs_json(const std::vector<TokenLogprob>& lp, size_t offset) const;  // offset: of the first token's text
  json chunk(json delta_or_text, const std::vector<TokenLogprob>& lp, std::optional<std::string> finish);
  std::string finish_reason(const GenerationEvent& last, const ChatReply& reply) const;
  std::string& call_id(size_t i);

  ResponseHeader h_;
  std::optional<ChatReplyOptions> parse_;
  json tools_;
  const Tokenizer& tok_;
  bool logprobs_;
  std::string text_;
  std::vector<TokenLogprob> all_logprobs_, pending_logprobs_;
  ChatReply sent_;
  std::vector<std::string> ids_;  // tool call ids by index, made when a call first appears
  size_t streamed_bytes_ = 0;     // text of the tokens whose log-probabilities were sent
};

}  // namespace vkllm::serve
