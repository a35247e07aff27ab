// GGUF writing: metadata is encoded as it is added; bytes() lays out header, metadata, tensor
// infos, padding, and the tensor data, each tensor padded to the alignment (as llama.cpp does).
#include "gguf/writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "align.h"
#include "error.h"
#include "gguf/split.h"

namespace vkllm {

namespace {

void put(std::vector<std::byte>& out, const void* p, size_t n) {
  if (n == 0) return;
  size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, p, n);
}

template <class T>
void put(std::vector<std::byte>& out, T v) {
  put(out, &v, sizeof(T));
}

void put_string(std::vector<std::byte>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  put(out, s.data(), s.size());
}

void pad(std::vector<std::byte>& out, uint64_t alignment) { out.resize(align_up(out.size(), alignment), std::byte{0}); }

}  // namespace

namespace gguf_detail {
std::vector<std::byte> encode_array(GgufType elem, uint64_t count, const void* data, size_t bytes) {
  std::vector<std::byte> out;
  out.reserve(12 + bytes);
  put<uint32_t>(out, uint32_t(elem));
  put<uint64_t>(out, count);
  put(out, data, bytes);
  return out;
}
}  // namespace gguf_detail

GgufWriter GgufWriter::from(const GgufFile& f) {
  GgufWriter w;
  w.version_ = f.version();
  for (const GgufKv& kv : f.metadata()) w.add(kv.key, kv.value);
  for (const GgufTensor& t : f.tensors()) {
    std::vector<uint64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    w.add_tensor(t.name, ne, t.type, t.data);
  }
  return w;
}

void GgufWriter::set_version(uint32_t version) {
  ENSURE(version == 2 || version == 3, fmt::format("GGUF writer: version {} (only 2 and 3)", version));
  version_ = version;
}

void GgufWriter::set_alignment(uint32_t alignment) { add(GgufFile::kAlignmentKey, alignment); }

void GgufWriter::begin_kv(std::string_view key, GgufType type) {
  ENSURE(keys_.emplace(key).second, fmt::format("GGUF writer: duplicate metadata key {}", key));
  put_string(kv_bytes_, key);
  put<uint32_t>(kv_bytes_, uint32_t(type));
  ++n_kv_;
}

void GgufWriter::add_scalar(std::string_view key, GgufType type, const void* v, size_t n) {
  add_encoded(key, type, std::span<const std::byte>(static_cast<const std::byte*>(v), n));
}

void GgufWriter::add(std::string_view key, bool v) {
  uint8_t b = v ? 1 : 0;
  add_scalar(key, GgufType::Bool, &b, 1);
}

void GgufWriter::add(std::string_view key, std::string_view v) {
  std::vector<std::byte> enc;
  put_string(enc, v);
  add_encoded(key, GgufType::String, enc);
}

void GgufWriter::add_array(std::string_view key, std::span<const std::string> items) {
  std::vector<std::string_view> views(items.begin(), items.end());
  add_array(key, std::span<const std::string_view>(views));
}

void GgufWriter::add_array(std::string_view key, std::span<const std::string_view> items) {
  std::vector<std::byte> enc = gguf_detail::encode_array(GgufType::String, items.size(), nullptr, 0);
  for (std::string_view s : items) put_string(enc, s);
  add_encoded(key, GgufType::Array, enc);
}

void GgufWriter::add_array(std::string_view key, const std::vector<bool>& items) {
  std::vector<uint8_t> b(items.begin(), items.end());
  auto enc = gguf_detail::encode_array(GgufType::Bool, b.size(), b.data(), b.size());
  add_encoded(key, GgufType::Array, enc);
}

void GgufWriter::add_encoded(std::string_view key, GgufType type, std::span<const std::byte> encoded) {
  if (key == GgufFile::kAlignmentKey) {
    // The alignment shapes the layout: take it from the value (any integer width).
    GgufValue v(type, encoded);
    auto a = v.to_int();
    ENSURE(a && *a > 0 && (*a & (*a - 1)) == 0 && *a <= (int64_t(1) << 30),
           "GGUF writer: general.alignment must be a power of two up to 2^30");
    alignment_ = uint64_t(*a);
  }
  begin_kv(key, type);
  put(kv_bytes_, encoded.data(), encoded.size());
}

