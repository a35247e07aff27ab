// POST /v1/completions and /v1/chat/completions: check the request, build the prompt and the
// reply's plan (constraint, how to read it), queue it, and answer with one JSON object or a
// stream of server-sent events (ReplyBuilder).
#include <fmt/format.h>
#include <chrono>
#include <nlohmann/json.hpp>

#include "error.h"
#include "serve/api.h"
#include "serve/openai.h"
#include "serve/reply_builder.h"
#include "serve/reply_plan.h"
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

// A request that ended without its reply: cancelled, generation could not go on (a grammar no
// token of the vocabulary continues: the request's fault, so a 400), or the engine failed (500).
std::optional<ApiError> failure(const GenerationEvent& e) {
  if (e.finish == RequestFinish::Cancelled) return cancelled_error();
  if (e.finish == RequestFinish::Error) return bad_request(e.error);
  if (e.finish == RequestFinish::Fault) return ApiError(500, "server_error", e.error);
  return std::nullopt;
}

// Streams the request's events as server-sent events until done or the client is gone.
void stream_events(Subscription& sub, ReplyBuilder& reply, bool chat, bool include_usage, const ResponseHeader& h,
                   RequestRecord& record, const BodyWriter& write, const ClientAlive& alive) {
  if (chat && !write(sse(reply.first_chunk()))) return;
  GenerationEvent e;
  for (;;) {
    if (!sub.handle->next(e, kPoll)) {
      if (!alive()) return;
      continue;
    }
    if (e.done) record.usage = e.usage;
    for (const json& c : reply.chunks(e))
      if (!write(sse(c))) return;
    if (e.done) break;
  }
  if (std::optional<ApiError> err = failure(e)) {
    write(sse(error_body(err->status, err->type, err->what())));
    return;
  }
  if (include_usage && !write(sse(usage_chunk_json(h, e.usage)))) return;
  write("data: [DONE]\n\n");
}

// Past reasoning where the template reads it: templates that read an assistant message's
// `thinking` (LFM2.5's, gpt-oss's) get its reasoning_content there too, as llama.cpp hands it to
// them (common/parsers/lfm2.cpp, gpt-oss.cpp). gpt-oss refuses a tool-call turn with both content
// and thinking, and llama.cpp drops the content of such a turn: so does this.
json template_messages(const ChatTemplate& t, const json& messages, ToolCallFormat tools) {
  const std::string& src = t.source();
  bool reads_thinking = src.find("message.thinking") != std::string::npos ||
                        src.find("message['thinking']") != std::string::npos ||
                        src.find("message[\"thinking\"]") != std::string::npos;
  if (!reads_thinking) return messages;
  json out = messages;
  for (json& m : out) {
    if (!m.is_object() || !m.contains("reasoning_content") || !m["reasoning_content"].is_string() ||
        m.contains("thinking"))
      continue;
    m["thinking"] = m["reasoning_content"];
    bool calls = m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty();
    if (tools == ToolCallFormat::GptOss && calls) m.erase("content");
  }
  return out;
}

}  // namespace

// The chat template's rendering of the messages (with the request's tools and kwargs); a
// prefilled assistant message is written after the generation prompt, left open.
PrefilledPrompt Api::chat_prompt(const CompletionParams& p) const {
  const ChatTemplate* t = options_.chat_template.get();
  if (!t) throw ApiError(501, "not_implemented_error", "this model has no usable chat template");
  if (format_.tools == ToolCallFormat::Unknown && p.tools.is_array() && !p.tools.empty())
    throw bad_request(fmt::format(
        "this model's chat template ({}) writes tool calls in a syntax vkllm does not read, so it is served without "
        "tools: send the request without 'tools'",
        format_.unknown));
  ChatTemplate::Options o{.bos_token = t->bos_token(),
                          .eos_token = t->eos_token(),
                          .add_generation_prompt = p.add_generation_prompt,
                          .tools = p.tools,
                          .extra = p.extra};
  json messages = template_messages(*t, p.messages, format_.tools);
  std::string text = t->render(messages, o);
  if (!p.prefill)
    return {.text = text,
            .opened = p.add_generation_prompt ? prompt_opens_reasoning(format_, text) : "",
            .reasoning_off = p.add_generation_prompt && prompt_closes_reasoning(format_, text)};
  o.add_generation_prompt = false;
  return prefill_prompt(format_, text, t->render(messages, o), *p.prefill);
}

