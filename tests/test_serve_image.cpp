// Images through `vkllm serve --mmproj` on the qwen35 fixture (M-RoPE, a hybrid): a completion's
// greedy tokens after an image equal the engine's own (the scheduler's image steps and the rope
// shift of the text after them), the chat routes of every door take an image (OpenAI's image_url,
// Ollama's images on /api/chat and /api/generate, Anthropic's image block), the attention route
// tells where the image's tokens are, and what is refused says why in one 400. The three official
// npm clients each get a reply to the same image (skipped where npm is absent).
#include <fmt/format.h>
#include <stb_image_write.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "engine/image_prompt.h"
#include "engine_fixtures.h"
#include "fake_hub.h"
#include "fixture/projector_fixture.h"
#include "graph/vision_encoder.h"
#include "harness.h"
#include "serve/base64.h"
#include "serve/openai.h"
#include "serve_process.h"

using namespace vkllm;
using json = nlohmann::json;
using test::post;
using test::ServeProcess;
using test::TempFile;

namespace {

void append_text(void* ctx, void* data, int size) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), size_t(size));
}

std::string png_text(int w, int h) {
  std::vector<uint8_t> px(size_t(w) * h * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t(i * 29 % 251);
  std::string out;
  stbi_write_png_to_func(append_text, &out, w, h, 3, px.data(), w * 3);
  return out;
}

struct ImageServer {
  TempFile model{"serve-image-lm"}, mmproj{"serve-image-mmproj"}, image{"serve-image-png"};
  std::string bytes = png_text(40, 28), b64 = serve::base64_encode(bytes);
  ImageServer() {
    test::EngineFixture lm = test::family_fixture("qwen35", DType::F32);
    lm.spec.chat = "chatml";
    ProjectorFixtureSpec s = projector_preset("tiny-qwen3vl");
    s.proj_dim = lm.spec.dim;
    model.write(make_fixture_model(lm.spec));
    mmproj.write(make_projector_fixture(s));
    image.write(bytes);
  }
  std::string data_url() const { return "data:image/png;base64," + b64; }
};

json user_with_image(const std::string& url) {
  return {{"role", "user"},
          {"content", json::array({{{"type", "image_url"}, {"image_url", {{"url", url}}}},
                                   {{"type", "text"}, {"text", "What is in it?"}}})}};
}

// n greedy tokens after the prompt with its image, in this process (the reference for the server).
std::string engine_reply(const ImageServer& f, const std::string& prompt, int n) {
  GgufFile model = GgufFile::open(f.model.path), mmproj = GgufFile::open(f.mmproj.path);
  ProjectorConfig c = read_projector_config(mmproj);
  Engine engine(test::gpu(), model, {.n_ctx = 512});
  VisionEncoder enc(test::gpu(), mmproj, c);
  std::vector<VisionInput> images{preprocess_image(load_image_file(f.image.path), c)};
  auto parts = split_image_prompt(engine.tokenizer(), c, prompt, 1);
  std::span<const float> logits = eval_image_prompt(engine, enc, parts, images);
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(test::best(logits));
    if (i + 1 < n) logits = engine.eval(std::span<const int32_t>(&out.back(), 1));
  }
  // As the server writes it: bytes that are no character become U+FFFD on the wire.
  return json::parse(serve::dump(serve::json(engine.tokenizer().decode(out)))).get<std::string>();
}

}  // namespace

