// GgufFile: a validated view of a GGUF v2/v3 file (header, metadata, tensor table) over bytes in
// memory or an mmap of a file. Parsing checks every count, length, type and offset before use;
// tensor data stays in place (spans into the bytes, no copies). A split model (gguf/split.h) opens
// from its first part as one file: the metadata of the first, the tensors of all. Layout:
// docs/formats.md §1.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dtype.h"

namespace vkllm {

// Metadata value types, with the ids the file stores.
enum class GgufType : uint32_t { U8 = 0, I8, U16, I16, U32, I32, F32, Bool, String, Array, U64, I64, F64 };

std::string_view gguf_type_name(GgufType t);  // "u32", "string", "array", ...
// A file-supplied name made safe for a one-line message: bytes outside printable ASCII as \xNN,
// cut after 80 characters.
std::string printable(std::string_view s);
// Bytes of one fixed-size scalar (0 for string and array).
size_t gguf_type_size(GgufType t);

// One metadata value, as a view into the file. Arrays hold elements of one type, arrays included.
class GgufValue {
 public:
  GgufValue() = default;
  GgufValue(GgufType type, std::span<const std::byte> encoded) : type_(type), encoded_(encoded) {}

  GgufType type() const { return type_; }
  // The value's bytes in the file after its type tag: what a writer copies to reproduce it.
  std::span<const std::byte> encoded() const { return encoded_; }

  bool is_integer() const;
  bool is_float() const { return type_ == GgufType::F32 || type_ == GgufType::F64; }
  // Conversions; nullopt when the type does not fit (or an integer does not fit in int64).
  std::optional<int64_t> to_int() const;   // any integer width (docs/formats.md pitfall 6)
  std::optional<double> to_float() const;  // f32, f64 or any integer
  std::optional<bool> to_bool() const;
  std::optional<std::string_view> to_string() const;

  // Arrays: element type, count, and the elements decoded on demand (validated at parse time).
  GgufType element_type() const;
  uint64_t size() const;
  std::vector<GgufValue> elements() const;

 private:
  GgufType type_ = GgufType::U8;
  std::span<const std::byte> encoded_;
};

struct GgufKv {
  std::string_view key;
  GgufValue value;
};

struct GgufTensor {
  std::string_view name;
  DType type = DType::F32;
  uint32_t n_dims = 0;
  std::array<uint64_t, 4> ne{1, 1, 1, 1};  // ggml order: ne[0] varies fastest; unused dims are 1
  uint64_t offset = 0;                     // from the start of its part's data section
  std::span<const std::byte> data;         // the tensor's bytes in the file (or part)

  uint64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  std::vector<uint64_t> shape() const { return {ne.begin(), ne.begin() + n_dims}; }
};

class GgufFile {
 public:
  static constexpr std::string_view kAlignmentKey = "general.alignment";  // the container's own key
  static constexpr std::string_view kNameKey = "general.name";            // read by the model config and the vocabulary
  static constexpr uint64_t kDefaultAlignment = 32;
  static constexpr uint32_t kMaxNameBytes = 63;  // llama.cpp's GGML_MAX_NAME - 1
  static constexpr int kMaxArrayDepth = 8;       // nested arrays deeper than this are rejected

  // Maps the file read-only; for the first part of a split model, maps every part and joins their
  // tensor tables (the other parts are found by name, as llama.cpp finds them). Errors:
  // "<path>: <what>".
  static GgufFile open(const std::string& path);
  // Parses bytes owned by the caller, who keeps them alive as long as the GgufFile and its views.
  static GgufFile parse(std::span<const std::byte> bytes, std::string name);
  // Parses bytes it takes ownership of (e.g. a GgufWriter's output).
  static GgufFile parse(std::vector<std::byte> bytes, std::string name);

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }        // start of the data section
  std::span<const std::byte> bytes() const { return bytes_; }  // the first part's, for a split model
  uint32_t split_count() const { return split_count_; }        // 1 for a single file
  uint64_t file_bytes() const { return file_bytes_; }          // all parts together

  const std::vector<GgufKv>& metadata() const { return kvs_; }
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed getters. Errors name the file and key: "<name>: missing metadata key K" or
  // "<name>: metadata key K is a string, expected an integer". The overloads with a fallback
  // return it when the key is absent (a wrong type is still an error).
  int64_t get_int(std::string_view key) const;
  int64_t get_int(std::string_view key, int64_t fallback) const;
  double get_float(std::string_view key) const;
  double get_float(std::string_view key, double fallback) const;
  bool get_bool(std::string_view key) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::string_view get_string(std::string_view key) const;
  std::string_view get_string(std::string_view key, std::string_view fallback) const;
  const GgufValue& get_array(std::string_view key) const;
  std::vector<int64_t> get_int_array(std::string_view key) const;
  std::vector<float> get_float_array(std::string_view key) const;
  std::vector<std::string_view> get_string_array(std::string_view key) const;

  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(std::string_view name) const;
  const GgufTensor& tensor(std::string_view name) const;  // throws "<name>: missing tensor X"

  // Throws vkllm::Error("<name>: <what>").
  [[noreturn]] void fail(const std::string& what) const;

 private:
  friend class GgufParser;
  GgufFile() = default;

  static GgufFile open_one(const std::string& path);  // one file, mapped
  void add_part(GgufFile part, uint32_t index);
  GgufFile adopt(std::shared_ptr<const void> owner) &&;  // keeps owner alive as long as this file

  std::string name_;
  std::vector<std::shared_ptr<const void>> owners_;  // the mappings or vectors the bytes live in (if owned)
  std::span<const std::byte> bytes_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  uint32_t split_count_ = 1;
  uint64_t file_bytes_ = 0;
  std::vector<GgufKv> kvs_;
  std::vector<GgufTensor> tensors_;
  std::unordered_map<std::string_view, size_t> kv_index_, tensor_index_;
};

}  // namespace vkllm