HttpReply Api::completions(const HttpRequest& r, bool chat, const ClientAlive& alive) const {
  json body = parse_body(r.body);
  const Tokenizer& tok = gen_.tokenizer();
  CompletionParams p = parse_completion(body, chat, tok.vocab_size());
  PrefilledPrompt prompt = chat ? chat_prompt(p) : PrefilledPrompt{};
  const std::string& chat_text = prompt.text;
  ReplyPlan plan = plan_reply(p, format_, prompt, *grammars_, tok);
  PromptInput input = prompt_input(p, chat_text);
  GenerationRequest req{.prompt = std::move(input.tokens),
                        .images = std::move(input.images),
                        .max_tokens = p.max_tokens,
                        .sampling = p.sampling,
                        .stop = p.stop,
                        .ignore_eos = p.ignore_eos,
                        .constraint = plan.constraint,
                        .logprobs = p.logprobs,
                        .top_logprobs = p.top_logprobs};
  if (req.prompt.empty()) throw bad_request("the prompt is empty");
  if (req.prompt.size() >= gen_.n_ctx())
    throw bad_request(
        fmt::format("the prompt has {} tokens, more than fit the context of {} tokens with one to "
                    "generate",
                    req.prompt.size(), gen_.n_ctx()));
  auto record = std::make_shared<RequestRecord>(
      RequestRecord{.usage = {.prompt_tokens = uint32_t(req.prompt.size())}, .prompt_tokens = req.prompt});
  if (options_.log_prompts) record->prompt = chat ? chat_text : tok.decode(req.prompt);
  ResponseHeader h = new_response_header(chat, options_.model_id);
  auto reply = std::make_shared<ReplyBuilder>(h, plan.parse, p.tools, tok, p.logprobs);
  bool usage = p.include_usage;
  if (req.max_tokens == 0u) {  // nothing to generate: no slot needed
    GenerationEvent none{
        .done = true, .finish = RequestFinish::Length, .usage = {.prompt_tokens = uint32_t(req.prompt.size())}};
    if (!p.stream) return {.body = dump(reply->response(none)), .record = record};
    return {.content_type = "text/event-stream",
            .stream =
                [reply, h, none, usage](const BodyWriter& w, const ClientAlive&) {
                  if (h.chat && !w(sse(reply->first_chunk()))) return;
                  for (const json& c : reply->chunks(none))
                    if (!w(sse(c))) return;
                  if (usage && !w(sse(usage_chunk_json(h, none.usage)))) return;
                  w("data: [DONE]\n\n");
                },
            .record = record};
  }
  auto sub = std::make_shared<Subscription>();
  sub->handle = gen_.submit(std::move(req));
  if (p.stream)
    return {.content_type = "text/event-stream",
            .stream = [sub, reply, h, usage, record](
                          const BodyWriter& w,
                          const ClientAlive& a) { stream_events(*sub, *reply, h.chat, usage, h, *record, w, a); },
            .record = record};
  GenerationEvent e;
  for (;;) {
    if (!sub->handle->next(e, kPoll)) {
      if (!alive()) throw ApiError(499, "client_closed", "the client closed the connection");
      continue;
    }
    reply->add(e);
    if (e.done) break;
  }
  record->usage = e.usage;
  if (std::optional<ApiError> err = failure(e)) throw *err;
  return {.body = dump(reply->response(e)), .record = record};
}

}  // namespace vkllm::serve
