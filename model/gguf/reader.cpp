// GGUF parsing: every count, length, type and offset is checked against the bytes that remain
// before it is used, and every size product is checked for overflow. Values stay in the file.
#include "gguf/reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstring>

#include "align.h"
#include "error.h"
#include "gguf/split.h"

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian; so is every target");

namespace vkllm {

namespace {

constexpr std::string_view kTypeNames[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                           "bool", "string", "array", "u64", "i64", "f64"};
constexpr size_t kTypeSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
constexpr uint32_t kNumTypes = 13;

template <class T>
T load(std::span<const std::byte> b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

// Length of one already-validated value encoding starting at `at`.
size_t encoded_length(GgufType type, std::span<const std::byte> b, size_t at) {
  if (size_t s = gguf_type_size(type)) return s;
  if (type == GgufType::String) return 8 + load<uint64_t>(b, at);
  auto elem = static_cast<GgufType>(load<uint32_t>(b, at));
  uint64_t count = load<uint64_t>(b, at + 4);
  if (size_t s = gguf_type_size(elem)) return 12 + count * s;
  size_t pos = at + 12;
  for (uint64_t i = 0; i < count; ++i) pos += encoded_length(elem, b, pos);
  return pos - at;
}

// A read-only mapping of a whole file.
struct Mapping {
  void* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data) munmap(data, size);
  }
};

}  // namespace

std::string printable(std::string_view s) {
  // Names come from untrusted files: keep error messages on one readable line.
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < 80; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f)
      out += char(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (out.size() >= 80) out += "...";
  return out;
}

std::string_view gguf_type_name(GgufType t) {
  auto i = static_cast<uint32_t>(t);
  return i < kNumTypes ? kTypeNames[i] : "unknown";
}

size_t gguf_type_size(GgufType t) {
  auto i = static_cast<uint32_t>(t);
  return i < kNumTypes ? kTypeSizes[i] : 0;
}

// --- GgufValue

bool GgufValue::is_integer() const {
  switch (type_) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::U16:
    case GgufType::I16:
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::U64:
    case GgufType::I64:
      return true;
    default:
      return false;
  }
}

std::optional<int64_t> GgufValue::to_int() const {
  switch (type_) {
    case GgufType::U8:
      return load<uint8_t>(encoded_, 0);
    case GgufType::I8:
      return load<int8_t>(encoded_, 0);
    case GgufType::U16:
      return load<uint16_t>(encoded_, 0);
    case GgufType::I16:
      return load<int16_t>(encoded_, 0);
    case GgufType::U32:
      return load<uint32_t>(encoded_, 0);
    case GgufType::I32:
      return load<int32_t>(encoded_, 0);
    case GgufType::I64:
      return load<int64_t>(encoded_, 0);
    case GgufType::U64: {
      uint64_t v = load<uint64_t>(encoded_, 0);
      if (v > uint64_t(INT64_MAX)) return std::nullopt;
      return int64_t(v);
    }
    default:
      return std::nullopt;
  }
}

std::optional<double> GgufValue::to_float() const {
  if (type_ == GgufType::F32) return load<float>(encoded_, 0);
  if (type_ == GgufType::F64) return load<double>(encoded_, 0);
  if (auto i = to_int()) return double(*i);
  return std::nullopt;
}

std::optional<bool> GgufValue::to_bool() const {
  if (type_ != GgufType::Bool) return std::nullopt;
  return load<uint8_t>(encoded_, 0) != 0;
}

std::optional<std::string_view> GgufValue::to_string() const {
  if (type_ != GgufType::String) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(encoded_.data()) + 8, load<uint64_t>(encoded_, 0));
}

GgufType GgufValue::element_type() const {
  return type_ == GgufType::Array ? static_cast<GgufType>(load<uint32_t>(encoded_, 0)) : type_;
}

uint64_t GgufValue::size() const { return type_ == GgufType::Array ? load<uint64_t>(encoded_, 4) : 1; }

