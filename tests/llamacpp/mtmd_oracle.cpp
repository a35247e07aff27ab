// mtmd_oracle: llama.cpp's libmtmd (tools/mtmd of the source bundle, compiled in) on its CPU
// backend, as the oracle of the image tests (never part of `vkllm`). Images are decoded by the stb_image
// that llama.cpp vendors, as mtmd_helper_bitmap_init_from_buf does.
//
//   mtmd_oracle embed -m MODEL --mmproj FILE --image IMG
//       the image's embeddings as llama.cpp's encoder gives them: "grid NX NY" (the token grid
//       when the model uses M-RoPE, else "grid N 1"), then one line per image token:
//       "embd v0 v1 ..." (%.9g)
//   mtmd_oracle time -m MODEL --mmproj FILE --image IMG [--runs N]
//       the encoder's wall time per image (mtmd_encode_chunk after one warm-up, on the CPU backend
//       with two threads): "encode_ms MEDIAN BEST", "tokens N" (for scripts/bench_vision_vs_llamacpp)
//   mtmd_oracle logits -m MODEL --mmproj FILE --image IMG [--image IMG ...] -p PROMPT
//       PROMPT with each <__media__> replaced by the next image (llama.cpp's markers around it),
//       evaluated as libmtmd's helpers evaluate chunks (text in one batch, each image in one
//       batch with its decoder positions and, where the family wants it, attention without the
//       causal mask); prints "tokens N" (positions used) and "logits v0 v1 ..." of the last token
//
// Flash attention is off for the encoder and the model, the KV cache f32, so F32 files are
// computed in f32 throughout. An error is one line on stderr ("error: ...") and exit 1.
#define STB_IMAGE_IMPLEMENTATION
#include "stb_image.h"

#include <ggml-backend.h>
#include <llama.h>

#include "oracle_log.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mtmd.h"

namespace {

using oracle::fail;
using oracle::quiet_log;

struct Args {
  std::string model, mmproj, prompt;
  std::vector<std::string> images;
  int runs = 3;
  // One thread for the test's answers: ggml's threads wait for each other by spinning, and under
  // ctest -j on two cores a second one made each step wait on a descheduled thread (the text
  // oracle's 32 greedy tokens: 0.03 s on one thread, 5.6 s on two). `time` keeps two.
  int threads = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 2; i < argc; ++i) {
    std::string f = argv[i];
    if (i + 1 >= argc) fail(f + " needs a value");
    std::string v = argv[++i];
    if (f == "-m")
      a.model = v;
    else if (f == "--mmproj")
      a.mmproj = v;
    else if (f == "--image")
      a.images.push_back(v);
    else if (f == "-p")
      a.prompt = v;
    else if (f == "--runs")
      a.runs = std::max(1, std::atoi(v.c_str()));
    else
      fail("unknown flag " + f);
  }
  if (a.model.empty() || a.mmproj.empty() || a.images.empty()) fail("-m, --mmproj and --image are required");
  return a;
}

struct Session {
  llama_model* model = nullptr;
  llama_context* ctx = nullptr;
  mtmd_context* mtmd = nullptr;
  ~Session() {
    if (mtmd) mtmd_free(mtmd);
    if (ctx) llama_free(ctx);
    if (model) llama_model_free(model);
  }
};

void open(Session& s, const Args& a) {
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  s.model = llama_model_load_from_file(a.model.c_str(), mp);
  if (!s.model) fail("cannot load " + a.model);
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 4096, cp.n_batch = 4096, cp.n_ubatch = 4096, cp.n_threads = cp.n_threads_batch = a.threads;
  cp.type_k = cp.type_v = GGML_TYPE_F32;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  s.ctx = llama_init_from_model(s.model, cp);
  if (!s.ctx) fail("cannot make a context for " + a.model);
  mtmd_context_params p = mtmd_context_params_default();
  p.use_gpu = false, p.print_timings = false, p.n_threads = a.threads, p.warmup = false;
  p.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  s.mtmd = mtmd_init_from_file(a.mmproj.c_str(), s.model, p);
  if (!s.mtmd) fail("cannot load the projector " + a.mmproj);
}

