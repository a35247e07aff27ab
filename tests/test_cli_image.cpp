// `vkllm run --image FILE --mmproj FILE` as a user runs it: a reply to a prompt with an image on
// the qwen35 and gemma3 fixtures (the same tokens as the engine gives through eval_image_prompt),
// and one-line errors for a missing projector, a bad image, a projector of another model;
// `vkllm chat`'s /image (ChatSession: the image before the next turn's text, kept in the cache).
#include <fmt/format.h>
#include <stb_image_write.h>

#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "engine/chat_session.h"
#include "engine/image_prompt.h"
#include "engine_fixtures.h"
#include "fixture/projector_fixture.h"
#include "graph/vision_encoder.h"
#include "harness.h"

using namespace vkllm;
using test::run_vkllm;
using test::TempFile;

namespace {

std::vector<std::byte> png(int w, int h) {
  std::vector<uint8_t> px(size_t(w) * h * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t(i * 29 % 251);
  std::vector<std::byte> out;
  stbi_write_png_to_func(vkllm::test::append_bytes, &out, w, h, 3, px.data(), w * 3);
  return out;
}

struct Pair {
  TempFile model{"image-lm"}, mmproj{"image-mmproj"}, image{"image-png"};
};

// A family's F32 fixture with a projector of its width, and a 40x28 PNG.
void write(Pair& p, const char* family, const char* preset, const char* chat = "") {
  test::EngineFixture lm = test::family_fixture(family, DType::F32);
  lm.spec.chat = chat;
  ProjectorFixtureSpec s = projector_preset(preset);
  s.proj_dim = lm.spec.dim;
  p.model.write(make_fixture_model(lm.spec));
  p.mmproj.write(make_projector_fixture(s));
  p.image.write(png(40, 28));
}

}  // namespace

TEST_CASE("vkllm run --image answers a prompt with an image", "[cli-image]") {
  for (auto [family, preset] : {std::pair{"qwen35", "tiny-qwen3vl"}, std::pair{"gemma3", "tiny-gemma3"}}) {
    Pair p;
    write(p, family, preset);
    auto r = run_vkllm(fmt::format("run -m {} --mmproj {} --image {} -n 4 --temp 0 --json 'What is in it?'",
                                   p.model.path, p.mmproj.path, p.image.path));
    INFO(family << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    nlohmann::json j = nlohmann::json::parse(r.out);
    // The same greedy tokens as the engine gives the same prompt.
    GgufFile model = GgufFile::open(p.model.path), mmproj = GgufFile::open(p.mmproj.path);
    ProjectorConfig c = read_projector_config(mmproj);
    Engine engine(test::gpu(), model, {.n_ctx = 512});
    VisionEncoder enc(test::gpu(), mmproj, c);
    std::vector<VisionInput> images{preprocess_image(load_image_file(p.image.path), c)};
    auto parts = split_image_prompt(engine.tokenizer(), c, "<__media__>What is in it?", 1);
    std::span<const float> logits = eval_image_prompt(engine, enc, parts, images);
    CHECK(j["tokens"][0] == test::best(logits));
    CHECK(j["prompt_tokens"] == prompt_tokens(parts, images));
  }
}

TEST_CASE("vkllm run --image errors are one line", "[cli-image]") {
  Pair p;
  write(p, "qwen35", "tiny-qwen3vl");
  auto no_proj = run_vkllm(fmt::format("run -m {} --image {} -n 1 'hi'", p.model.path, p.image.path));
  CHECK(no_proj.exit_code == 1);
  CHECK(no_proj.err == "error: --image needs the model's projector: --mmproj FILE (its mmproj-*.gguf)\n");
  TempFile text("image-text");
  text.write(std::string("not an image"));
  auto bad =
      run_vkllm(fmt::format("run -m {} --mmproj {} --image {} -n 1 'hi'", p.model.path, p.mmproj.path, text.path));
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == fmt::format("error: {}: not an image vkllm reads (JPEG, PNG, GIF, BMP or WebP)\n", text.path));
  ProjectorFixtureSpec other = projector_preset("tiny-qwen3vl");
  other.proj_dim = 48;
  TempFile wrong("image-wrong-mmproj");
  wrong.write(make_projector_fixture(other));
  auto mismatch =
      run_vkllm(fmt::format("run -m {} --mmproj {} --image {} -n 1 'hi'", p.model.path, wrong.path, p.image.path));
  CHECK(mismatch.exit_code == 1);
  CHECK(mismatch.err.find("the projector gives rows of 48 values and the model takes 128") != std::string::npos);
}

TEST_CASE("vkllm info --mmproj counts an image's tokens and KV bytes", "[cli-image]") {
  Pair p;
  write(p, "qwen35", "tiny-qwen3vl");
  auto r = run_vkllm(fmt::format("info -m {} --mmproj {} --json --kv-type f32", p.model.path, p.mmproj.path));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  nlohmann::json proj = j["projector"];
  CHECK(proj["type"] == "qwen3vl_merger");
  CHECK(proj["fits_model"] == true);
  ProjectorConfig c = read_projector_config(GgufFile::open(p.mmproj.path));
  ImageGrid g = c.grid(1920, 1080);
  CHECK(proj["images"][2]["tokens"] == g.tokens());
  CHECK(proj["images"][2]["kv_bytes"] == j["kv_bytes_per_token"].get<uint64_t>() * g.tokens());
  auto text = run_vkllm(fmt::format("info -m {} --mmproj {}", p.model.path, p.mmproj.path));
  CHECK(text.out.find("images      896x896: ") != std::string::npos);
}

TEST_CASE("a chat takes an image before the next turn and keeps it in the KV cache", "[cli-image]") {
  Pair p;
  write(p, "qwen35", "tiny-qwen3vl", "chatml");
  GgufFile model = GgufFile::open(p.model.path), mmproj = GgufFile::open(p.mmproj.path);
  ProjectorConfig c = read_projector_config(mmproj);
  VisionEncoder enc(test::gpu(), mmproj, c);
  VisionInput image = preprocess_image(load_image_file(p.image.path), c);
  Engine engine(test::gpu(), model, {.n_ctx = 512});
  Sampler sampler(SamplerOptions{.temperature = 0, .repeat_penalty = 1});
  ChatSession chat(engine, sampler, ChatTemplate::from_gguf(model));
  chat.set_encoder(&enc);
  chat.add_image(image);
  std::string reply = chat.reply("What is in it?", 3);
  ChatTurnStats first = chat.last_turn();
  CHECK(chat.pending_images() == 0);
  CHECK(chat.messages()[0]["content"] == "<__media__>What is in it?");
  // The engine's greedy tokens for the rendered conversation, the image at its marker.
  Engine ref(test::gpu(), model, {.n_ctx = 512});
  nlohmann::ordered_json messages = {{{"role", "user"}, {"content", "<__media__>What is in it?"}}};
  ChatTemplate t = ChatTemplate::from_gguf(model);
  std::string text = t.render(messages, {.bos_token = t.bos_token(), .eos_token = t.eos_token()});
  std::vector<VisionInput> images{image};
  auto parts = split_image_prompt(ref.tokenizer(), c, text, 1);
  std::span<const float> logits = eval_image_prompt(ref, enc, parts, images);
  std::vector<int32_t> want;
  for (int i = 0; i < 3; ++i) {
    want.push_back(test::best(logits));
    if (ref.tokenizer().is_end_of_generation(want.back())) break;
    if (i < 2) logits = ref.eval(std::span<const int32_t>(&want.back(), 1));
  }
  if (ref.tokenizer().is_end_of_generation(want.back())) want.pop_back();
  CHECK(reply == ref.tokenizer().decode(want));
  CHECK(first.prompt_tokens == prompt_tokens(parts, images));
  // The next turn reuses the first prompt, its image included (a hybrid keeps its checkpoint).
  chat.reply("And then?", 2);
  CHECK(chat.last_turn().reused_tokens == first.prompt_tokens);
}

TEST_CASE("vkllm chat's /image errors are one line and the chat goes on", "[cli-image]") {
  Pair p;
  write(p, "qwen35", "tiny-qwen3vl", "chatml");
  TempFile turns("image-turns");
  turns.write(fmt::format("/image {}\nhi\n", p.image.path));
  auto no_proj = run_vkllm(fmt::format("chat -m {} -n 2 --temp 0", p.model.path), "", turns.path);
  CHECK(no_proj.err.find("error: /image needs the model's projector: start vkllm chat with --mmproj FILE") !=
        std::string::npos);
  TempFile bad("image-bad-turns");
  bad.write(std::string("/image /nonexistent.png\nhi\n"));
  auto missing =
      run_vkllm(fmt::format("chat -m {} --mmproj {} -n 2 --temp 0", p.model.path, p.mmproj.path), "", bad.path);
  CHECK(missing.err.find("error: /nonexistent.png") != std::string::npos);
  auto ok = run_vkllm(fmt::format("chat -m {} --mmproj {} -n 2 --temp 0", p.model.path, p.mmproj.path), "", turns.path);
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.err.find(fmt::format("Image {} (", p.image.path)) != std::string::npos);
}
