// Finding JSON inside a model's reply as it streams: where a value that starts at some position
// ends (or that the text ends inside it, so far valid), and an object's members with where each
// value starts, so a tool call's name is known, and its arguments can be streamed, before the
// object is complete. Only the structure is checked here; a complete value is then parsed with
// nlohmann::json.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm {

enum class JsonScan { Complete, Partial, Invalid };

// Scans one JSON value starting at text[pos] (no leading whitespace). Complete: `end` is just past
// it. Partial: the text ends inside it and nothing seen so far is wrong. Invalid otherwise.
JsonScan scan_json_value(std::string_view text, size_t pos, size_t& end);

struct JsonMember {
  std::string key;
  size_t value_begin = 0, value_end = 0;  // value_end: the end of text when the value is partial
  bool complete = false;
};

struct JsonObjectScan {
  JsonScan state = JsonScan::Invalid;
  size_t end = 0;                   // past the closing brace when complete
  std::vector<JsonMember> members;  // in order; the last may be partial
};

// Scans an object starting at text[pos] == '{'.
JsonObjectScan scan_json_object(std::string_view text, size_t pos);

// Index of the first character at or after pos that is not JSON whitespace.
size_t skip_json_space(std::string_view text, size_t pos);

}  // namespace vkllm
