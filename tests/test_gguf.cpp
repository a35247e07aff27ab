// GGUF reader and writer: every value type round-trips byte for byte, tensor data stays in place,
// and every kind of bad input gives one clear error naming the file (docs/formats.md §1).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "arch/model_config.h"
#include "catch.h"
#include "error.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "text/tokenizer.h"

using namespace vkllm;

namespace {

std::vector<std::byte> bytes_of(std::initializer_list<float> v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), std::data(v), b.size());
  return b;
}

std::vector<std::byte> filled(size_t n, uint8_t seed) {
  std::vector<std::byte> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = std::byte(uint8_t(seed + i * 7));
  return b;
}

// A file with one value of every type, a nested array and tensors of several types.
GgufWriter every_type_writer() {
  GgufWriter w;
  w.add("u8", uint8_t(200));
  w.add("i8", int8_t(-100));
  w.add("u16", uint16_t(60000));
  w.add("i16", int16_t(-30000));
  w.add("u32", uint32_t(4000000000u));
  w.add("i32", int32_t(-2000000000));
  w.add("u64", uint64_t(1) << 40);
  w.add("i64", int64_t(-1) << 40);
  w.add("f32", 1.5f);
  w.add("f64", -2.25);
  w.add("bool", true);
  w.add("string", "héllo");
  w.add("empty", "");
  w.add_array("arr.i32", std::vector<int32_t>{1, -2, 3});
  w.add_array("arr.u8", std::vector<uint8_t>{7, 8});
  w.add_array("arr.f32", std::vector<float>{0.5f, 0.25f});
  w.add_array("arr.str", std::vector<std::string>{"a", "", "ccc"});
  w.add_array("arr.bool", std::vector<bool>{true, false});
  w.add_array("arr.empty", std::vector<uint64_t>{});
  // [[1, 2], [3]] as an array of arrays of u16, encoded by hand.
  std::vector<std::byte> nested;
  auto put = [&](const void* p, size_t n) {
    auto* b = static_cast<const std::byte*>(p);
    nested.insert(nested.end(), b, b + n);
  };
  uint32_t arr = uint32_t(GgufType::Array), u16 = uint32_t(GgufType::U16);
  uint64_t two = 2, one = 1;
  uint16_t v[] = {1, 2, 3};
  put(&arr, 4), put(&two, 8);
  put(&u16, 4), put(&two, 8), put(v, 4);
  put(&u16, 4), put(&one, 8), put(v + 2, 2);
  w.add_encoded("arr.nested", GgufType::Array, nested);
  w.add_tensor("a", {3}, DType::F32, bytes_of({1, 2, 3}));
  w.add_tensor("b", {4, 2}, DType::F16, filled(16, 1));
  w.add_tensor("c", {32, 2}, DType::Q8_0, filled(68, 2));
  w.add_tensor("d", {64, 1, 2}, DType::Q4_0, filled(72, 3));
  return w;
}

// A GGUF file written by hand, to make it wrong in exactly one way.
struct Raw {
  std::vector<std::byte> b;
  Raw& raw(const void* p, size_t n) {
    auto* s = static_cast<const std::byte*>(p);
    b.insert(b.end(), s, s + n);
    return *this;
  }
  Raw& u32(uint32_t v) { return raw(&v, 4); }
  Raw& u64(uint64_t v) { return raw(&v, 8); }
  Raw& str(std::string_view s) { return u64(s.size()).raw(s.data(), s.size()); }
  Raw& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return raw("GGUF", 4).u32(version).u64(n_tensors).u64(n_kv);
  }
  Raw& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(uint32_t(GgufType::U32)).u32(v); }
  Raw& tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(uint32_t(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  Raw& pad(size_t a = 32) {
    b.resize(b.size() + (a - b.size() % a) % a);
    return *this;
  }
  Raw& zeros(size_t n) {
    b.resize(b.size() + n);
    return *this;
  }
};

std::string parse_error(const std::vector<std::byte>& b) {
  try {
    GgufFile::parse(std::span<const std::byte>(b), "bad.gguf");
  } catch (const Error& e) {
    return e.what();
  }
  return "(parsed without error)";
}

}  // namespace

