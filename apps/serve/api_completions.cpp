// POST /v1/completions and /v1/chat/completions: check the request, build the prompt, queue it,
// and answer with one JSON object or a stream of server-sent events.
#include <fmt/format.h>
#include <chrono>
#include <nlohmann/json.hpp>

#include "error.h"
#include "serve/api.h"
#include "serve/openai.h"
#include "text/chat_template.h"

namespace vkllm::serve {

namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);  // how often a waiting handler looks at its client

// Cancels the request when the reply is done with it, however it ends: a client that leaves
// frees its slot at the scheduler's next step. (A finished request ignores the cancel.)
struct Subscription {
  std::shared_ptr<GenerationHandle> handle;
  Subscription() = default;
  Subscription(const Subscription&) = delete;
  ~Subscription() {
    if (handle) handle->cancel();
  }
};

ApiError cancelled_error() {
  return ApiError(503, "unavailable_error", "the request was cancelled: the server is stopping");
}

// Streams the request's events as server-sent events until done or the client is gone.
void stream_events(Subscription& sub, const ResponseHeader& h, bool include_usage, const BodyWriter& write,
                   const ClientAlive& alive) {
  if (h.chat && !write(sse(chunk_json(h, "", std::nullopt, true)))) return;
  GenerationEvent e;
  for (;;) {
    if (!sub.handle->next(e, kPoll)) {
      if (!alive()) return;
      continue;
    }
    if (!e.text.empty() && !write(sse(chunk_json(h, e.text, std::nullopt)))) return;
    if (e.done) break;
  }
  if (e.finish == RequestFinish::Cancelled) {
    ApiError err = cancelled_error();
    write(sse(error_body(err.status, err.type, err.what())));
    return;
  }
  if (!write(sse(chunk_json(h, "", e.finish)))) return;
  if (include_usage && !write(sse(usage_chunk_json(h, e.usage)))) return;
  write("data: [DONE]\n\n");
}

}  // namespace

// The prompt's tokens: the chat template's rendering of the messages, or the completion prompt.
std::vector<int32_t> Api::prompt_tokens(const CompletionParams& p) const {
  const Tokenizer& tok = gen_.tokenizer();
  if (!p.chat) {
    if (auto* ids = std::get_if<std::vector<int32_t>>(&p.prompt)) return *ids;
    return tok.encode(std::get<std::string>(p.prompt), true, true);
  }
  const ChatTemplate* t = options_.chat_template.get();
  if (!t) throw ApiError(501, "not_implemented_error", "this model has no usable chat template");
  ChatTemplate::Options o{.bos_token = t->bos_token(), .eos_token = t->eos_token(), .tools = p.tools, .extra = p.extra};
  std::string text = t->render(p.messages, o);
  // The template may write the BOS text itself; the tokenizer adds it only when it did not.
  bool has_bos = !o.bos_token.empty() && text.starts_with(o.bos_token);
  return tok.encode(text, tok.add_bos() && !has_bos, true);
}

HttpReply Api::completions(const HttpRequest& r, bool chat, const ClientAlive& alive) const {
  json body = parse_body(r.body);
  CompletionParams p = parse_completion(body, chat, gen_.tokenizer().vocab_size());
  GenerationRequest req{.prompt = prompt_tokens(p),
                        .max_tokens = p.max_tokens,
                        .sampling = p.sampling,
                        .stop = p.stop,
                        .ignore_eos = p.ignore_eos};
  if (req.prompt.empty()) throw bad_request("the prompt is empty");
  if (req.prompt.size() >= gen_.n_ctx())
    throw bad_request(
        fmt::format("the prompt has {} tokens, more than fit the context of {} tokens with one to "
                    "generate",
                    req.prompt.size(), gen_.n_ctx()));
  ResponseHeader h = new_response_header(chat, options_.model_id);
  Usage zero{.prompt_tokens = uint32_t(req.prompt.size())};
  if (req.max_tokens == 0u) {  // nothing to generate: no slot needed
    if (!p.stream) return {.body = dump(completion_json(h, "", RequestFinish::Length, zero))};
    bool usage = p.include_usage;
    return {.content_type = "text/event-stream", .stream = [h, zero, usage](const BodyWriter& w, const ClientAlive&) {
              if (h.chat && !w(sse(chunk_json(h, "", std::nullopt, true)))) return;
              if (!w(sse(chunk_json(h, "", RequestFinish::Length)))) return;
              if (usage && !w(sse(usage_chunk_json(h, zero)))) return;
              w("data: [DONE]\n\n");
            }};
  }
  auto sub = std::make_shared<Subscription>();
  sub->handle = gen_.submit(std::move(req));
  if (p.stream) {
    bool usage = p.include_usage;
    return {.content_type = "text/event-stream", .stream = [sub, h, usage](const BodyWriter& w, const ClientAlive& a) {
              stream_events(*sub, h, usage, w, a);
            }};
  }
  std::string text;
  GenerationEvent e;
  for (;;) {
    if (!sub->handle->next(e, kPoll)) {
      if (!alive()) throw ApiError(499, "client_closed", "the client closed the connection");
      continue;
    }
    text += e.text;
    if (e.done) break;
  }
  if (e.finish == RequestFinish::Cancelled) throw cancelled_error();
  return {.body = dump(completion_json(h, text, e.finish, e.usage))};
}

}  // namespace vkllm::serve
