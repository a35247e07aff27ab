// ChatSession: render, tokenise, reuse the cached prefix, generate; drop old turns to fit.
#include "engine/chat_session.h"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>

#include "engine/image_prompt.h"
#include "error.h"
#include "graph/vision_encoder.h"

namespace vkllm {

namespace {

bool valid_utf8(std::string_view s) { return jinja::invalid_utf8(s) == std::string_view::npos; }

// A reply cut inside a character (or holding stray bytes) keeps its text with U+FFFD for each
// bad byte, so the conversation stays valid UTF-8 for the template.
std::string repair_utf8(std::string s) {
  for (size_t bad; (bad = jinja::invalid_utf8(s)) != std::string::npos;) s.replace(bad, 1, "\xef\xbf\xbd");
  return s;
}

}  // namespace

nlohmann::ordered_json assistant_message(std::string_view reply) {
  constexpr std::string_view kChannel = "<|channel|>", kMessage = "<|message|>", kEnd = "<|end|>",
                             kNext = "<|start|>assistant";
  std::string text = repair_utf8(std::string(reply));
  if (!std::string_view(text).starts_with(kChannel)) return {{"role", "assistant"}, {"content", text}};
  // Messages "<|channel|>NAME[ to=... | <|constrain|>...]<|message|>BODY[<|end|>]", each after the
  // first opened by "<|start|>assistant".
  std::string content, thinking;
  for (size_t at = 0; at < text.size();) {
    size_t next = std::min(text.find(kNext, at), text.size());
    std::string_view m = std::string_view(text).substr(at, next - at);
    size_t body = m.find(kMessage);
    if (m.starts_with(kChannel) && body != std::string_view::npos) {
      std::string_view channel = m.substr(kChannel.size(), body - kChannel.size());
      channel = channel.substr(0, channel.find_first_of(" <"));
      std::string_view b = m.substr(body + kMessage.size());
      if (b.ends_with(kEnd)) b.remove_suffix(kEnd.size());
      (channel == "analysis" ? thinking : content) += b;
    } else {
      content += m;  // not a harmony message: kept as it is
    }
    at = next == text.size() ? next : next + kNext.size();
  }
  nlohmann::ordered_json m = {{"role", "assistant"}, {"content", content}};
  if (!thinking.empty()) m["thinking"] = thinking;
  return m;
}

ChatSession::ChatSession(Engine& engine, Sampler& sampler, ChatTemplate chat_template, std::string system)
    : engine_(engine), sampler_(sampler), template_(std::move(chat_template)) {
  options_.bos_token = template_.bos_token();
  options_.eos_token = template_.eos_token();
  ENSURE(valid_utf8(system), "the system message is not valid UTF-8");
  if (!system.empty()) messages_.push_back({{"role", "system"}, {"content", system}});
}

void ChatSession::reset() {
  nlohmann::ordered_json kept = nlohmann::ordered_json::array();
  if (!messages_.empty() && messages_[0]["role"] == "system") kept.push_back(messages_[0]);
  messages_ = std::move(kept);
  images_.clear(), pending_ = 0;
  cached_.clear();
  engine_.reset();
  sampler_.reset();
}

void ChatSession::add_image(VisionInput image) {
  ENSURE(encoder_, "this chat has no projector for images");
  images_.push_back(std::move(image));
  ++pending_;
}

// The number of media markers in a message's content.
static size_t markers(const nlohmann::ordered_json& m) {
  if (!m.contains("content") || !m["content"].is_string()) return 0;
  const std::string& s = m["content"].get_ref<const std::string&>();
  size_t n = 0;
  for (size_t at = s.find(kMediaMarker); at != std::string::npos; at = s.find(kMediaMarker, at + 1)) ++n;
  return n;
}

// The conversation as tokens, ending with the template's generation prompt. The model's BOS is
// added unless the template already wrote it (Llama 3's does: a second one would be wrong). With
// images, cut at their markers as llama.cpp's mtmd cuts a prompt (engine/image_prompt.h).
ChatSession::Rendered ChatSession::render_tokens() const {
  std::string text = template_.render(messages_, options_);
  const Tokenizer& tok = engine_.tokenizer();
  bool has_bos = !options_.bos_token.empty() && text.starts_with(options_.bos_token);
  if (images_.empty()) return {.tokens = tok.encode(text, tok.add_bos() && !has_bos, true)};
  Rendered r;
  for (const PromptPart& p : split_image_prompt(tok, encoder_->config(), text, images_.size(), !has_bos)) {
    if (p.image >= 0) r.image_at.push_back(uint32_t(r.tokens.size()));
    if (p.image >= 0) r.tokens.resize(r.tokens.size() + images_[size_t(p.image)].grid.tokens(), 0);
    r.tokens.insert(r.tokens.end(), p.tokens.begin(), p.tokens.end());
  }
  return r;
}

// Renders the conversation, dropping the oldest turns (after a system message) until it fits
// with `reserve` tokens left for the reply. Fails when the newest turn alone does not fit.
ChatSession::Rendered ChatSession::fit_context(uint32_t reserve) {
  size_t first = !messages_.empty() && messages_[0]["role"] == "system" ? 1 : 0;
  for (;;) {
    Rendered r = render_tokens();
    if (r.tokens.size() + reserve <= engine_.n_ctx()) return r;
    if (messages_.size() - first <= 1)
      throw Error(
          fmt::format("the turn makes a prompt of {} tokens, more than fit the context of {} tokens with {} "
                      "for the reply (use --ctx or -n)",
                      r.tokens.size(), engine_.n_ctx(), reserve));
    // drop the oldest message and everything up to the next user message, with their images
    size_t end = first + 1;
    while (end < messages_.size() - 1 && messages_[end]["role"] != "user") ++end;
    size_t images = 0;
    for (size_t i = first; i < end; ++i) images += markers(messages_[i]);
    images_.erase(images_.begin(), images_.begin() + long(std::min(images, images_.size())));
    messages_.erase(messages_.begin() + long(first), messages_.begin() + long(end));
    ++stats_.dropped_turns;
  }
}

std::string ChatSession::reply(std::string_view user_text, uint32_t max_tokens,
                               const std::function<void(std::string_view)>& on_text,
                               const std::function<bool()>& should_stop) {
  ENSURE(valid_utf8(user_text), "the turn is not valid UTF-8");
  stats_ = {};
  nlohmann::ordered_json saved = messages_;
  std::vector<VisionInput> saved_images = images_;
  std::string content;
  for (size_t i = 0; i < pending_; ++i) content += kMediaMarker;
  messages_.push_back({{"role", "user"}, {"content", content + std::string(user_text)}});
  Rendered prompt;
  try {
    uint32_t reserve = std::clamp(max_tokens, 1u, std::max(1u, engine_.n_ctx() / 2));
    prompt = fit_context(reserve);
  } catch (...) {
    messages_ = std::move(saved), images_ = std::move(saved_images);
    throw;
  }
  pending_ = 0;
  std::string text;
  generate_reply(std::move(prompt), max_tokens, on_text, should_stop, text);
  messages_.push_back(assistant_message(text));
  return text;
}

// Evaluates the prompt from token `from` on: text runs, and each image's rows from the encoder
// (from never falls inside an image); the last token's logits.
std::span<const float> ChatSession::evaluate(const Rendered& prompt, size_t from) {
  std::span<const int32_t> all(prompt.tokens);
  std::span<const float> logits;
  for (size_t i = 0; i <= prompt.image_at.size(); ++i) {
    size_t end = i < prompt.image_at.size() ? prompt.image_at[i] : all.size();
    if (end > from) logits = engine_.eval(all.subspan(from, end - from)), from = end;
    if (i == prompt.image_at.size() || prompt.image_at[i] < from) continue;
    const VisionInput& im = images_[i];
    std::vector<float> rows = encoder_->encode(im.grid, im.pixels);
    logits = engine_.eval_image(rows, im.grid.tokens_x, im.grid.tokens_y,
                                encoder_->config().image_attention(engine_.config().dim));
    from += im.grid.tokens();
  }
  return logits;
}

void ChatSession::generate_reply(Rendered rendered, uint32_t max_tokens,
                                 const std::function<void(std::string_view)>& on_text,
                                 const std::function<bool()>& should_stop, std::string& text) {
  using clock = std::chrono::steady_clock;
  const std::vector<int32_t>& prompt = rendered.tokens;
  // Keep what the cache shares with the new prompt (an image whole or not at all: its tokens are
  // zeros); evaluate at least one token for logits.
  size_t keep = 0;
  while (keep < cached_.size() && keep < prompt.size() && cached_[keep] == prompt[keep]) ++keep;
  keep = std::min(keep, prompt.size() - 1);
  for (size_t i = 0; i < rendered.image_at.size(); ++i)
    if (keep > rendered.image_at[i] && keep < rendered.image_at[i] + images_[i].grid.tokens())
      keep = rendered.image_at[i];
  keep = engine_.resumable(uint32_t(keep));  // hybrids: all, the checkpoint or 0
  engine_.truncate(uint32_t(keep));
  cached_.resize(keep);
  stats_.prompt_tokens = uint32_t(prompt.size());
  stats_.reused_tokens = uint32_t(keep);
  stats_.evaluated_tokens = uint32_t(prompt.size() - keep);

  auto t0 = clock::now();
  std::span<const int32_t> fresh(prompt.data() + keep, prompt.size() - keep);
  for (int32_t t : fresh) sampler_.accept(t);
  std::span<const float> logits = evaluate(rendered, keep);
  cached_.insert(cached_.end(), fresh.begin(), fresh.end());
  engine_.checkpoint(0, engine_.n_past());  // hybrids: the next turn starts with this prompt
  auto t1 = clock::now();
  stats_.prompt_seconds = std::chrono::duration<double>(t1 - t0).count();

  const Tokenizer& tok = engine_.tokenizer();
  Detokenizer detok(tok);
  for (uint32_t i = 0; i < max_tokens; ++i) {
    if (should_stop && should_stop()) {
      stats_.interrupted = true;
      break;
    }
    int32_t token = sampler_.sample(logits);
    sampler_.accept(token);
    if (++stats_.generated_tokens == 1)
      stats_.first_token_seconds = std::chrono::duration<double>(clock::now() - t0).count();
    if (tok.is_end_of_generation(token)) {
      stats_.stopped_at_eog = true;
      break;
    }
    std::string piece = detok.push(token);
    text += piece;
    if (on_text && !piece.empty()) on_text(piece);
    if (engine_.n_past() >= engine_.n_ctx() || i + 1 == max_tokens) break;
    logits = engine_.eval(std::span<const int32_t>(&token, 1));
    cached_.push_back(token);
  }
  std::string rest = detok.flush();
  text += rest;
  if (on_text && !rest.empty()) on_text(rest);
  stats_.generation_seconds = std::chrono::duration<double>(clock::now() - t1).count();
}

void ChatSession::set_system(const std::string& system) {
  ENSURE(valid_utf8(system), "the system message is not valid UTF-8");
  bool has = !messages_.empty() && messages_[0]["role"] == "system";
  if (system.empty() && has) messages_.erase(messages_.begin());
  if (system.empty()) return;
  if (has)
    messages_[0]["content"] = system;
  else
    messages_.insert(messages_.begin(), nlohmann::ordered_json{{"role", "system"}, {"content", system}});
}

void ChatSession::set_messages(const nlohmann::ordered_json& messages) {
  ENSURE(messages.is_array(), "the conversation is not a JSON array of messages");
  nlohmann::ordered_json kept = nlohmann::ordered_json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    std::string where = fmt::format("message {}", i + 1);
    ENSURE(m.is_object() && m.contains("role") && m["role"].is_string() && m.contains("content") &&
               m["content"].is_string(),
           where + " is not {\"role\": ..., \"content\": \"...\"}");
    std::string role = m["role"], content = m["content"];
    ENSURE(role == "user" || role == "assistant" || (role == "system" && i == 0),
           fmt::format("{} has role '{}' (system first, then user and assistant)", where, role));
    ENSURE(valid_utf8(content), where + " is not valid UTF-8");
    kept.push_back({{"role", role}, {"content", content}});
  }
  messages_ = std::move(kept);
  images_.clear(), pending_ = 0;  // a saved conversation holds its images' markers, not the images
}

}  // namespace vkllm
