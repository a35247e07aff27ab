// A stand-in Generator for driving serve::Api without a GPU: it records each generation request
// (its tokens, constraint, logprobs), attention and embedding request, and answers at once: "ok", or the
// events of `script` when the test set one; every query attends to its first key.
#pragma once
#include <memory>
#include <vector>

#include "engine/sequence.h"

namespace vkllm::test {

class RecordingGenerator : public Generator {
 public:
  RecordingGenerator(Tokenizer t, ModelConfig c, uint32_t ctx = 256)
      : tok_(std::move(t)), config_(std::move(c)), ctx_(ctx) {}
  std::shared_ptr<GenerationHandle> submit(GenerationRequest r) override {
    prompt = r.prompt;
    request = r;
    auto h = std::make_shared<GenerationHandle>();
    if (!script.empty()) {
      for (GenerationEvent e : script) {
        if (e.done) e.usage.prompt_tokens = uint32_t(r.prompt.size());
        h->push(std::move(e));
      }
      return h;
    }
    h->push({.text = "ok",
             .tokens = 1,
             .done = true,
             .finish = RequestFinish::Stop,
             .usage = {.prompt_tokens = uint32_t(r.prompt.size()), .completion_tokens = 1}});
    return h;
  }
  const Tokenizer& tokenizer() const override { return tok_; }
  uint32_t n_ctx() const override { return ctx_; }
  SchedulerStats stats() const override {
    SchedulerStats s;  // not designated: its histograms' constructor is explicit
    s.slots = 1;
    return s;
  }
  std::vector<SlotState> slot_states() const override { return {SlotState{}}; }
  const ModelConfig& config() const override { return config_; }
  std::vector<float> attention(std::vector<int32_t> tokens, uint32_t layer, std::vector<PromptImage>) override {
    prompt = tokens, attention_layer = layer;
    size_t n = tokens.size();
    std::vector<float> p(config_.n_heads * n * n);
    for (size_t row = 0; row < config_.n_heads * n; ++row) p[row * n] = 1;
    return p;
  }
  // Records the inputs; each vector holds the input's length then its last token id.
  std::vector<std::vector<float>> embed(std::vector<std::vector<int32_t>> inputs, Pooling pooling) override {
    embed_inputs = inputs, embed_pooling = pooling;
    std::vector<std::vector<float>> out;
    for (const auto& t : inputs) {
      std::vector<float> v(config_.dim);
      v[0] = float(t.size()), v[1] = float(t.back());
      out.push_back(std::move(v));
    }
    return out;
  }
  std::vector<int32_t> prompt;  // of the last request
  GenerationRequest request;    // the last one
  std::vector<GenerationEvent> script;
  uint32_t attention_layer = 0;
  std::vector<std::vector<int32_t>> embed_inputs;  // of the last embedding request
  Pooling embed_pooling = Pooling::Unspecified;

 private:
  Tokenizer tok_;
  ModelConfig config_;
  uint32_t ctx_;
};

}  // namespace vkllm::test
