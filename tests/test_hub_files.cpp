// Which file of a Hugging Face repository a request names (apps/hub/repo_files.h): llama.cpp's -hf
// rules on real repositories' file names, split models, and the errors that list what is there.
#include "catch.h"
#include "error.h"
#include "hub/model_cache.h"
#include "hub/repo_files.h"

using namespace vkllm::hub;

namespace {

std::vector<RepoFile> files(std::initializer_list<const char*> paths) {
  std::vector<RepoFile> out;
  for (const char* p : paths) out.push_back({p, 100, ""});
  return out;
}

std::vector<std::string> chosen(const std::vector<RepoFile>& all, const std::string& ref,
                                const std::string& file = "") {
  std::vector<std::string> out;
  for (const RepoFile& f : select_model(all, *parse_hub_ref(ref), file)) out.push_back(f.path);
  return out;
}

std::string error_of(const std::vector<RepoFile>& all, const std::string& ref, const std::string& file = "") {
  try {
    select_model(all, *parse_hub_ref(ref), file);
  } catch (const vkllm::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("USER/REPO[:QUANT] as -hf takes it", "[hub]") {
  auto r = parse_hub_ref("bartowski/SmolLM2-135M-Instruct-GGUF:q8_0");
  REQUIRE(r);
  CHECK(r->repo == "bartowski/SmolLM2-135M-Instruct-GGUF");
  CHECK(r->tag == "Q8_0");
  CHECK(r->name() == "bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0");
  CHECK(parse_hub_ref("a/b")->tag.empty());
  for (const char* bad : {"a", "a/", "/b", "a/b/c", "a/b:", "a/b:Q4.1", "a b/c", "../x", "a/.."})
    CHECK_FALSE(parse_hub_ref(bad));
  auto n = parse_model_name("a/b/sub/f-Q8_0.gguf");
  REQUIRE(n);
  CHECK(n->ref.repo == "a/b");
  CHECK(n->file == "sub/f-Q8_0.gguf");
  CHECK_FALSE(parse_model_name("a/b/../f.gguf"));
  CHECK_FALSE(parse_model_name("model.gguf"));
}

TEST_CASE("the quant a file name carries", "[hub]") {
  CHECK(quant_tag("SmolLM2-135M-Instruct-Q8_0.gguf") == "Q8_0");
  CHECK(quant_tag("qwen2.5-0.5b-instruct-q4_k_m.gguf") == "Q4_K_M");
  CHECK(quant_tag("llama-2-7b.Q4_K_M.gguf") == "Q4_K_M");
  CHECK(quant_tag("Q4_K_M/DeepSeek-R1-Q4_K_M-00001-of-00009.gguf") == "Q4_K_M");
  CHECK(quant_tag("Llama-3.2-1B-Instruct-f16.gguf") == "F16");
  CHECK(quant_tag("model.gguf") == "");
  CHECK(is_model_file("x-Q8_0.gguf"));
  CHECK_FALSE(is_model_file("mmproj-x-f16.gguf"));
  CHECK_FALSE(is_model_file("x.imatrix.gguf"));
  CHECK_FALSE(is_model_file("README.md"));
  CHECK(is_safe_path("a/b.gguf"));
  for (const char* bad : {"", "/etc/x", "a/../b", "./a", "a//b", "a/"}) CHECK_FALSE(is_safe_path(bad));
}

TEST_CASE("a repository's model file is chosen as llama.cpp's -hf chooses it", "[hub]") {
  auto all = files({"README.md", "mmproj-m-f16.gguf", "m-Q2_K.gguf", "m-Q4_K_M.gguf", "m-Q8_0.gguf",
                    "m-F16-00001-of-00002.gguf", "m-F16-00002-of-00002.gguf"});
  CHECK(chosen(all, "u/m") == std::vector<std::string>{"m-Q4_K_M.gguf"});
  CHECK(chosen(all, "u/m:q8_0") == std::vector<std::string>{"m-Q8_0.gguf"});
  CHECK(chosen(all, "u/m:F16") == std::vector<std::string>{"m-F16-00001-of-00002.gguf", "m-F16-00002-of-00002.gguf"});
  CHECK(chosen(all, "u/m", "m-Q2_K.gguf") == std::vector<std::string>{"m-Q2_K.gguf"});
  CHECK(chosen(all, "u/m", "M-q2_k.GGUF") == std::vector<std::string>{"m-Q2_K.gguf"});  // any case, as llama.cpp
  CHECK(chosen(files({"m-Q8_0.gguf", "m-Q6_K.gguf"}), "u/m") == std::vector<std::string>{"m-Q8_0.gguf"});
  CHECK(chosen(files({"README.md", "m-IQ3_M.gguf", "m-Q6_K.gguf"}), "u/m") == std::vector<std::string>{"m-IQ3_M.gguf"});
  CHECK(quants(all) == std::vector<std::string>{"Q2_K", "Q4_K_M", "Q8_0", "F16"});

  CHECK(error_of(all, "u/m:Q5_K_S") == "u/m has no Q5_K_S model file; it has Q2_K, Q4_K_M, Q8_0, F16");
  CHECK(error_of(all, "u/m", "m-Q3_K.gguf") ==
        "u/m has no file m-Q3_K.gguf; its GGUF files: mmproj-m-f16.gguf, m-Q2_K.gguf, m-Q4_K_M.gguf, m-Q8_0.gguf, "
        "m-F16-00001-of-00002.gguf, m-F16-00002-of-00002.gguf");
  CHECK(error_of(files({"README.md", "model.safetensors"}), "u/m") == "u/m has no GGUF model files");
  CHECK(error_of(files({"m-F16-00001-of-00003.gguf", "m-F16-00003-of-00003.gguf"}), "u/m:F16") ==
        "u/m lists m-F16-00001-of-00003.gguf without part 2 of 3 (m-F16-00002-of-00003.gguf)");
}

TEST_CASE("the projector beside a model, as llama.cpp's -hf picks it", "[hub]") {
  auto all = files({"README.md", "m-Q4_K_M.gguf", "m-Q8_0.gguf", "mmproj-m-f16.gguf", "mmproj-m-Q8_0.gguf",
                    "sub/m-BF16.gguf", "sub/mmproj-m-bf16.gguf", "other/mmproj-x-f32.gguf"});
  auto pick = [&](const char* model) {
    std::optional<RepoFile> f = select_mmproj(all, model);
    return f ? f->path : std::string("(none)");
  };
  CHECK(pick("m-Q8_0.gguf") == "mmproj-m-Q8_0.gguf");          // nearest quantisation
  CHECK(pick("m-Q4_K_M.gguf") == "mmproj-m-Q8_0.gguf");        // 8 bits nearer 4 than 16
  CHECK(pick("sub/m-BF16.gguf") == "sub/mmproj-m-bf16.gguf");  // its own folder first
  CHECK(pick("x/m-F16.gguf") == "mmproj-m-f16.gguf");          // a folder above it, never a sibling folder
  CHECK_FALSE(select_mmproj(files({"m-Q8_0.gguf"}), "m-Q8_0.gguf"));
}