std::vector<GgufValue> GgufValue::elements() const {
  std::vector<GgufValue> out;
  if (type_ != GgufType::Array) return out;
  GgufType elem = element_type();
  uint64_t n = size();
  out.reserve(n);
  size_t pos = 12;
  for (uint64_t i = 0; i < n; ++i) {
    size_t len = encoded_length(elem, encoded_, pos);
    out.emplace_back(elem, encoded_.subspan(pos, len));
    pos += len;
  }
  return out;
}

// --- parsing

class GgufParser {
 public:
  explicit GgufParser(GgufFile& f) : f_(f), b_(f.bytes_) {}

  void run() {
    read_header();
    uint64_t n_tensors = read<uint64_t>("the tensor count");
    uint64_t n_kv = read<uint64_t>("the metadata count");
    // Smallest encodings: a KV is an empty key + type + 1 byte; a tensor info an empty name,
    // n_dims, type and offset. Larger declared counts cannot fit in the file.
    if (n_kv > remaining() / 13)
      f_.fail(fmt::format("declares {} metadata entries but only {} bytes follow the header", n_kv, remaining()));
    for (uint64_t i = 0; i < n_kv; ++i) read_kv(i);
    if (n_tensors > remaining() / 24)
      f_.fail(fmt::format("declares {} tensors but only {} bytes follow the metadata", n_tensors, remaining()));
    read_alignment();
    for (uint64_t i = 0; i < n_tensors; ++i) read_tensor_info(i);
    place_tensors();
  }

 private:
  GgufFile& f_;
  std::span<const std::byte> b_;
  uint64_t pos_ = 0;

  uint64_t remaining() const { return b_.size() - pos_; }

  void need(uint64_t n, std::string_view what) {
    if (n > remaining())
      f_.fail(fmt::format("file is truncated: {} needs {} bytes at offset {}, {} left", what, n, pos_, remaining()));
  }

  template <class T>
  T read(std::string_view what) {
    need(sizeof(T), what);
    T v = load<T>(b_, pos_);
    pos_ += sizeof(T);
    return v;
  }

  std::string_view read_string(std::string_view what) {
    uint64_t len = read<uint64_t>(what);
    need(len, what);
    std::string_view s(reinterpret_cast<const char*>(b_.data()) + pos_, len);
    pos_ += len;
    return s;
  }

  void read_header() {
    if (b_.size() < 4) f_.fail(fmt::format("not a GGUF file (only {} bytes)", b_.size()));
    if (std::memcmp(b_.data(), "GGUF", 4) != 0) {
      auto u = [&](int i) { return std::to_integer<unsigned>(b_[i]); };
      f_.fail(fmt::format("not a GGUF file (starts with {:02x} {:02x} {:02x} {:02x}, expected \"GGUF\")", u(0), u(1),
                          u(2), u(3)));
    }
    pos_ = 4;
    uint32_t v = read<uint32_t>("the version");
    if (v != 0 && (v & 0xFFFF) == 0)
      f_.fail(fmt::format("GGUF version {:#x} looks byte-swapped; big-endian files are not supported", v));
    if (v < 2 || v > 3) f_.fail(fmt::format("GGUF version {} is not supported (only 2 and 3)", v));
    f_.version_ = v;
  }

  GgufType read_type(std::string_view what) {
    uint32_t t = read<uint32_t>(what);
    if (t >= kNumTypes) f_.fail(fmt::format("{} has unknown value type {}", what, t));
    return static_cast<GgufType>(t);
  }

  GgufValue read_value(GgufType type, int depth, std::string_view what) {
    uint64_t start = pos_;
    if (size_t s = gguf_type_size(type)) {
      need(s, what);
      if (type == GgufType::Bool && std::to_integer<uint8_t>(b_[pos_]) > 1)
        f_.fail(fmt::format("{} is a bool with value {}", what, std::to_integer<unsigned>(b_[pos_])));
      pos_ += s;
    } else if (type == GgufType::String) {
      read_string(what);
    } else {
      read_array(depth, what);
    }
    return GgufValue(type, b_.subspan(start, pos_ - start));
  }

