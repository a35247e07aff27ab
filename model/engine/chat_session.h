// ChatSession: a conversation held in the engine's KV cache. Each turn renders the whole
// conversation with the model's chat template, tokenises it, keeps the cached tokens it shares
// with what is cached (Engine::truncate) and evaluates only the rest, then streams the reply up to
// an end-of-generation token. When a turn would not fit the context, the oldest turns are dropped
// (the system message stays). What `vkllm chat` runs; testable without a terminal.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/sampler.h"
#include "image/image_preprocess.h"
#include "text/chat_template.h"

namespace vkllm {

class VisionEncoder;

struct ChatTurnStats {
  uint32_t prompt_tokens = 0;     // the rendered conversation, tokenised
  uint32_t reused_tokens = 0;     // of those, already in the KV cache
  uint32_t evaluated_tokens = 0;  // prompt_tokens - reused_tokens
  uint32_t generated_tokens = 0;  // the reply (an end-of-generation token included)
  uint32_t dropped_turns = 0;     // oldest user/assistant messages dropped to fit the context
  bool stopped_at_eog = false;    // the reply ended with an end-of-generation token
  bool interrupted = false;       // should_stop ended the reply (Ctrl-C); what came is kept
  double prompt_seconds = 0, generation_seconds = 0;
  double first_token_seconds = 0;  // from the turn's start to its first token
};

// The assistant message a reply becomes in the conversation, in the fields chat templates read. A
// reply in OpenAI's harmony format (gpt-oss: "<|channel|>analysis<|message|>...<|end|><|start|>
// assistant<|channel|>final<|message|>...") keeps its analysis as "thinking" and its other
// channels as "content": gpt-oss's template refuses channel markers in the content. Any other
// reply is the content as it came (templates such as Qwen 3's and Gemma 4's take thinking out of
// it themselves).
nlohmann::ordered_json assistant_message(std::string_view reply);

class ChatSession {
 public:
  ChatSession(Engine& engine, Sampler& sampler, ChatTemplate chat_template, std::string system = "");

  // Adds the user's turn and generates the reply (at most max_tokens tokens), passing its text
  // to on_text as it comes; returns the reply. should_stop, asked before each token, ends the
  // reply early (a user's Ctrl-C): the text so far stays in the conversation as the assistant's
  // turn. Throws vkllm::Error (one line) for a turn that is not valid UTF-8 or does not fit the
  // context even alone, or a template failure; the conversation is then as it was before the turn.
  std::string reply(std::string_view user_text, uint32_t max_tokens,
                    const std::function<void(std::string_view)>& on_text = {},
                    const std::function<bool()>& should_stop = {});
  void reset();  // back to the system message alone; the cache is cleared

  // The system message: replaced, added at the start, or (empty) removed.
  void set_system(const std::string& system);
  // Replaces the conversation by `messages` (OpenAI's [{role, content}], roles system, user and
  // assistant, string contents, a system message only first). Throws vkllm::Error naming the
  // first bad message; the conversation is then unchanged. The cache keeps what it shares.
  void set_messages(const nlohmann::ordered_json& messages);

  // Images (`vkllm chat`'s /image): the projector's encoder on the engine's device. An added image
  // goes into the next turn, before its text (where Ollama puts a message's images), as a media
  // marker; it stays with its message and leaves with it when old turns make room.
  void set_encoder(VisionEncoder* encoder) { encoder_ = encoder; }
  void add_image(VisionInput image);
  size_t pending_images() const { return pending_; }

  const nlohmann::ordered_json& messages() const { return messages_; }
  const std::vector<int32_t>& cached_tokens() const { return cached_; }  // what the KV cache holds
  const ChatTurnStats& last_turn() const { return stats_; }
  const ChatTemplate& chat_template() const { return template_; }

 private:
  // The conversation's tokens, zeros in each image's place, and where each image starts.
  struct Rendered {
    std::vector<int32_t> tokens;
    std::vector<uint32_t> image_at;  // of images_[i]
  };
  Rendered render_tokens() const;
  Rendered fit_context(uint32_t reserve);
  std::span<const float> evaluate(const Rendered& prompt, size_t from);
  void generate_reply(Rendered prompt, uint32_t max_tokens, const std::function<void(std::string_view)>& on_text,
                      const std::function<bool()>& should_stop, std::string& reply);

  Engine& engine_;
  Sampler& sampler_;
  ChatTemplate template_;
  ChatTemplate::Options options_;
  nlohmann::ordered_json messages_ = nlohmann::ordered_json::array();
  std::vector<int32_t> cached_;  // tokens at positions 0..n_past of the engine
  VisionEncoder* encoder_ = nullptr;
  std::vector<VisionInput> images_;  // the conversation's, in order; the last pending_ wait for a turn
  size_t pending_ = 0;
  ChatTurnStats stats_;
};

}  // namespace vkllm
