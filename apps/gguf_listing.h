// A GGUF file as it is, whatever its architecture: every metadata key with a short rendering of
// its value, and the tensor table. `vkllm info` shows this for files vkllm cannot run.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "gguf/reader.h"

namespace vkllm::cli {

// A value on one line: strings quoted and cut, short arrays in full, long ones as their size.
std::string brief_value(const GgufValue& v);
// "metadata    key = value" lines, then "tensor      name  type  [ne0, ne1]" lines.
std::string listing_text(const GgufFile& f);
// {"metadata": {key: brief}, "tensors": [{name, type, shape}]}.
nlohmann::json listing_json(const GgufFile& f);
// Every metadata key with its value as JSON (Ollama's /api/show model_info): numbers, strings,
// booleans, arrays in full up to `most` elements and empty past it.
nlohmann::ordered_json metadata_json(const GgufFile& f, size_t most);
// general.architecture as the file spells it (printable), "" without one: for files vkllm may not run.
std::string architecture_name(const GgufFile& f);

}  // namespace vkllm::cli