  void read_array(int depth, std::string_view what) {
    if (depth >= GgufFile::kMaxArrayDepth)
      f_.fail(fmt::format("{} nests arrays deeper than {}", what, GgufFile::kMaxArrayDepth));
    GgufType elem = read_type(what);
    uint64_t count = read<uint64_t>(what);
    size_t s = gguf_type_size(elem);
    uint64_t min_size = s ? s : elem == GgufType::String ? 8 : 12;
    if (count > remaining() / min_size)
      f_.fail(fmt::format("{} declares {} elements of type {}, more than the {} bytes left", what, count,
                          gguf_type_name(elem), remaining()));
    if (s && elem != GgufType::Bool) {
      pos_ += count * s;
      return;
    }
    for (uint64_t i = 0; i < count; ++i) read_value(elem, depth + 1, what);
  }

  void read_kv(uint64_t i) {
    std::string what = fmt::format("metadata entry {}", i);
    std::string_view key = read_string(what);
    what = fmt::format("metadata key {}", printable(key));
    GgufType type = read_type(what);
    GgufValue value = read_value(type, 0, what);
    if (!f_.kv_index_.emplace(key, f_.kvs_.size()).second)
      f_.fail(fmt::format("duplicate metadata key {}", printable(key)));
    f_.kvs_.push_back({key, value});
  }

  void read_alignment() {
    const GgufValue* v = f_.find(GgufFile::kAlignmentKey);
    if (!v) return;
    auto a = v->to_int();
    if (!a) f_.fail(fmt::format("{} must be an integer, not {}", GgufFile::kAlignmentKey, gguf_type_name(v->type())));
    if (*a <= 0 || (*a & (*a - 1)) != 0 || *a > (int64_t(1) << 30))
      f_.fail(fmt::format("{} = {} is not a power of two up to 2^30", GgufFile::kAlignmentKey, *a));
    f_.alignment_ = uint64_t(*a);
  }

  void read_tensor_info(uint64_t i) {
    GgufTensor t;
    t.name = read_string(fmt::format("tensor {}", i));
    std::string what = fmt::format("tensor {}", printable(t.name));
    if (t.name.size() > GgufFile::kMaxNameBytes)
      f_.fail(fmt::format("{}: name longer than {} bytes", what, GgufFile::kMaxNameBytes));
    t.n_dims = read<uint32_t>(what);
    if (t.n_dims > 4) f_.fail(fmt::format("{} has {} dimensions (at most 4)", what, t.n_dims));
    uint64_t elements = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      t.ne[d] = read<uint64_t>(what);
      if (t.ne[d] != 0 && elements > uint64_t(INT64_MAX) / t.ne[d])
        f_.fail(fmt::format("{} has too many elements (dimension {} = {})", what, d, t.ne[d]));
      elements *= t.ne[d];
    }
    uint32_t type_id = read<uint32_t>(what);
    std::optional<DTypeInfo> info = dtype_info(type_id);
    if (!info) f_.fail(fmt::format("{} has unknown type id {}", what, type_id));
    t.type = info->type;
    if (t.ne[0] % info->block_values != 0)
      f_.fail(fmt::format("{}: ne[0] = {} is not a multiple of the {} block size {}", what, t.ne[0], info->name,
                          info->block_values));
    t.offset = read<uint64_t>(what);
    if (!f_.tensor_index_.emplace(t.name, f_.tensors_.size()).second)
      f_.fail(fmt::format("duplicate tensor {}", printable(t.name)));
    f_.tensors_.push_back(t);
  }

  // Sizes and offsets, once the data section's start is known.
  void place_tensors() {
    if (f_.tensors_.empty()) {
      f_.data_offset_ = std::min<uint64_t>(align_up(pos_, f_.alignment_), b_.size());
      return;
    }
    f_.data_offset_ = align_up(pos_, f_.alignment_);
    if (f_.data_offset_ > b_.size())
      f_.fail(fmt::format("file is truncated: the data section would start at {}, past the end ({} bytes)",
                          f_.data_offset_, b_.size()));
    uint64_t data_size = b_.size() - f_.data_offset_;
    for (GgufTensor& t : f_.tensors_) {
      std::string name = printable(t.name);
      const DTypeInfo& info = vkllm::info(t.type);
      // Bytes = blocks * block_bytes; blocks <= elements <= INT64_MAX, so check the product.
      uint64_t blocks = t.n_elements() / info.block_values;
      if (blocks > UINT64_MAX / info.block_bytes) f_.fail(fmt::format("tensor {} is too large", name));
      uint64_t nbytes = blocks * info.block_bytes;
      if (t.offset % f_.alignment_ != 0)
        f_.fail(
            fmt::format("tensor {} offset {} is not a multiple of the alignment {}", name, t.offset, f_.alignment_));
      if (t.offset > data_size || nbytes > data_size - t.offset)
        f_.fail(fmt::format("tensor {} extends past end of file ({} bytes at data offset {}, data section has {})",
                            name, nbytes, t.offset, data_size));
      t.data = b_.subspan(f_.data_offset_ + t.offset, nbytes);
    }
  }
};

