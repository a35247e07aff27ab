// A request's prompt with its images: each image's bytes (a data: URL, or an http(s) URL fetched
// when the server allows it), decoded and preprocessed for the projector; the prompt cut at its
// media markers and tokenized as llama.cpp's mtmd does (engine/image_prompt.h), the image tokens
// zeros in the prompt with the images beside it (PromptImage).
#include <fmt/format.h>

#include "engine/media_prompt.h"
#include "error.h"
#include "image/image_decode.h"
#include "serve/api.h"
#include "serve/base64.h"
#include "serve/openai.h"
#include "text/chat_template.h"

namespace vkllm::serve {

namespace {

// The bytes of a data: URL (data:[<media type>][;base64],<data>); base64 only.
std::string data_url_bytes(const std::string& url, const std::string& name) {
  size_t comma = url.find(',');
  std::string_view head = std::string_view(url).substr(0, comma == std::string::npos ? url.size() : comma);
  if (comma == std::string::npos || !head.ends_with(";base64"))
    throw bad_request(fmt::format("{}: a data: URL must hold base64 (data:image/png;base64,...)", name));
  std::optional<std::string> bytes = base64_decode(std::string_view(url).substr(comma + 1));
  if (!bytes) throw bad_request(fmt::format("{}: the data: URL's base64 is damaged", name));
  return std::move(*bytes);
}

}  // namespace

VisionInput Api::image_input(const std::string& url, size_t i) const {
  std::string name = fmt::format("image {}", i + 1), bytes;
  if (url.starts_with("data:")) {
    bytes = data_url_bytes(url, name);
  } else if (url.starts_with("http://") || url.starts_with("https://")) {
    if (!options_.fetch_image)
      throw bad_request(fmt::format(
          "{}: this server does not fetch image URLs (start vkllm serve with --allow-image-urls); send the image as "
          "a data: URL",
          name));
    try {
      bytes = options_.fetch_image(url);
    } catch (const Error& e) {
      throw bad_request(fmt::format("{}: {}", name, e.what()));
    }
  } else {
    throw bad_request(fmt::format("{}: an image must be a data: URL or an http(s) URL", name));
  }
  try {
    RgbImage img = decode_image(std::as_bytes(std::span(bytes.data(), bytes.size())), name);
    return preprocess_image(img, *options_.projector);
  } catch (const Error& e) {
    throw bad_request(e.what());
  }
}

PromptInput Api::prompt_input(const CompletionParams& p, const std::string& chat_text) const {
  const Tokenizer& tok = gen_.tokenizer();
  if (!p.chat)
    if (auto* ids = std::get_if<std::vector<int32_t>>(&p.prompt)) return {.tokens = *ids};
  std::string text = p.chat ? chat_text : std::get<std::string>(p.prompt);
  const std::string bos = p.chat ? options_.chat_template->bos_token() : "";
  bool add_bos = !p.chat || (tok.add_bos() && !(!bos.empty() && text.starts_with(bos)));
  if (p.images.empty()) return {.tokens = tok.encode(text, add_bos, true)};
  if (!options_.projector)
    throw bad_request(
        "this model takes no images: it is served without its multimodal projector (start vkllm serve with "
        "--mmproj FILE, the model's mmproj-*.gguf)");
  std::vector<VisionInput> images;
  for (size_t i = 0; i < p.images.size(); ++i) images.push_back(image_input(p.images[i], i));
  // A completion prompt without markers takes its images first (as llama-mtmd-cli places them).
  if (!p.chat && text.find(kMediaMarker) == std::string::npos)
    for (size_t i = 0; i < images.size(); ++i) text.insert(0, kMediaMarker);
  std::vector<PromptPart> parts;
  try {
    parts = split_image_prompt(tok, *options_.projector, text, images.size(), add_bos);
  } catch (const Error& e) {
    throw bad_request(e.what());
  }
  PromptInput out;
  for (PromptPart& part : parts) {
    if (part.image < 0) {
      out.tokens.insert(out.tokens.end(), part.tokens.begin(), part.tokens.end());
      continue;
    }
    PromptImage im{.at = uint32_t(out.tokens.size()), .input = std::move(images[size_t(part.image)])};
    out.tokens.resize(out.tokens.size() + im.tokens(), 0);
    out.images.push_back(std::move(im));
  }
  return out;
}

}  // namespace vkllm::serve