void GgufWriter::add_tensor(std::string_view name, std::span<const uint64_t> ne, DType type,
                            std::span<const std::byte> data) {
  ENSURE(name.size() <= GgufFile::kMaxNameBytes,
         fmt::format("GGUF writer: tensor name {} is longer than {} bytes", name, GgufFile::kMaxNameBytes));
  ENSURE(ne.size() <= 4, fmt::format("GGUF writer: tensor {} has {} dimensions (at most 4)", name, ne.size()));
  const DTypeInfo& ti = info(type);
  uint64_t n = 1;
  for (uint64_t d : ne) n *= d;
  ENSURE(ne.empty() || ne[0] % ti.block_values == 0,
         fmt::format("GGUF writer: tensor {}: ne[0] = {} is not a multiple of the {} block size {}", name, ne[0],
                     ti.name, ti.block_values));
  uint64_t nbytes = n / ti.block_values * ti.block_bytes;
  ENSURE(data.size() == nbytes, fmt::format("GGUF writer: tensor {} has {} bytes of data, its type and shape need {}",
                                            name, data.size(), nbytes));
  ENSURE(tensor_names_.emplace(name).second, fmt::format("GGUF writer: duplicate tensor {}", name));
  tensors_.push_back({std::string(name), {ne.begin(), ne.end()}, type, {data.begin(), data.end()}});
}

// Everything before the tensor data: header, metadata, tensor infos, padding to the alignment.
std::vector<std::byte> GgufWriter::head() const {
  std::vector<std::byte> out;
  put(out, "GGUF", 4);
  put<uint32_t>(out, version_);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, n_kv_);
  put(out, kv_bytes_.data(), kv_bytes_.size());
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(out, t.name);
    put<uint32_t>(out, uint32_t(t.ne.size()));
    for (uint64_t d : t.ne) put<uint64_t>(out, d);
    put<uint32_t>(out, uint32_t(t.type));
    put<uint64_t>(out, offset);
    offset += align_up(t.data.size(), alignment_);
  }
  // A file without tensors ends after its metadata, like llama.cpp's vocab-only files.
  if (!tensors_.empty()) pad(out, alignment_);
  return out;
}

std::vector<std::byte> GgufWriter::bytes() const {
  std::vector<std::byte> out = head();
  uint64_t data = 0;
  for (const Tensor& t : tensors_) data += align_up(t.data.size(), alignment_);
  out.reserve(out.size() + data);
  for (const Tensor& t : tensors_) {
    put(out, t.data.data(), t.data.size());
    pad(out, alignment_);
  }
  return out;
}

// Streams the tensors rather than building bytes(): a model-sized file needs no second copy.
void GgufWriter::save(const std::string& path) const {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  auto write = [&f](std::span<const std::byte> b) {
    f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  };
  write(head());
  const std::byte zeros[64] = {};
  for (const Tensor& t : tensors_) {
    write(t.data);
    for (uint64_t left = align_up(t.data.size(), alignment_) - t.data.size(); left > 0;) {
      uint64_t n = std::min<uint64_t>(left, sizeof zeros);
      write({zeros, size_t(n)});
      left -= n;
    }
  }
  f.close();
  ENSURE(f.good(), fmt::format("{}: cannot write the file", path));
}

std::vector<GgufWriter> GgufWriter::split(uint32_t parts) const {
  ENSURE(parts >= 1 && parts <= std::max<size_t>(tensors_.size(), 1) && parts <= kMaxSplitParts,
         fmt::format("cannot split {} tensors into {} parts", tensors_.size(), parts));
  size_t per_part = (tensors_.size() + parts - 1) / parts;
  std::vector<GgufWriter> out;
  for (uint32_t i = 0; i < parts; ++i) {
    GgufWriter w;
    if (i == 0) w.n_kv_ = n_kv_, w.kv_bytes_ = kv_bytes_, w.keys_ = keys_, w.alignment_ = alignment_;
    w.version_ = version_;
    if (i > 0 && alignment_ != GgufFile::kDefaultAlignment) w.set_alignment(uint32_t(alignment_));
    w.add(kSplitNoKey, uint16_t(i));
    w.add(kSplitCountKey, uint16_t(parts));
    w.add(kSplitTensorsKey, int32_t(tensors_.size()));
    size_t end = std::min(tensors_.size(), (i + 1) * per_part);
    for (size_t t = i * per_part; t < end; ++t) {
      w.tensors_.push_back(tensors_[t]);
      w.tensor_names_.insert(tensors_[t].name);
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<std::string> GgufWriter::save_split(const std::string& prefix, uint32_t parts) const {
  std::vector<GgufWriter> writers = split(parts);
  std::vector<std::string> paths;
  for (uint32_t i = 0; i < parts; ++i) {
    paths.push_back(split_path(prefix, i, parts));
    writers[i].save(paths.back());
  }
  return paths;
}

}  // namespace vkllm