// --- GgufFile

GgufFile GgufFile::parse(std::span<const std::byte> bytes, std::string name) {
  GgufFile f;
  f.name_ = std::move(name);
  f.bytes_ = bytes;
  f.file_bytes_ = bytes.size();
  GgufParser(f).run();
  return f;
}

GgufFile GgufFile::parse(std::vector<std::byte> bytes, std::string name) {
  auto owned = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  GgufFile f = parse(std::span<const std::byte>(*owned), std::move(name));
  f.owners_.push_back(owned);
  return f;
}

GgufFile GgufFile::open_one(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; a special file is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(fmt::format("{}: {}", path, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file"));
  }
  auto map = std::make_shared<Mapping>();
  map->size = size_t(st.st_size);
  if (map->size > 0) {
    void* p = mmap(nullptr, map->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      throw Error(fmt::format("{}: cannot map: {}", path, std::strerror(err)));
    }
    map->data = p;
  }
  ::close(fd);
  GgufFile f = GgufFile::parse(std::span<const std::byte>(static_cast<const std::byte*>(map->data), map->size), path);
  return std::move(f).adopt(map);
}

GgufFile GgufFile::adopt(std::shared_ptr<const void> owner) && {
  owners_.push_back(std::move(owner));
  return std::move(*this);
}

// The first part keeps its metadata and gains the tensors of the others, each checked to be the
// part its name says (split.no) with no tensor twice; the count must match split.tensors.count.
GgufFile GgufFile::open(const std::string& path) {
  GgufFile f = open_one(path);
  int64_t count = f.get_int(kSplitCountKey, 1), index = f.get_int(kSplitNoKey, 0);
  if (count <= 1) return f;
  if (count > kMaxSplitParts)
    f.fail(fmt::format("{} = {} is more than {} parts", kSplitCountKey, count, kMaxSplitParts));
  std::optional<SplitName> name = parse_split_path(path);
  if (index != 0) {
    std::string first = name ? split_path(name->prefix, 0, uint32_t(count)) : "its first part";
    f.fail(fmt::format("part {} of {} of a split model: open {}", index + 1, count, first));
  }
  if (!name || name->index != 0 || name->count != count)
    f.fail(
        fmt::format("the first of {} parts of a split model, but its name does not end in -00001-of-{:05}.gguf, so "
                    "the other parts cannot be found",
                    count, count));
  f.split_count_ = uint32_t(count);
  for (uint32_t i = 1; i < count; ++i) f.add_part(open_one(split_path(name->prefix, i, uint32_t(count))), i);
  int64_t expected = f.get_int(kSplitTensorsKey, int64_t(f.tensors_.size()));
  if (expected != int64_t(f.tensors_.size()))
    f.fail(
        fmt::format("{} = {}, but its {} parts hold {} tensors", kSplitTensorsKey, expected, count, f.tensors_.size()));
  return f;
}

void GgufFile::add_part(GgufFile part, uint32_t index) {
  if (part.get_int(kSplitNoKey, -1) != index || part.get_int(kSplitCountKey, -1) != split_count_)
    part.fail(fmt::format("expected part {} of {} ({} = {}, {} = {})", index + 1, split_count_, kSplitNoKey,
                          part.get_int(kSplitNoKey, -1), kSplitCountKey, part.get_int(kSplitCountKey, -1)));
  for (const GgufTensor& t : part.tensors_) {
    if (!tensor_index_.emplace(t.name, tensors_.size()).second)
      part.fail(fmt::format("tensor {} is also in an earlier part", printable(t.name)));
    tensors_.push_back(t);
  }
  file_bytes_ += part.file_bytes_;
  owners_.insert(owners_.end(), part.owners_.begin(), part.owners_.end());
}

void GgufFile::fail(const std::string& what) const { throw Error(name_ + ": " + what); }

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].value;
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensor& GgufFile::tensor(std::string_view name) const {
  const GgufTensor* t = find_tensor(name);
  if (!t) fail(fmt::format("missing tensor {}", printable(name)));
  return *t;
}

