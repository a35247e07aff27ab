// Embeddings: POST /v1/embeddings in OpenAI's shape and POST /api/embed in Ollama's. Inputs are
// tokenized with the model's special tokens (as llama-server does), pooled by the generator in
// idle KV-cache slots, truncated to `dimensions` where asked (Matryoshka: Qwen3-Embedding is
// trained for it) and then normalised to unit length.
#include <fmt/format.h>
#include <bit>
#include <chrono>
#include <cstring>

#include "engine/embedding.h"
#include "error.h"
#include "serve/api.h"
#include "serve/base64.h"
#include "serve/openai.h"

namespace vkllm::serve {

namespace {

// OpenAI caps a request at 2048 inputs.
constexpr size_t kMaxInputs = 2048;

std::string base64(const std::vector<float>& v) {
  static_assert(std::endian::native == std::endian::little, "base64 embeddings are little-endian f32");
  return base64_encode(std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * 4));
}

// A token id list from a JSON array of integers; 400 for anything else.
std::vector<int32_t> token_list(const json& a, uint32_t vocab) {
  std::vector<int32_t> ids;
  for (const json& t : a) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= int64_t(vocab))
      throw bad_request(fmt::format("'input' token ids must be integers in 0..{}", vocab - 1));
    ids.push_back(int32_t(t.get<int64_t>()));
  }
  return ids;
}

// 'input' as OpenAI takes it: a string, an array of strings, an array of token ids, or an array
// of arrays of token ids. Strings get the model's special tokens (BOS, and EOS where it adds one).
std::vector<std::vector<int32_t>> input_tokens(const json& body, const Tokenizer& tok, bool allow_tokens) {
  const char* shapes = allow_tokens ? "a string, an array of strings, an array of token ids or an array of arrays "
                                      "of token ids"
                                    : "a string or an array of strings";
  if (!body.contains("input")) throw bad_request(fmt::format("'input' is required: {}", shapes));
  const json& in = body["input"];
  json items = in.is_array() ? in : json::array({in});
  if (allow_tokens && in.is_array() && !in.empty() && in[0].is_number()) items = json::array({in});
  if (items.empty()) throw bad_request("'input' is empty");
  if (items.size() > kMaxInputs)
    throw bad_request(fmt::format("'input' has {} items; at most {}", items.size(), kMaxInputs));
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const json& item = items[i];
    if (item.is_string()) {
      if (item.get_ref<const std::string&>().empty())
        throw bad_request(fmt::format("'input' {} is an empty string", i));
      out.push_back(tok.encode(item.get<std::string>(), true, true));
    } else if (allow_tokens && item.is_array()) {
      out.push_back(token_list(item, tok.vocab_size()));
    } else {
      throw bad_request(fmt::format("'input' must be {}", shapes));
    }
    if (out.back().empty()) throw bad_request(fmt::format("'input' {} has no tokens", i));
  }
  return out;
}

// 'dimensions': 1 to the model's width; absent: the whole vector.
uint32_t dimensions(const json& body, uint32_t width) {
  if (!body.contains("dimensions") || body["dimensions"].is_null()) return width;
  const json& d = body["dimensions"];
  if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > int64_t(width))
    throw bad_request(fmt::format("'dimensions' must be an integer from 1 to {} (the model's width)", width));
  return uint32_t(d.get<int64_t>());
}

void check_fits(const std::vector<std::vector<int32_t>>& inputs, uint32_t n_ctx) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].size() > n_ctx)
      throw bad_request(fmt::format("'input' {} is {} tokens; a slot's context holds {}", i, inputs[i].size(), n_ctx));
}

// Truncated to `dims`, then unit length.
std::vector<std::vector<float>> finish(std::vector<std::vector<float>> vectors, uint32_t dims) {
  for (auto& v : vectors) {
    v.resize(dims);
    normalize_embedding(v, 2);
  }
  return vectors;
}

json float_array(const std::vector<float>& v) {
  json a = json::array();
  for (float x : v) a.push_back(json_float(x));
  return a;
}

size_t token_count(const std::vector<std::vector<int32_t>>& inputs) {
  size_t n = 0;
  for (const auto& t : inputs) n += t.size();
  return n;
}

}  // namespace

HttpReply Api::embeddings(const HttpRequest& r) const {
  json body = parse_body(r.body);
  std::vector<std::vector<int32_t>> inputs = input_tokens(body, gen_.tokenizer(), true);
  check_fits(inputs, gen_.n_ctx());
  uint32_t dims = dimensions(body, gen_.config().dim);
  std::string format = "float";
  if (body.contains("encoding_format") && !body["encoding_format"].is_null()) {
    if (!body["encoding_format"].is_string() ||
        (body["encoding_format"] != "float" && body["encoding_format"] != "base64"))
      throw bad_request("'encoding_format' must be \"float\" or \"base64\"");
    format = body["encoding_format"].get<std::string>();
  }
  size_t tokens = token_count(inputs);
  std::vector<std::vector<float>> vectors = finish(gen_.embed(std::move(inputs), options_.pooling), dims);
  json data = json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    json e = format == "base64" ? json(base64(vectors[i])) : float_array(vectors[i]);
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", std::move(e)}});
  }
  json reply = {{"object", "list"},
                {"data", std::move(data)},
                {"model", options_.model_id},
                {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  return {.body = dump(reply)};
}

// Ollama's errors are {"error": "message"}: its clients read that string.
HttpReply Api::ollama_embed(const HttpRequest& r) const {
  auto t0 = std::chrono::steady_clock::now();
  auto ollama_error = [](int status, const std::string& message) {
    return HttpReply{.status = status, .body = dump({{"error", message}})};
  };
  try {
    json body = parse_body(r.body);
    std::vector<std::vector<int32_t>> inputs;
    if (!body.contains("input") || !body["input"].is_array() || !body["input"].empty())
      inputs = input_tokens(body, gen_.tokenizer(), false);
    bool truncate = true;
    if (body.contains("truncate") && !body["truncate"].is_null()) {
      if (!body["truncate"].is_boolean()) throw bad_request("'truncate' must be true or false");
      truncate = body["truncate"].get<bool>();
    }
    if (truncate)
      for (auto& t : inputs) t.resize(std::min<size_t>(t.size(), gen_.n_ctx()));
    check_fits(inputs, gen_.n_ctx());
    uint32_t dims = dimensions(body, gen_.config().dim);
    size_t tokens = token_count(inputs);
    std::vector<std::vector<float>> vectors = finish(gen_.embed(std::move(inputs), options_.pooling), dims);
    json embeddings = json::array();
    for (const auto& v : vectors) embeddings.push_back(float_array(v));
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    bool named = body.contains("model") && body["model"].is_string();
    json reply = {{"model", named ? body["model"].get<std::string>() : options_.model_id},
                  {"embeddings", std::move(embeddings)},
                  {"total_duration", ns},
                  {"load_duration", 0},
                  {"prompt_eval_count", tokens}};
    return {.body = dump(reply)};
  } catch (const ApiError& e) {
    return ollama_error(e.status, e.what());
  } catch (const QueueFull& e) {
    return ollama_error(503, e.what());
  } catch (const Error& e) {
    return ollama_error(400, e.what());
  }
}

}  // namespace vkllm::serve
