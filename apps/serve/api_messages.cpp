// POST /v1/messages and /v1/messages/count_tokens: the Messages request rewritten as a chat
// completion (anthropic.h) and run by the chat route itself, so queueing, cancellation and the
// reading of tool calls and reasoning are the chat route's; only the shapes change.
#include <memory>

#include "serve/anthropic.h"
#include "serve/api.h"
#include "serve/openai.h"

namespace vkllm::serve {

HttpReply Api::messages(const HttpRequest& r, const ClientAlive& alive) const {
  HttpRequest chat = r;
  chat.body = dump(anthropic_to_openai(parse_body(r.body), false));
  HttpReply reply = completions(chat, true, alive);
  if (!reply.stream) {
    reply.body = dump(anthropic_message(parse_body(reply.body)));
    return reply;
  }
  // The chat route's chunks pass through the converter as they are written.
  std::string id = anthropic_message_id(new_response_header(true, options_.model_id).id);
  auto converter = std::make_shared<AnthropicStream>(id, options_.model_id);
  reply.stream = [converter, chunks = std::move(reply.stream)](const BodyWriter& write, const ClientAlive& a) {
    if (!write(converter->start())) return;
    bool open = true;
    chunks(
        [&](std::string_view text) {
          std::string events = converter->feed(text);
          return open = events.empty() || write(events);
        },
        a);
    if (open) write(converter->finish());
  };
  return reply;
}

HttpReply Api::count_tokens(const HttpRequest& r) const {
  json body = anthropic_to_openai(parse_body(r.body), true);
  CompletionParams p = parse_completion(body, true, gen_.tokenizer().vocab_size());
  size_t n = prompt_input(p, chat_prompt(p).text).tokens.size();
  return {.body = dump(json{{"input_tokens", n}})};
}

}  // namespace vkllm::serve