TEST_CASE("GGUF writer and reader round-trip every value type byte for byte", "[gguf]") {
  std::vector<std::byte> bytes = every_type_writer().bytes();
  GgufFile f = GgufFile::parse(std::span<const std::byte>(bytes), "types.gguf");
  CHECK(f.version() == 3);
  CHECK(f.alignment() == 32);
  CHECK(f.metadata().size() == 20);
  CHECK(f.get_int("u8") == 200);
  CHECK(f.get_int("i8") == -100);
  CHECK(f.get_int("u16") == 60000);
  CHECK(f.get_int("i16") == -30000);
  CHECK(f.get_int("u32") == 4000000000);
  CHECK(f.get_int("i32") == -2000000000);
  CHECK(f.get_int("u64") == int64_t(1) << 40);
  CHECK(f.get_int("i64") == -(int64_t(1) << 40));
  CHECK(f.get_float("f32") == 1.5);
  CHECK(f.get_float("f64") == -2.25);
  CHECK(f.get_float("u8") == 200.0);  // integers are numbers too
  CHECK(f.get_bool("bool"));
  CHECK(f.get_string("string") == "héllo");
  CHECK(f.get_string("empty").empty());
  CHECK(f.get_int_array("arr.i32") == std::vector<int64_t>{1, -2, 3});
  CHECK(f.get_int_array("arr.u8") == std::vector<int64_t>{7, 8});
  CHECK(f.get_float_array("arr.f32") == std::vector<float>{0.5f, 0.25f});
  CHECK(f.get_string_array("arr.str") == std::vector<std::string_view>{"a", "", "ccc"});
  CHECK(f.get_array("arr.bool").elements()[0].to_bool() == true);
  CHECK(f.get_array("arr.empty").size() == 0);
  const GgufValue& nested = f.get_array("arr.nested");
  REQUIRE(nested.element_type() == GgufType::Array);
  auto outer = nested.elements();
  REQUIRE(outer.size() == 2);
  CHECK(outer[0].elements().size() == 2);
  CHECK(outer[0].elements()[1].to_int() == 2);
  CHECK(outer[1].elements()[0].to_int() == 3);
  REQUIRE(f.tensors().size() == 4);
  const GgufTensor& d = f.tensor("d");
  CHECK(d.type == DType::Q4_0);
  CHECK(d.shape() == std::vector<uint64_t>{64, 1, 2});
  CHECK(d.data.size() == 72);
  CHECK(std::equal(d.data.begin(), d.data.end(), filled(72, 3).begin()));
  for (const GgufTensor& t : f.tensors()) {
    CHECK(t.offset % 32 == 0);
    CHECK((t.data.data() >= bytes.data() && t.data.data() + t.data.size() <= bytes.data() + bytes.size()));
  }
  CHECK(GgufWriter::from(f).bytes() == bytes);
}

TEST_CASE("GGUF alignment of any integer width and version 2 round-trip", "[gguf]") {
  GgufWriter w;
  w.set_version(2);
  w.add(GgufFile::kAlignmentKey, uint8_t(64));  // llama.cpp writes u32; any width is accepted
  w.add_tensor("x", {5}, DType::F32, bytes_of({1, 2, 3, 4, 5}));
  w.add_tensor("y", {3}, DType::F32, bytes_of({6, 7, 8}));
  std::vector<std::byte> bytes = w.bytes();
  GgufFile f = GgufFile::parse(std::span<const std::byte>(bytes), "v2.gguf");
  CHECK(f.version() == 2);
  CHECK(f.alignment() == 64);
  CHECK(f.data_offset() % 64 == 0);
  CHECK(f.tensor("y").offset == 64);
  CHECK(bytes.size() == f.data_offset() + 128);
  CHECK(GgufWriter::from(f).bytes() == bytes);
}

TEST_CASE("GGUF file without tensors ends after its metadata", "[gguf]") {
  GgufWriter w;
  w.add("k", uint32_t(1));
  std::vector<std::byte> bytes = w.bytes();
  CHECK(bytes.size() == 24 + 8 + 1 + 4 + 4);
  GgufFile f = GgufFile::parse(std::span<const std::byte>(bytes), "vocab.gguf");
  CHECK(f.tensors().empty());
  CHECK(GgufWriter::from(f).bytes() == bytes);
}

