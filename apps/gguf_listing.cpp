// The metadata and tensor table of any GGUF file, for `vkllm info`.
#include "gguf_listing.h"

#include <fmt/format.h>

namespace vkllm::cli {

namespace {

constexpr size_t kShortArray = 8;

std::string scalar(const GgufValue& v) {
  if (auto s = v.to_string()) return fmt::format("\"{}\"", printable(*s));
  if (auto b = v.to_bool()) return *b ? "true" : "false";
  if (v.is_float()) return fmt::format("{}", *v.to_float());
  if (auto i = v.to_int()) return fmt::format("{}", *i);
  return fmt::format("({})", gguf_type_name(v.type()));
}

}  // namespace

std::string brief_value(const GgufValue& v) {
  if (v.type() != GgufType::Array) return scalar(v);
  if (v.size() > kShortArray || v.element_type() == GgufType::Array)
    return fmt::format("[{} {} values]", v.size(), gguf_type_name(v.element_type()));
  std::vector<std::string> items;
  for (const GgufValue& e : v.elements()) items.push_back(scalar(e));
  return fmt::format("[{}]", fmt::join(items, ", "));
}

std::string listing_text(const GgufFile& f) {
  std::string out;
  for (const GgufKv& kv : f.metadata())
    out += fmt::format("metadata    {} = {}\n", printable(kv.key), brief_value(kv.value));
  for (const GgufTensor& t : f.tensors())
    out += fmt::format("tensor      {:<32} {:<8} [{}]\n", printable(t.name), info(t.type).name,
                       fmt::join(t.shape(), ", "));
  return out;
}

nlohmann::json listing_json(const GgufFile& f) {
  nlohmann::json meta = nlohmann::json::object(), tensors = nlohmann::json::array();
  for (const GgufKv& kv : f.metadata()) meta[printable(kv.key)] = brief_value(kv.value);
  for (const GgufTensor& t : f.tensors())
    tensors.push_back({{"name", printable(t.name)}, {"type", info(t.type).name}, {"shape", t.shape()}});
  return {{"metadata", meta}, {"tensors", tensors}};
}

namespace {

nlohmann::ordered_json value_json(const GgufValue& v, size_t most) {
  if (v.type() == GgufType::Array) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    if (v.size() <= most)
      for (const GgufValue& e : v.elements()) a.push_back(value_json(e, most));
    return a;
  }
  if (v.type() == GgufType::Bool) return v.to_bool().value_or(false);
  if (v.is_float()) return v.to_float().value_or(0.0);
  if (auto s = v.to_string()) return std::string(*s);
  if (auto i = v.to_int()) return *i;
  return nullptr;  // an unsigned 64-bit value past int64
}

}  // namespace

nlohmann::ordered_json metadata_json(const GgufFile& f, size_t most) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const GgufKv& kv : f.metadata()) out[std::string(kv.key)] = value_json(kv.value, most);
  return out;
}

std::string architecture_name(const GgufFile& f) {
  const GgufValue* v = f.find("general.architecture");
  auto s = v ? v->to_string() : std::nullopt;
  return s ? printable(*s) : "";
}

}  // namespace vkllm::cli