std::unique_ptr<mtmd_bitmap, void (*)(mtmd_bitmap*)> load_image(const std::string& path) {
  int w = 0, h = 0, ch = 0;
  unsigned char* px = stbi_load(path.c_str(), &w, &h, &ch, 3);
  if (!px) fail("cannot decode " + path + ": " + stbi_failure_reason());
  mtmd_bitmap* b = mtmd_bitmap_init(uint32_t(w), uint32_t(h), px);
  stbi_image_free(px);
  return {b, mtmd_bitmap_free};
}

// The prompt cut into text and image chunks.
mtmd_input_chunks* tokenize(Session& s, const Args& a, const std::string& prompt) {
  std::vector<std::unique_ptr<mtmd_bitmap, void (*)(mtmd_bitmap*)>> owned;
  std::vector<const mtmd_bitmap*> bitmaps;
  for (const std::string& path : a.images) owned.push_back(load_image(path)), bitmaps.push_back(owned.back().get());
  mtmd_input_chunks* chunks = mtmd_input_chunks_init();
  mtmd_input_text text{prompt.c_str(), prompt.size(), true, true};
  if (mtmd_tokenize(s.mtmd, chunks, &text, bitmaps.data(), bitmaps.size()) != 0) fail("mtmd_tokenize failed");
  return chunks;
}

void print_row(const char* tag, const float* v, size_t n) {
  std::printf("%s", tag);
  for (size_t i = 0; i < n; ++i) std::printf(" %.9g", v[i]);
  std::printf("\n");
}

int embed(int argc, char** argv) {
  Args a = parse(argc, argv);
  Session s;
  open(s, a);
  mtmd_input_chunks* chunks = tokenize(s, a, mtmd_default_marker());
  int n_embd = llama_model_n_embd_inp(s.model);
  for (size_t i = 0; i < mtmd_input_chunks_size(chunks); ++i) {
    const mtmd_input_chunk* c = mtmd_input_chunks_get(chunks, i);
    if (mtmd_input_chunk_get_type(c) != MTMD_INPUT_CHUNK_TYPE_IMAGE) continue;
    if (mtmd_encode_chunk(s.mtmd, c) != 0) fail("mtmd_encode_chunk failed");
    const mtmd_image_tokens* it = mtmd_input_chunk_get_tokens_image(c);
    std::printf("grid %zu %zu\n", mtmd_image_tokens_get_nx(it), mtmd_image_tokens_get_ny(it));
    const float* e = mtmd_get_output_embd(s.mtmd);
    for (size_t t = 0; t < mtmd_input_chunk_get_n_tokens(c); ++t) print_row("embd", e + t * n_embd, size_t(n_embd));
  }
  mtmd_input_chunks_free(chunks);
  return 0;
}

