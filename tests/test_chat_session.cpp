// ChatSession on fixture models with a ChatML and a Llama 3 template: turn two evaluates only
// the new turn's tokens (the rest is reused from the KV cache), old turns are dropped to fit the
// context, and bad turns fail with one line while the conversation goes on.
#include <fstream>
#include <iterator>
#include <memory>

#include "catch.h"
#include "engine/chat_session.h"
#include "error.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "harness.h"

using namespace vkllm;

namespace {

struct ChatFixture {
  std::vector<std::byte> bytes;
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<ChatSession> session;
  ChatFixture(const std::string& chat, const std::string& tokenizer, uint32_t n_ctx, const std::string& system) {
    bytes = make_fixture_model({.vocab_size = 512, .tokenizer = tokenizer, .chat = chat});
    file = std::make_unique<GgufFile>(GgufFile::parse(bytes, "chat fixture"));
    engine = std::make_unique<Engine>(test::gpu(), *file, EngineOptions{.n_ctx = n_ctx, .batch = 64});
    sampler = std::make_unique<Sampler>(SamplerOptions{.temperature = 0, .repeat_penalty = 1});
    session = std::make_unique<ChatSession>(*engine, *sampler, ChatTemplate::from_gguf(*file), system);
  }
};

// Turn two must reuse everything turn one left in the cache and evaluate only what follows.
void check_second_turn_reuses_the_first(ChatFixture& f, const std::string& tail_text, uint32_t n) {
  ChatSession& s = *f.session;
  s.reply("Hello there", n);
  std::vector<int32_t> cached = s.cached_tokens();
  REQUIRE(cached.size() == f.engine->n_past());
  // the last reply token is sampled but not evaluated, unless it ended the reply (end of generation)
  bool unseen_last = s.last_turn().generated_tokens > 0 && !s.last_turn().stopped_at_eog;
  s.reply("And more", n);
  const ChatTurnStats& st = s.last_turn();
  CHECK(st.reused_tokens == cached.size());
  CHECK(st.evaluated_tokens == st.prompt_tokens - st.reused_tokens);
  // What the model had not seen: the last reply token (unless the reply ended at an end of
  // generation token, never evaluated) and the new turn with its framing.
  size_t tail = f.engine->tokenizer().encode(tail_text, false, true).size();
  CHECK(st.evaluated_tokens == tail + (unseen_last ? 1 : 0));
}

}  // namespace

TEST_CASE("chat session: ChatML turn two evaluates only the new turn", "[chat]") {
  ChatFixture f("chatml", "gpt2", 256, "Be brief.");
  REQUIRE_FALSE(f.session->chat_template().is_fallback());
  check_second_turn_reuses_the_first(f, "<|im_end|>\n<|im_start|>user\nAnd more<|im_end|>\n<|im_start|>assistant\n", 4);
  CHECK(f.session->messages().size() == 5);
  // no reply at all: the whole first prompt is reused
  f.session->reset();
  CHECK(f.session->messages().size() == 1);
  CHECK(f.engine->n_past() == 0);
  check_second_turn_reuses_the_first(f, "<|im_end|>\n<|im_start|>user\nAnd more<|im_end|>\n<|im_start|>assistant\n", 0);
}

TEST_CASE("chat session: Llama 3 template, one BOS, turn two evaluates only the new turn", "[chat]") {
  ChatFixture f("llama3", "llama", 256, "");
  const Tokenizer& tok = f.engine->tokenizer();
  f.session->reply("Hi", 3);
  std::vector<int32_t> cached = f.session->cached_tokens();
  REQUIRE(cached.size() > 2);
  CHECK(cached[0] == tok.bos());
  CHECK(cached[1] != tok.bos());  // the template writes bos_token; the tokenizer adds no second one
  // Llama 3's template trims each message, so a reply with outer spaces renders differently
  // next turn (and is evaluated again from there); an empty reply shows the reuse exactly.
  f.session->reset();
  check_second_turn_reuses_the_first(f,
                                     "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnd "
                                     "more<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
                                     0);
}

TEST_CASE("chat session: old turns are dropped to fit, bad turns fail and the talk goes on", "[chat]") {
  ChatFixture f("chatml", "gpt2", 96, "Sys");
  ChatSession& s = *f.session;
  std::string words = "one two three four five six seven eight nine ten";
  uint32_t dropped = 0;
  for (int i = 0; i < 6; ++i) {
    s.reply(words, 8);
    dropped += s.last_turn().dropped_turns;
    CHECK(s.last_turn().prompt_tokens + 8 <= 96);
  }
  CHECK(dropped > 0);
  CHECK(s.messages()[0]["role"] == "system");
  CHECK(s.messages()[0]["content"] == "Sys");

  nlohmann::ordered_json before = s.messages();
  std::string huge;
  for (int i = 0; i < 40; ++i) huge += words + " ";
  CHECK_THROWS_AS(s.reply(huge, 8), Error);
  CHECK(s.messages() == before);
  CHECK_THROWS_WITH(s.reply("bad \xff byte", 8), "the turn is not valid UTF-8");
  CHECK(s.messages() == before);
  s.reply("still here", 4);
  CHECK(s.messages()[s.messages().size() - 2]["content"] == "still here");
}

TEST_CASE("chat session: a harmony reply is kept as thinking and content, as gpt-oss's template wants", "[chat]") {
  using json = nlohmann::ordered_json;
  const std::string raw =
      "<|channel|>analysis<|message|>The user greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello!";
  json m = assistant_message(raw);
  CHECK(m == json{{"role", "assistant"}, {"content", "Hello!"}, {"thinking", "The user greets."}});
  CHECK(assistant_message("Hi <|channel|> there") == json{{"role", "assistant"}, {"content", "Hi <|channel|> there"}});
  CHECK(assistant_message("<|channel|>final<|message|>Cut \xe2\x82") ==
        json{{"role", "assistant"}, {"content", "Cut \xef\xbf\xbd\xef\xbf\xbd"}});
  // Turn two: gpt-oss's template renders the kept message, and refuses the raw reply.
  std::ifstream file(std::string(VKLLM_SOURCE_DIR) + "/tests/data/templates/openai-gpt-oss-120b.jinja");
  ChatTemplate t = ChatTemplate::parse(std::string(std::istreambuf_iterator<char>(file), {}));
  ChatTemplate::Options o{.now = 1736936400};
  json turn2 = json::array({{{"role", "user"}, {"content", "Hi"}}, m, {{"role", "user"}, {"content", "Bye"}}});
  CHECK(t.render(turn2, o).find("<|start|>assistant<|channel|>final<|message|>Hello!<|end|>") != std::string::npos);
  turn2[1] = {{"role", "assistant"}, {"content", raw}};
  CHECK_THROWS_AS(t.render(turn2, o), Error);
}