TEST_CASE("GGUF metadata getters name the file and the key", "[gguf]") {
  GgufFile f = GgufFile::parse(every_type_writer().bytes(), "m.gguf");
  auto error_of = [](auto fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error_of([&] { f.get_int("nope"); }) == "m.gguf: missing metadata key nope");
  CHECK(error_of([&] { f.get_int("string"); }) == "m.gguf: metadata key string is string, expected an integer");
  CHECK(error_of([&] { f.get_string("arr.i32"); }) ==
        "m.gguf: metadata key arr.i32 is array of i32, expected a string");
  CHECK(error_of([&] { f.get_string_array("arr.i32"); }) ==
        "m.gguf: metadata key arr.i32 is array of i32, expected an array of strings");
  CHECK(error_of([&] { f.get_bool("u8"); }) == "m.gguf: metadata key u8 is u8, expected a bool");
  CHECK(error_of([&] { f.tensor("zz"); }) == "m.gguf: missing tensor zz");
  CHECK(f.get_int("nope", 7) == 7);
  CHECK(f.get_string("nope", "x") == "x");
  CHECK_THROWS_AS(f.get_int("string", 7), Error);  // a fallback does not excuse a wrong type
}

TEST_CASE("GGUF open maps a file and reports unreadable paths", "[gguf]") {
  std::string path = fmt::format("/tmp/vkllm_test_gguf_{}.gguf", getpid());
  every_type_writer().save(path);
  {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> saved{std::istreambuf_iterator<char>(in), {}};
    std::vector<std::byte> want = every_type_writer().bytes();
    CHECK(saved.size() == want.size());
    CHECK(std::memcmp(saved.data(), want.data(), std::min(saved.size(), want.size())) == 0);  // save streams bytes()
  }
  {
    GgufFile f = GgufFile::open(path);
    CHECK(f.name() == path);
    CHECK(f.get_string("string") == "héllo");
    CHECK(f.tensor("a").data.size() == 12);
  }
  std::remove(path.c_str());
  CHECK_THROWS_WITH(GgufFile::open(path), Catch::Contains(path + ": cannot open"));
  CHECK_THROWS_WITH(GgufFile::open("/tmp"), "/tmp: is a directory");
}

