// GgufWriter: builds a GGUF v3 (or v2) file in memory: metadata of every type, tensors with their
// bytes, data aligned as general.alignment says. It lays files out the way llama.cpp does (tensor
// data in order, each padded to the alignment), so a file it reads back rewrites byte for byte.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "dtype.h"
#include "gguf/reader.h"

namespace vkllm {

class GgufWriter {
 public:
  GgufWriter() = default;
  // Copies a file's version, metadata (in order) and tensors: rewrites it byte for byte.
  static GgufWriter from(const GgufFile& f);

  void set_version(uint32_t version);      // 2 or 3 (default 3)
  void set_alignment(uint32_t alignment);  // writes general.alignment (u32); power of two

  // Scalars; the C++ type picks the GGUF type (uint32_t -> u32, float -> f32, ...).
  void add(std::string_view key, uint8_t v) { add_scalar(key, GgufType::U8, &v, 1); }
  void add(std::string_view key, int8_t v) { add_scalar(key, GgufType::I8, &v, 1); }
  void add(std::string_view key, uint16_t v) { add_scalar(key, GgufType::U16, &v, 2); }
  void add(std::string_view key, int16_t v) { add_scalar(key, GgufType::I16, &v, 2); }
  void add(std::string_view key, uint32_t v) { add_scalar(key, GgufType::U32, &v, 4); }
  void add(std::string_view key, int32_t v) { add_scalar(key, GgufType::I32, &v, 4); }
  void add(std::string_view key, uint64_t v) { add_scalar(key, GgufType::U64, &v, 8); }
  void add(std::string_view key, int64_t v) { add_scalar(key, GgufType::I64, &v, 8); }
  void add(std::string_view key, float v) { add_scalar(key, GgufType::F32, &v, 4); }
  void add(std::string_view key, double v) { add_scalar(key, GgufType::F64, &v, 8); }
  void add(std::string_view key, bool v);
  void add(std::string_view key, std::string_view v);
  void add(std::string_view key, const char* v) { add(key, std::string_view(v)); }

  // Arrays of scalars or strings.
  template <class T>
  void add_array(std::string_view key, std::span<const T> items);
  void add_array(std::string_view key, std::span<const std::string> items);
  void add_array(std::string_view key, std::span<const std::string_view> items);
  void add_array(std::string_view key, const std::vector<bool>& items);
  template <class T>
  void add_array(std::string_view key, const std::vector<T>& items) {
    add_array(key, std::span<const T>(items));
  }

  // A value read from a file (any type, nested arrays included), copied as encoded.
  void add(std::string_view key, const GgufValue& v) { add_encoded(key, v.type(), v.encoded()); }
  // A value the caller has encoded (the bytes after the type tag, docs/formats.md §1.1). Used for
  // nested arrays; the writer does not check the encoding.
  void add_encoded(std::string_view key, GgufType type, std::span<const std::byte> encoded);

  // A tensor: dims in ggml order (ne[0] fastest), data of exactly the size the type and dims
  // imply. The data is copied.
  void add_tensor(std::string_view name, std::span<const uint64_t> ne, DType type, std::span<const std::byte> data);
  void add_tensor(std::string_view name, std::initializer_list<uint64_t> ne, DType type,
                  std::span<const std::byte> data) {
    add_tensor(name, std::span<const uint64_t>(ne.begin(), ne.size()), type, data);
  }

  std::vector<std::byte> bytes() const;  // the whole file
  void save(const std::string& path) const;

  // The model as `parts` files, laid out as llama.cpp's gguf-split writes them: the tensors in
  // order, ceil(n / parts) to a part; every part carries split.no, split.count and
  // split.tensors.count (gguf/split.h), the first also all the metadata. 1 <= parts <= tensors.
  std::vector<GgufWriter> split(uint32_t parts) const;
  // Saves split(parts) as <prefix>-00001-of-0000N.gguf, ...; returns the paths, first part first.
  std::vector<std::string> save_split(const std::string& prefix, uint32_t parts) const;

  size_t tensor_count() const { return tensors_.size(); }

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> ne;
    DType type;
    std::vector<std::byte> data;
  };
  std::vector<std::byte> head() const;
  void add_scalar(std::string_view key, GgufType type, const void* v, size_t n);
  void begin_kv(std::string_view key, GgufType type);

  uint32_t version_ = 3;
  uint64_t alignment_ = GgufFile::kDefaultAlignment;
  uint64_t n_kv_ = 0;
  std::vector<std::byte> kv_bytes_;  // the metadata section as it will be written
  std::unordered_set<std::string> keys_, tensor_names_;
  std::vector<Tensor> tensors_;
};

// --- implementation of the array template

namespace gguf_detail {
template <class T>
constexpr GgufType type_of() {
  if constexpr (std::is_same_v<T, uint8_t>)
    return GgufType::U8;
  else if constexpr (std::is_same_v<T, int8_t>)
    return GgufType::I8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return GgufType::U16;
  else if constexpr (std::is_same_v<T, int16_t>)
    return GgufType::I16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return GgufType::U32;
  else if constexpr (std::is_same_v<T, int32_t>)
    return GgufType::I32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return GgufType::U64;
  else if constexpr (std::is_same_v<T, int64_t>)
    return GgufType::I64;
  else if constexpr (std::is_same_v<T, float>)
    return GgufType::F32;
  else if constexpr (std::is_same_v<T, double>)
    return GgufType::F64;
  else
    static_assert(sizeof(T) == 0, "no GGUF type for this C++ type");
}
// The encoding of an array header plus raw little-endian elements.
std::vector<std::byte> encode_array(GgufType elem, uint64_t count, const void* data, size_t bytes);
}  // namespace gguf_detail

template <class T>
void GgufWriter::add_array(std::string_view key, std::span<const T> items) {
  auto enc = gguf_detail::encode_array(gguf_detail::type_of<T>(), items.size(), items.data(), items.size_bytes());
  add_encoded(key, GgufType::Array, enc);
}

}  // namespace vkllm
