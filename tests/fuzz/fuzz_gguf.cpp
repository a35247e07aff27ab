// libFuzzer target: GgufFile::parse on arbitrary bytes, then everything a loader does with a file
// that parsed (every metadata value, every tensor's bytes, ModelConfig or ProjectorConfig, Tokenizer
// encode/decode).
// Any crash, sanitizer report or exception other than vkllm::Error is a bug.
#include <cstdint>
#include <span>

#include "arch/model_config.h"
#include "arch/projector.h"
#include "arch/tensors.h"
#include "error.h"
#include "gguf/reader.h"
#include "text/tokenizer.h"

namespace {

uint64_t walk(const vkllm::GgufValue& v) {
  uint64_t h = uint64_t(v.type());
  if (auto i = v.to_int()) h += uint64_t(*i);
  if (auto s = v.to_string()) h += s->size();
  if (auto b = v.to_bool()) h += *b;
  for (const vkllm::GgufValue& e : v.elements()) h = h * 31 + walk(e);
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkllm;
  try {
    GgufFile f = GgufFile::parse(std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz.gguf");
    volatile uint64_t sink = 0;
    for (const GgufKv& kv : f.metadata()) sink = sink + walk(kv.value) + kv.key.size();
    for (const GgufTensor& t : f.tensors())
      if (!t.data.empty())
        sink = sink + std::to_integer<uint8_t>(t.data.front()) + std::to_integer<uint8_t>(t.data.back());
    try {
      if (is_projector_file(f)) sink = sink + read_projector_config(f).embd_width();
    } catch (const Error&) {
    }
    try {
      ModelConfig c = ModelConfig::from_gguf(f);
      sink = sink + c.kv_bytes_per_token() + parameter_count(c);
    } catch (const Error&) {
    }
    if (has_vocab(f)) {
      Tokenizer t = Tokenizer::from_gguf(f);
      std::vector<int32_t> ids = t.encode("Hello w\xc3\xb6rld \xf0\x9f\x98\x80 <s>\xff  \n", true);
      sink = sink + t.decode(ids).size();
    }
  } catch (const Error&) {
  }
  return 0;
}