TEST_CASE("vkllm serve --mmproj answers images at every door", "[serve-image]") {
  ImageServer f;
  ServeProcess s(fmt::format("-m {} --mmproj {} --parallel 2 --ctx 512 --no-warmup", f.model.path, f.mmproj.path));
  SECTION("a completion with multimodal_data gives the engine's greedy tokens, the same again from a reused slot") {
    json body = {
        {"prompt", "<__media__>What is in it?"}, {"multimodal_data", {f.b64}}, {"max_tokens", 3}, {"temperature", 0}};
    auto r = post(s, "/v1/completions", body.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    std::string want = engine_reply(f, "<__media__>What is in it?", 3);
    CHECK(r.json()["choices"][0]["text"] == want);
    auto again = post(s, "/v1/completions", body.dump());
    CHECK(again.json()["choices"][0]["text"] == want);
    CHECK(again.json()["usage"]["prompt_tokens"] == r.json()["usage"]["prompt_tokens"]);
  }
  SECTION("OpenAI's, Ollama's and Anthropic's image shapes make the same prompt and reply") {
    json chat = {{"messages", {user_with_image(f.data_url())}}, {"max_tokens", 4}, {"temperature", 0}};
    auto o = post(s, "/v1/chat/completions", chat.dump()).json();
    json ollama = {{"model", "x"}, {"stream", false}, {"options", {{"temperature", 0}, {"num_predict", 4}}}};
    std::string id = test::get(s, "/v1/models").json()["data"][0]["id"];
    ollama["model"] = id;
    json ochat = ollama;
    ochat["messages"] = {{{"role", "user"}, {"content", "What is in it?"}, {"images", {f.b64}}}};
    auto oc = post(s, "/api/chat", ochat.dump()).json();
    json ogen = ollama;
    ogen["prompt"] = "What is in it?", ogen["images"] = {f.b64};
    auto og = post(s, "/api/generate", ogen.dump()).json();
    json msg = {
        {"max_tokens", 4},
        {"temperature", 0},
        {"messages",
         {{{"role", "user"},
           {"content",
            {{{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", f.b64}}}},
             {{"type", "text"}, {"text", "What is in it?"}}}}}}}};
    auto a = post(s, "/v1/messages", msg.dump()).json();
    INFO(o.dump() << "\n" << oc.dump() << "\n" << og.dump() << "\n" << a.dump());
    uint32_t prompt = o["usage"]["prompt_tokens"];
    CHECK(prompt > 16);  // the image's tokens are counted
    CHECK(oc["prompt_eval_count"] == prompt);
    CHECK(og["prompt_eval_count"] == prompt);
    CHECK(a["usage"]["input_tokens"].get<uint32_t>() + a["usage"]["cache_read_input_tokens"].get<uint32_t>() == prompt);
    std::string text = o["choices"][0]["message"]["content"];
    CHECK(oc["message"]["content"] == text);
    CHECK(og["response"] == text);
    CHECK(a["content"][0]["text"] == text);
  }
  SECTION("the attention route places the image's tokens on their grid") {
    json body = {{"messages", {user_with_image(f.data_url())}}, {"layer", 3}};
    auto r = post(s, "/v1/attention", body.dump());
    INFO(r.body.substr(0, 400));
    REQUIRE(r.status == 200);
    json j = r.json();
    REQUIRE(j["images"].size() == 1);
    json im = j["images"][0];
    ProjectorConfig c = read_projector_config(GgufFile::open(f.mmproj.path));
    ImageGrid g = c.grid(40, 28);
    CHECK(im["grid"] == json::array({g.tokens_x, g.tokens_y}));
    CHECK(im["tokens"] == g.tokens());
    size_t first = im["first"], n = j["tokens"].size();
    CHECK(j["pieces"][first] == "<image>");
    CHECK(j["heads"][0].size() == n);
    // The text after the image looks at it: its rows hold probability on the image's keys.
    double on_image = 0;
    for (size_t k = first; k < first + g.tokens(); ++k) on_image += j["heads"][0][n - 1][k].get<double>();
    CHECK(on_image > 0);
  }
  SECTION("what cannot be taken is one 400 that says why") {
    auto url = post(s, "/v1/chat/completions",
                    json{{"messages", {user_with_image("https://example.com/cat.png")}}, {"max_tokens", 1}}.dump());
    CHECK(url.status == 400);
    CHECK(url.body.find("--allow-image-urls") != std::string::npos);
    auto damaged = post(s, "/v1/chat/completions",
                        json{{"messages", {user_with_image("data:image/png;base64,@@@")}}, {"max_tokens", 1}}.dump());
    CHECK(damaged.status == 400);
    CHECK(damaged.body.find("image 1: the data: URL's base64 is damaged") != std::string::npos);
    std::string text_b64 = serve::base64_encode("not an image");
    std::string id = test::get(s, "/v1/models").json()["data"][0]["id"];
    auto not_image = post(s, "/api/chat",
                          json{{"model", id},
                               {"stream", false},
                               {"messages", {{{"role", "user"}, {"content", "hi"}, {"images", {text_b64}}}}}}
                              .dump());
    CHECK(not_image.status == 400);
    CHECK(not_image.json()["error"] == "image 1: not an image vkllm reads (JPEG, PNG, GIF, BMP or WebP)");
  }
  SECTION("the official openai, ollama and Anthropic npm clients each get a reply to the image") {
    std::string npm = VKLLM_BUILD_DIR "/npm";
    if (!std::filesystem::exists(npm + "/node_modules/ollama") || std::system("command -v node >/dev/null") != 0) {
      WARN("skipped: no npm clients in build/npm (scripts/test installs them where npm is present)");
      return;
    }
    std::string out = VKLLM_BUILD_DIR "/image_clients.out";
    int rc = std::system(fmt::format("node {}/tests/image_clients.mjs {} {} {} >{} 2>&1", VKLLM_SOURCE_DIR, npm,
                                     s.port(), f.image.path, out)
                             .c_str());
    std::ifstream in(out);
    std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(line);
    REQUIRE(rc == 0);
    json r = json::parse(line);
    CHECK(r["openai"]["prompt_tokens"].get<int>() > 16);
    for (const char* client : {"ollama", "anthropic"}) {
      CHECK(r[client]["prompt_tokens"] == r["openai"]["prompt_tokens"]);
      CHECK(r[client]["text"] == r["openai"]["text"]);
    }
  }
}

TEST_CASE("vkllm serve --allow-image-urls fetches an image URL as pull fetches", "[serve-image]") {
  if (!test::FakeHub::available()) return test::skip("python3 is missing: no web server to fetch from");
  ImageServer f;
  std::vector<std::byte> png_bytes(f.bytes.size());
  std::memcpy(png_bytes.data(), f.bytes.data(), f.bytes.size());
  test::FakeHub web({{.name = "pics/photos", .files = {{.path = "cat.png", .bytes = png_bytes, .lfs = false}}}});
  ServeProcess s(fmt::format("-m {} --mmproj {} --parallel 1 --ctx 512 --no-warmup --allow-image-urls", f.model.path,
                             f.mmproj.path));
  auto ask = [&](const std::string& url) {
    return post(s, "/v1/chat/completions",
                json{{"messages", {user_with_image(url)}}, {"max_tokens", 3}, {"temperature", 0}}.dump());
  };
  auto fetched = ask(web.endpoint() + "/pics/photos/resolve/main/cat.png");
  INFO(fetched.body);
  REQUIRE(fetched.status == 200);
  auto inline_ = ask(f.data_url());
  CHECK(fetched.json()["usage"]["prompt_tokens"] == inline_.json()["usage"]["prompt_tokens"]);
  CHECK(fetched.json()["choices"][0]["message"]["content"] == inline_.json()["choices"][0]["message"]["content"]);
  auto missing = ask(web.endpoint() + "/pics/photos/resolve/main/dog.png");
  CHECK(missing.status == 400);
  CHECK(missing.body.find("image 1: fetching") != std::string::npos);
  auto scheme = ask("file:///etc/passwd");
  CHECK(scheme.status == 400);
  CHECK(scheme.body.find("image 1: an image must be a data: URL or an http(s) URL") != std::string::npos);
}

TEST_CASE("a model served without a projector answers an image with a 400 that says what is missing", "[serve-image]") {
  ServeProcess s("--parallel 1 --ctx 256 --no-warmup");
  std::string b64 = serve::base64_encode(png_text(8, 8));
  auto r = post(s, "/v1/chat/completions",
                json{{"messages", {user_with_image("data:image/png;base64," + b64)}}, {"max_tokens", 1}}.dump());
  CHECK(r.status == 400);
  CHECK(r.json()["error"]["message"] ==
        "this model takes no images: it is served without its multimodal projector (start vkllm serve with --mmproj "
        "FILE, the model's mmproj-*.gguf)");
  auto a = post(
      s, "/v1/messages",
      json{{"max_tokens", 1},
           {"messages",
            {{{"role", "user"},
              {"content",
               {{{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", b64}}}}}}}}}}
          .dump());
  CHECK(a.status == 400);
  CHECK(a.json()["error"]["message"].get<std::string>().find("--mmproj FILE") != std::string::npos);
}