int time_encode(int argc, char** argv) {
  Args a = parse(argc, argv);
  a.threads = 2;
  Session s;
  open(s, a);
  mtmd_input_chunks* chunks = tokenize(s, a, mtmd_default_marker());
  std::vector<double> ms;
  size_t tokens = 0;
  for (size_t i = 0; i < mtmd_input_chunks_size(chunks); ++i) {
    const mtmd_input_chunk* c = mtmd_input_chunks_get(chunks, i);
    if (mtmd_input_chunk_get_type(c) != MTMD_INPUT_CHUNK_TYPE_IMAGE) continue;
    tokens = mtmd_input_chunk_get_n_tokens(c);
    for (int r = 0; r <= a.runs; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      if (mtmd_encode_chunk(s.mtmd, c) != 0) fail("mtmd_encode_chunk failed");
      if (r > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  if (ms.empty()) fail("no image in the prompt");
  std::sort(ms.begin(), ms.end());
  std::printf("encode_ms %.3f %.3f\ntokens %zu\n", ms[ms.size() / 2], ms.front(), tokens);
  mtmd_input_chunks_free(chunks);
  return 0;
}

// One image chunk into the model, as mtmd_helper_decode_image_chunk does it.
void decode_image(Session& s, const mtmd_input_chunk* c, llama_pos n_past) {
  if (mtmd_encode_chunk(s.mtmd, c) != 0) fail("mtmd_encode_chunk failed");
  float* e = mtmd_get_output_embd(s.mtmd);
  int32_t n = int32_t(mtmd_input_chunk_get_n_tokens(c));
  bool mrope = mtmd_decode_use_mrope(s.mtmd);
  std::vector<llama_pos> pos(size_t(n) * (mrope ? 4 : 1));
  std::vector<int32_t> n_seq(n, 1);
  llama_seq_id seq0 = 0;
  std::vector<llama_seq_id*> seqs(n + 1, &seq0);
  std::vector<int8_t> logits(n, 0);
  const mtmd_image_tokens* it = mtmd_input_chunk_get_tokens_image(c);
  for (int32_t i = 0; i < n; ++i) {
    if (!mrope) {
      pos[i] = n_past + i;
      continue;
    }
    mtmd_decoder_pos p = mtmd_image_tokens_get_decoder_pos(it, n_past, size_t(i));
    pos[i] = p.t, pos[i + n] = p.y, pos[i + 2 * n] = p.x, pos[i + 3 * n] = p.z;
  }
  llama_batch b{n, nullptr, e, pos.data(), n_seq.data(), seqs.data(), logits.data()};
  bool non_causal = mtmd_decode_use_non_causal(s.mtmd, c);
  if (non_causal) llama_set_causal_attn(s.ctx, false);
  if (llama_decode(s.ctx, b) != 0) fail("llama_decode of the image failed");
  if (non_causal) llama_set_causal_attn(s.ctx, true);
}

int logits(int argc, char** argv) {
  Args a = parse(argc, argv);
  Session s;
  open(s, a);
  mtmd_input_chunks* chunks = tokenize(s, a, a.prompt);
  llama_pos n_past = 0;
  int n_tokens = 0;
  size_t n = mtmd_input_chunks_size(chunks);
  for (size_t i = 0; i < n; ++i) {
    const mtmd_input_chunk* c = mtmd_input_chunks_get(chunks, i);
    if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_IMAGE) {
      decode_image(s, c, n_past);
    } else {
      size_t count = 0;
      const llama_token* t = mtmd_input_chunk_get_tokens_text(c, &count);
      llama_batch b = llama_batch_init(int32_t(count), 0, 1);
      for (size_t j = 0; j < count; ++j) {
        b.token[j] = t[j], b.pos[j] = n_past + llama_pos(j), b.n_seq_id[j] = 1, b.seq_id[j][0] = 0;
        b.logits[j] = i + 1 == n && j + 1 == count;
      }
      b.n_tokens = int32_t(count);
      int rc = llama_decode(s.ctx, b);
      llama_batch_free(b);
      if (rc != 0) fail("llama_decode of the text failed");
    }
    n_past += mtmd_input_chunk_get_n_pos(c);
    n_tokens += int(mtmd_input_chunk_get_n_tokens(c));
  }
  if (mtmd_input_chunk_get_type(mtmd_input_chunks_get(chunks, n - 1)) != MTMD_INPUT_CHUNK_TYPE_TEXT)
    fail("the prompt must end with text");
  std::printf("tokens %d\n", n_tokens);
  const llama_vocab* vocab = llama_model_get_vocab(s.model);
  print_row("logits", llama_get_logits_ith(s.ctx, -1), size_t(llama_vocab_n_tokens(vocab)));
  mtmd_input_chunks_free(chunks);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    llama_log_set(quiet_log, nullptr);
    mtmd_log_set(quiet_log, nullptr);
    ggml_backend_load_all();
    llama_backend_init();
    std::string cmd = argc > 1 ? argv[1] : "";
    int rc = cmd == "embed"    ? embed(argc, argv)
             : cmd == "logits" ? logits(argc, argv)
             : cmd == "time"   ? time_encode(argc, argv)
                               : -1;
    if (rc < 0)
      throw std::runtime_error("usage: mtmd_oracle embed|logits|time ... (see tests/llamacpp/mtmd_oracle.cpp)");
    llama_backend_free();
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