// --- typed metadata getters

namespace {

std::string describe(const GgufValue& v) {
  if (v.type() != GgufType::Array) return std::string(gguf_type_name(v.type()));
  return fmt::format("array of {}", gguf_type_name(v.element_type()));
}

[[noreturn]] void wrong_type(const GgufFile& f, std::string_view key, const GgufValue& v, std::string_view want) {
  f.fail(fmt::format("metadata key {} is {}, expected {}", printable(key), describe(v), want));
}

const GgufValue& require(const GgufFile& f, std::string_view key) {
  const GgufValue* v = f.find(key);
  if (!v) f.fail(fmt::format("missing metadata key {}", printable(key)));
  return *v;
}

template <class T>
T convert(const GgufFile& f, std::string_view key, const GgufValue& v, std::optional<T> got, std::string_view want) {
  if (!got) wrong_type(f, key, v, want);
  return *got;
}

}  // namespace

int64_t GgufFile::get_int(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  return convert(*this, key, v, v.to_int(), "an integer");
}

int64_t GgufFile::get_int(std::string_view key, int64_t fallback) const { return has(key) ? get_int(key) : fallback; }

double GgufFile::get_float(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  return convert(*this, key, v, v.to_float(), "a number");
}

double GgufFile::get_float(std::string_view key, double fallback) const { return has(key) ? get_float(key) : fallback; }

bool GgufFile::get_bool(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  return convert(*this, key, v, v.to_bool(), "a bool");
}

bool GgufFile::get_bool(std::string_view key, bool fallback) const { return has(key) ? get_bool(key) : fallback; }

std::string_view GgufFile::get_string(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  return convert(*this, key, v, v.to_string(), "a string");
}

std::string_view GgufFile::get_string(std::string_view key, std::string_view fallback) const {
  return has(key) ? get_string(key) : fallback;
}

const GgufValue& GgufFile::get_array(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  if (v.type() != GgufType::Array) wrong_type(*this, key, v, "an array");
  return v;
}

std::vector<int64_t> GgufFile::get_int_array(std::string_view key) const {
  const GgufValue& a = get_array(key);
  std::vector<int64_t> out;
  out.reserve(a.size());
  for (const GgufValue& e : a.elements()) out.push_back(convert(*this, key, a, e.to_int(), "an array of integers"));
  return out;
}

std::vector<float> GgufFile::get_float_array(std::string_view key) const {
  const GgufValue& a = get_array(key);
  std::vector<float> out;
  out.reserve(a.size());
  for (const GgufValue& e : a.elements())
    out.push_back(float(convert(*this, key, a, e.to_float(), "an array of numbers")));
  return out;
}

std::vector<std::string_view> GgufFile::get_string_array(std::string_view key) const {
  const GgufValue& a = get_array(key);
  std::vector<std::string_view> out;
  out.reserve(a.size());
  for (const GgufValue& e : a.elements()) out.push_back(convert(*this, key, a, e.to_string(), "an array of strings"));
  return out;
}

}  // namespace vkllm