TEST_CASE("GGUF bad input gives one clear error per case", "[gguf]") {
  struct Case {
    const char* what;
    std::vector<std::byte> bytes;
    const char* expect;
  };
  std::mt19937 rng(5);
  std::vector<std::byte> random(4096);
  for (auto& b : random) b = std::byte(rng());
  uint32_t f32 = 0;
  std::vector<Case> cases = {
      {"empty", {}, "not a GGUF file (only 0 bytes)"},
      {"random bytes", random, "not a GGUF file"},
      {"version 1", Raw().header(0, 0, 1).b, "GGUF version 1 is not supported"},
      {"big-endian", Raw().header(0, 0, 0x03000000).b, "looks byte-swapped"},
      {"truncated header", Raw().raw("GGUF", 4).u32(3).u64(0).b, "file is truncated: the metadata count needs 8"},
      {"huge kv count", Raw().header(0, uint64_t(1) << 60).b, "declares 1152921504606846976 metadata entries"},
      {"huge tensor count", Raw().header(uint64_t(1) << 62, 0).b, "declares 4611686018427387904 tensors"},
      {"huge string length", Raw().header(0, 1).u64(uint64_t(1) << 63).zeros(16).b,
       "file is truncated: metadata entry 0 needs 9223372036854775808 bytes"},
      {"unknown value type", Raw().header(0, 1).str("k").u32(13).u32(0).b, "metadata key k has unknown value type 13"},
      {"huge array", Raw().header(0, 1).str("k").u32(9).u32(uint32_t(GgufType::U32)).u64(uint64_t(1) << 61).b,
       "metadata key k declares 2305843009213693952 elements of type u32"},
      {"bool of 2", Raw().header(0, 1).str("k").u32(7).raw("\x02", 1).zeros(16).b,
       "metadata key k is a bool with value 2"},
      {"duplicate key", Raw().header(0, 2).kv_u32("k", 1).kv_u32("k", 2).b, "duplicate metadata key k"},
      {"alignment 3", Raw().header(0, 1).kv_u32("general.alignment", 3).b,
       "general.alignment = 3 is not a power of two"},
      {"unknown tensor type", Raw().header(1, 0).tensor("blk.0.w", {32}, 99, 0).pad().zeros(128).b,
       "tensor blk.0.w has unknown type id 99"},
      {"offset past the end", Raw().header(1, 0).tensor("blk.3.attn_q.weight", {8}, f32, 64).pad().zeros(32).b,
       "tensor blk.3.attn_q.weight extends past end of file (32 bytes at data offset 64, data section has 32)"},
      {"misaligned offset", Raw().header(1, 0).tensor("t", {1}, f32, 4).pad().zeros(64).b,
       "tensor t offset 4 is not a multiple of the alignment 32"},
      {"five dims", Raw().header(1, 0).tensor("t", {1, 1, 1, 1, 1}, f32, 0).pad().zeros(32).b,
       "tensor t has 5 dimensions"},
      {"element overflow",
       Raw().header(1, 0).tensor("t", {uint64_t(1) << 32, uint64_t(1) << 32}, f32, 0).pad().zeros(32).b,
       "tensor t has too many elements"},
      {"byte overflow", Raw().header(1, 0).tensor("t", {uint64_t(1) << 62}, f32, 0).pad().zeros(32).b,
       "tensor t is too large"},
      {"partial block", Raw().header(1, 0).tensor("t", {33}, 8, 0).pad().zeros(64).b,
       "tensor t: ne[0] = 33 is not a multiple of the q8_0 block size 32"},
      {"duplicate tensor", Raw().header(2, 0).tensor("t", {1}, f32, 0).tensor("t", {1}, f32, 32).pad().zeros(64).b,
       "duplicate tensor t"},
      {"long name", Raw().header(1, 0).tensor(std::string(64, 'n'), {1}, f32, 0).pad().zeros(32).b,
       "name longer than 63 bytes"},
      {"no data section", Raw().header(1, 0).tensor("t", {1}, f32, 0).b, "the data section would start at"},
      {"newline in a name", Raw().header(1, 0).tensor("a\nb", {1}, 99, 0).pad().zeros(32).b,
       "tensor a\\x0ab has unknown type id 99"},
  };
  // Arrays nested nine deep.
  Raw deep;
  deep.header(0, 1).str("k").u32(9);
  for (int i = 0; i < 9; ++i) deep.u32(9).u64(1);
  cases.push_back({"nested too deep", deep.zeros(16).b, "metadata key k nests arrays deeper than 8"});
  for (const Case& c : cases) {
    INFO(c.what);
    std::string msg = parse_error(c.bytes);
    CHECK(msg.starts_with("bad.gguf: "));
    CHECK(msg.find(c.expect) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
}

TEST_CASE("GGUF every truncation of a valid file is rejected cleanly", "[gguf]") {
  std::vector<std::byte> bytes = every_type_writer().bytes();
  GgufFile whole = GgufFile::parse(std::span<const std::byte>(bytes), "whole.gguf");
  const GgufTensor& last = whole.tensors().back();
  size_t data_end = whole.data_offset() + last.offset + last.data.size();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::span<const std::byte> prefix(bytes.data(), n);
    if (n >= data_end) {  // only padding is missing: still a whole file
      CHECK_NOTHROW(GgufFile::parse(prefix, "cut.gguf"));
      continue;
    }
    CHECK_THROWS_AS(GgufFile::parse(prefix, "cut.gguf"), Error);
  }
}

TEST_CASE("GGUF random corruption of a fixture model never crashes", "[gguf]") {
  FixtureSpec spec;
  spec.dim = 32, spec.n_heads = 2, spec.n_kv_heads = 1, spec.hidden_dim = 32, spec.vocab_size = 300;
  std::vector<std::byte> good = make_fixture_model(spec);
  std::mt19937 rng(11);
  int parsed = 0, rejected = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<std::byte> b = good;
    int flips = 1 + int(rng() % 8);
    for (int i = 0; i < flips; ++i) b[rng() % 4096] = std::byte(rng());  // the header, metadata and vocab
    try {
      GgufFile f = GgufFile::parse(std::span<const std::byte>(b), "corrupt.gguf");
      ModelConfig::from_gguf(f);
      Tokenizer t = Tokenizer::from_gguf(f);
      t.decode(t.encode("hello \xff world", true));
      ++parsed;
    } catch (const Error& e) {
      CHECK(std::string(e.what()).starts_with("corrupt.gguf: "));
      ++rejected;
    }
  }
  INFO(fmt::format("{} corrupted files still loaded, {} rejected", parsed, rejected));
  CHECK(parsed + rejected == 300);
}
