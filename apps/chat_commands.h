// The state of a `vkllm chat` and its slash commands, as Ollama's `ollama run` and llama-cli
// spell them: /? and /help, /bye and /exit, /clear (/reset), /set, /show, /save and /load, and
// /image FILE as llama-mtmd-cli's. A bad
// command is one error line; the conversation goes on.
#pragma once
#include <memory>
#include <string>

#include "engine/chat_session.h"
#include "engine/sampler.h"
#include "graph/vision_encoder.h"
#include "model_options.h"
#include "options.h"
#include "projector_info.h"

namespace vkllm::cli {

// What the commands act on: the model (reloaded for another context), the sampler, the session.
struct ChatState {
  ModelOptions model_options;
  GenerationOptions gen;    // n_predict and the sampling flags as given
  SamplerOptions sampling;  // what the sampler uses (the seed resolved)
  std::string system;
  bool verbose = false;
  bool no_reasoning = false;  // --no-reasoning: replies are printed without their reasoning
  LoadedModel model;
  ProjectorFile projector;                 // --mmproj (or -hf's): /image takes images
  std::unique_ptr<VisionEncoder> encoder;  // on model's device (gone before it)
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<ChatSession> session;

  // Loads the model and starts an empty conversation (the system message alone).
  void start();
  // Loads the model again for a context of ctx tokens, keeping the conversation.
  void reload(uint32_t ctx);
  uint32_t max_tokens() const;  // per reply (-n)

 private:
  void start_session(const nlohmann::ordered_json& messages);
};

enum class ChatCommand { Continue, Exit };

// Runs a line that starts with '/'; throws vkllm::Error (one line) for a bad one.
ChatCommand run_chat_command(ChatState& st, const std::string& line);

// The commands and what they do, one per line: /? prints it, `vkllm chat --help` ends with it.
extern const char* const kChatCommandsHelp;

}  // namespace vkllm::cli
