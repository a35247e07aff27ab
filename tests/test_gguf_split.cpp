// Split GGUF files (gguf/split.h): the writer lays a model out in parts as llama.cpp's gguf-split
// does, the reader opens it from its first part with every tensor in place, and a part that is
// missing, out of place or the wrong one is one clear error.
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "catch.h"
#include "error.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "gguf/split.h"
#include "gguf/writer.h"

using namespace vkllm;

namespace {

// A folder under /tmp that goes away with the test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/vkllm_split_XXXXXX";
    REQUIRE(mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string error_of(const std::string& path) {
  try {
    GgufFile::open(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("split part names are llama.cpp's", "[gguf][split]") {
  CHECK(split_path("a/model-Q8_0", 0, 3) == "a/model-Q8_0-00001-of-00003.gguf");
  CHECK(split_path("m", 11, 12) == "m-00012-of-00012.gguf");
  auto s = parse_split_path("dir/x-Q4_K_M-00002-of-00005.gguf");
  REQUIRE(s);
  CHECK(s->prefix == "dir/x-Q4_K_M");
  CHECK(s->index == 1);
  CHECK(s->count == 5);
  CHECK(!parse_split_path("x-00006-of-00005.gguf"));
  CHECK(!parse_split_path("x-00000-of-00005.gguf"));
  CHECK(!parse_split_path("x-0001-of-00005.gguf"));
  CHECK(!parse_split_path("x.gguf"));
}

TEST_CASE("a split model opens from its first part as one file", "[gguf][split]") {
  TempDir dir;
  GgufWriter w = fixture_writer({.chat = "chatml"});
  GgufFile whole = GgufFile::parse(w.bytes(), "whole");
  std::vector<std::string> paths = w.save_split(dir.path + "/tiny-F16", 3);
  REQUIRE(paths.size() == 3);
  CHECK(paths[2] == dir.path + "/tiny-F16-00003-of-00003.gguf");

  GgufFile f = GgufFile::open(paths[0]);
  CHECK(f.split_count() == 3);
  REQUIRE(f.tensors().size() == whole.tensors().size());
  uint64_t bytes = 0;
  for (const std::string& p : paths) bytes += std::filesystem::file_size(p);
  CHECK(f.file_bytes() == bytes);
  for (const GgufTensor& t : whole.tensors()) {
    const GgufTensor& s = f.tensor(t.name);
    CHECK(s.type == t.type);
    CHECK(s.ne == t.ne);
    REQUIRE(s.data.size() == t.data.size());
    CHECK(std::memcmp(s.data.data(), t.data.data(), t.data.size()) == 0);
  }
  // The model's metadata is the first part's; every part carries the split keys.
  CHECK(f.get_string("general.architecture") == "llama");
  CHECK(f.get_int(kSplitCountKey) == 3);
  CHECK(f.get_int(kSplitTensorsKey) == int64_t(whole.tensors().size()));
  // A model in one part is just a file with the keys.
  std::vector<std::string> one = w.save_split(dir.path + "/one", 1);
  CHECK(GgufFile::open(one[0]).tensors().size() == whole.tensors().size());
}

TEST_CASE("a split model with a part missing, misplaced or wrong is one clear error", "[gguf][split]") {
  TempDir dir;
  GgufWriter w = fixture_writer({});
  std::vector<std::string> paths = w.save_split(dir.path + "/m", 3);

  CHECK(error_of(paths[1]) == paths[1] + ": part 2 of 3 of a split model: open " + paths[0]);
  std::string renamed = dir.path + "/m.gguf";
  std::filesystem::copy_file(paths[0], renamed);
  CHECK(error_of(renamed) == renamed +
                                 ": the first of 3 parts of a split model, but its name does not end in "
                                 "-00001-of-00003.gguf, so the other parts cannot be found");
  // A part in another part's place.
  std::filesystem::rename(paths[2], dir.path + "/saved");
  CHECK(error_of(paths[0]) == paths[2] + ": cannot open: No such file or directory");
  std::filesystem::copy_file(paths[1], paths[2]);
  CHECK(error_of(paths[0]) == paths[2] + ": expected part 3 of 3 (split.no = 1, split.count = 3)");
  std::filesystem::remove(paths[2]);
  std::filesystem::rename(dir.path + "/saved", paths[2]);
  CHECK(error_of(paths[0]).empty());

  // Fewer tensors than split.tensors.count says.
  GgufWriter short_w = fixture_writer({});
  std::vector<GgufWriter> parts = short_w.split(2);
  GgufWriter lying;
  lying.add(kSplitNoKey, uint16_t(1));
  lying.add(kSplitCountKey, uint16_t(2));
  lying.add(kSplitTensorsKey, int32_t(short_w.tensor_count()));
  parts[0].save(dir.path + "/s-00001-of-00002.gguf");
  lying.save(dir.path + "/s-00002-of-00002.gguf");
  CHECK(error_of(dir.path + "/s-00001-of-00002.gguf") ==
        fmt::format("{}/s-00001-of-00002.gguf: split.tensors.count = {}, but its 2 parts hold {} tensors", dir.path,
                    short_w.tensor_count(), parts[0].tensor_count()));
  CHECK_THROWS_WITH(short_w.split(0),
                    "cannot split " + std::to_string(short_w.tensor_count()) + " tensors into 0 parts");
}
