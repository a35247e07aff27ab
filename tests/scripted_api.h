// serve::Api over a RecordingGenerator and a small fixture model (gpt2 vocabulary, 512 tokens):
// route tests without a GPU. A chat template from tests/data/templates (or the fixture's own,
// ChatML, whose tool calls are Hermes'), a scripted reply, requests straight into Api::handle.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "recording_generator.h"
#include "serve/api.h"
#include "text/chat_template.h"

namespace vkllm::test {

struct ScriptedApi {
  std::vector<std::byte> bytes;
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<RecordingGenerator> gen;
  std::unique_ptr<serve::Api> api;
  uint32_t cached_tokens = 0;  // the scripted usage's

  explicit ScriptedApi(const std::string& template_file = "", const std::string& key = "") {
    bytes = make_fixture_model({.vocab_size = 512, .tokenizer = "gpt2"});
    file = std::make_unique<GgufFile>(GgufFile::parse(bytes, "scripted fixture"));
    gen = std::make_unique<RecordingGenerator>(Tokenizer::from_gguf(*file), ModelConfig::from_gguf(*file), 4096);
    std::string path = std::string(VKLLM_SOURCE_DIR) + "/tests/data/templates/" + template_file;
    auto t = std::make_shared<const ChatTemplate>(template_file.empty() ? ChatTemplate::from_gguf(*file)
                                                                        : ChatTemplate::parse(read_file(path)));
    serve::ModelFacts facts{.architecture = gen->config().arch_name, .quantization = "F16"};
    for (const GgufTensor& tensor : file->tensors()) facts.parameters += tensor.n_elements();
    api = std::make_unique<serve::Api>(
        *gen, serve::ApiOptions{.model_id = "fixture", .api_key = key, .chat_template = t, .facts = facts});
  }
  // The reply's text in pieces, then the finish (by `stop` when given).
  void script(const std::vector<std::string>& pieces, RequestFinish finish = RequestFinish::Stop,
              std::string stop = "") {
    gen->script.clear();
    for (const std::string& p : pieces) gen->script.push_back({.text = p, .tokens = 1});
    gen->script.push_back({.done = true,
                           .finish = finish,
                           .usage = {.completion_tokens = uint32_t(pieces.size()), .cached_tokens = cached_tokens},
                           .stop = std::move(stop)});
  }
  serve::HttpReply post(const std::string& path, const nlohmann::json& body, const std::string& x_api_key = "") const {
    return api->handle({.method = "POST", .path = path, .body = body.dump(), .x_api_key = x_api_key},
                       [] { return true; });
  }
};

}  // namespace vkllm::test
