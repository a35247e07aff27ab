// llamacpp_oracle: llama.cpp's own CPU backend as an oracle for the tests (never part of `vkllm`).
// Built only against the prebuilt libraries of npm's node-llama-cpp and the llama.h of its source
// bundle (scripts/fetch_llamacpp), so it shares no code with vkllm.
//
//   llamacpp_oracle logits -m FILE --tokens 1,2,3 [--kv-type f32|f16|q8_0|q4_0] [--chunk N]
//                          [--greedy N] [--experts] [--threads N]
//       one line per position: "logits POS v0 v1 ..." (every vocabulary entry, %.9g), the prompt
//       evaluated as one batch, or in batches of N tokens with --chunk; then with --greedy N one
//       line "greedy t1 ... tN": N argmax tokens decoded one at a time after the prompt;
//       --experts adds "experts LAYER POS e1 ... ek" for every prompt token of every
//       mixture-of-experts layer: the experts llama.cpp's router chose (its ffn_moe_topk)
//   llamacpp_oracle embed -m FILE [--pooling mean|cls|last] --tokens 1,2,3 [--tokens 4,5 ...]
//       one line per sequence: "embedding SEQ v0 v1 ..." (n_embd values, %.9g), llama.cpp's pooled
//       embedding (llama_get_embeddings_seq, not normalised) with every sequence in one batch
//       under its own sequence id; the pooling is the file's unless --pooling is given
//   llamacpp_oracle quantize IN OUT TYPE
//       llama_model_quantize (llama.cpp's quantizer) to TYPE: Q8_0, Q4_0, Q4_K_M, MXFP4_MOE, ...
//   llamacpp_oracle dequantize TYPE IN OUT
//       ggml's own dequantiser (its type traits' to_float) on the raw blocks in IN, whole blocks of
//       the ggml type TYPE as ggml_type_name spells it (q4_0, mxfp4, f16, ...); the values go to
//       OUT as f32 in the machine's byte order. IN or OUT "-": stdin or stdout
//   llamacpp_oracle quantize-ref TYPE IN OUT
//       the other way: ggml's reference quantiser (from_float_ref, e.g. quantize_row_mxfp4_ref) on
//       the f32 values in IN (whole blocks), the blocks to OUT
//       llama_model_quantize (llama.cpp's quantizer) to TYPE: Q8_0, Q4_0, Q4_K_M, ...
//   llamacpp_oracle tokenize -m FILE [--add-special] [--parse-special] < TEXTS
//       llama_tokenize on each text read from stdin (every text ends with a NUL byte), one line per
//       text: "tokens id1 id2 ..."; the file is loaded vocabulary-only
//
// An error is one line on stderr ("error: ...", with llama.cpp's last logged error) and exit 1.
#include <ggml-backend.h>
#include <llama.h>

#include "oracle_log.h"

#include <strings.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using oracle::fail;
using oracle::quiet_log;

long to_int(const std::string& s, const char* flag) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < 0) throw std::runtime_error(std::string(flag) + ": not a non-negative integer: " + s);
  return v;
}

std::vector<llama_token> parse_tokens(const std::string& list) {
  std::vector<llama_token> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    out.push_back(llama_token(to_int(list.substr(start, comma - start), "--tokens")));
    start = comma + 1;
  }
  return out;
}

ggml_type kv_type(const std::string& name) {
  static const std::map<std::string, ggml_type> types = {
      {"f32", GGML_TYPE_F32}, {"f16", GGML_TYPE_F16}, {"q8_0", GGML_TYPE_Q8_0}, {"q4_0", GGML_TYPE_Q4_0}};
  auto it = types.find(name);
  if (it == types.end()) throw std::runtime_error("--kv-type: expected f32, f16, q8_0 or q4_0, got " + name);
  return it->second;
}

struct LogitsArgs {
  std::string model;
  std::vector<llama_token> tokens;
  ggml_type kv = GGML_TYPE_F32;
  size_t chunk = 0, greedy = 0;
  bool experts = false;
  // One thread unless asked: the fixtures are tiny, and ggml's threads wait for each other by
  // spinning, so under ctest -j on two cores a second thread made each step wait on a
  // descheduled one (32 greedy tokens of a qwen35moe fixture: 0.03 s on one thread, 5.6 s on two;
  // the logits are bit-identical).
  int threads = 1;
};

LogitsArgs parse_logits_args(int argc, char** argv) {
  LogitsArgs a;
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--experts") {
      a.experts = true;
      continue;
    }
    if (i + 1 >= argc) throw std::runtime_error(flag + ": missing value");
    std::string value = argv[++i];
    if (flag == "-m")
      a.model = value;
    else if (flag == "--tokens")
      a.tokens = parse_tokens(value);
    else if (flag == "--kv-type")
      a.kv = kv_type(value);
    else if (flag == "--chunk")
      a.chunk = size_t(to_int(value, "--chunk"));
    else if (flag == "--greedy")
      a.greedy = size_t(to_int(value, "--greedy"));
    else if (flag == "--threads")
      a.threads = int(std::max(1L, to_int(value, "--threads")));
    else
      throw std::runtime_error("unknown option " + flag);
  }
  if (a.model.empty() || a.tokens.empty()) throw std::runtime_error("logits needs -m FILE and --tokens LIST");
  return a;
}

struct Owned {
  llama_model* model = nullptr;
  llama_context* ctx = nullptr;
  ~Owned() {
    if (ctx) llama_free(ctx);
    if (model) llama_model_free(model);
  }
};

// The experts chosen in the batch being decoded: llama.cpp names the (k, n_tokens) i32 tensor of
// layer L "ffn_moe_topk-L" (a view of the argsort, so rows are strided).
struct ExpertDump {
  size_t first = 0;  // position of the batch's first token
  std::vector<std::string> lines;
};

bool capture_experts(ggml_tensor* t, bool ask, void* user) {
  static const char kName[] = "ffn_moe_topk-";
  if (std::strncmp(t->name, kName, sizeof(kName) - 1) != 0) return ask ? false : true;
  if (ask) return true;
  auto* dump = static_cast<ExpertDump*>(user);
  if (t->type != GGML_TYPE_I32 || !ggml_backend_buffer_is_host(t->buffer)) fail("ffn_moe_topk is not host i32 data");
  int layer = std::atoi(t->name + sizeof(kName) - 1);
  for (int64_t row = 0; row < t->ne[1]; ++row) {
    const auto* ids = reinterpret_cast<const int32_t*>(static_cast<const char*>(t->data) + row * t->nb[1]);
    char head[64];
    std::snprintf(head, sizeof head, "experts %d %zu", layer, dump->first + size_t(row));
    std::string line = head;
    for (int64_t j = 0; j < t->ne[0]; ++j) line += ' ' + std::to_string(ids[j]);
    dump->lines.push_back(line);
  }
  return true;
}

// Decodes tokens[first, first + n) at their positions, asking for every position's logits.
void decode(llama_context* ctx, const std::vector<llama_token>& tokens, size_t first, size_t n) {
  llama_batch b = llama_batch_init(int32_t(n), 0, 1);
  for (size_t i = 0; i < n; ++i) {
    b.token[i] = tokens[first + i];
    b.pos[i] = llama_pos(first + i);
    b.n_seq_id[i] = 1;
    b.seq_id[i][0] = 0;
    b.logits[i] = 1;
  }
  b.n_tokens = int32_t(n);
  int32_t rc = llama_decode(ctx, b);
  llama_batch_free(b);
  if (rc != 0) fail("llama_decode returned " + std::to_string(rc));
}

void print_row(const char* tag, size_t pos, const float* row, int n_vocab) {
  std::printf("%s %zu", tag, pos);
  for (int v = 0; v < n_vocab; ++v) std::printf(" %.9g", double(row[v]));
  std::printf("\n");
}

// Model parameters for a computing run: the CPU only, and weights in plain CPU buffers. ggml's
// "extra" buffer types repack weights for the processor's matrix kernels: AMX on Sapphire Rapids
// and later (libggml-cpu-sapphirerapids.so), interleaved blocks elsewhere. A weight in one is then
// usable only by the ops that type accepts, and the AMX type refuses a product with a
// non-contiguous input, which MLA's absorbed attn_k_b gets (deepseek2.cpp multiplies it by a
// permuted q_nope): ggml's scheduler finds no backend for it and aborts
// (GGML_ASSERT(*cur_backend_id != -1)). That stopped the quantised MLA fixtures on the H200's
// host. Plain buffers also keep the oracle's arithmetic the same on every processor.
llama_model_params computing_params() {
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  mp.use_extra_bufts = false;
  return mp;
}

int logits(int argc, char** argv) {
  LogitsArgs a = parse_logits_args(argc, argv);
  Owned o;
  llama_model_params mp = computing_params();
  o.model = llama_model_load_from_file(a.model.c_str(), mp);
  if (!o.model) fail(a.model + ": llama.cpp cannot load this file");
  int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(o.model));
  for (llama_token t : a.tokens)
    if (t >= n_vocab) throw std::runtime_error("--tokens: " + std::to_string(t) + " is past the vocabulary");

  size_t total = a.tokens.size() + a.greedy;
  size_t batch = a.chunk ? a.chunk : a.tokens.size();
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = uint32_t((total + 255) / 256 * 256);
  cp.n_batch = cp.n_ubatch = uint32_t(batch);
  cp.n_seq_max = 1;
  cp.n_threads = cp.n_threads_batch = a.threads;
  cp.type_k = cp.type_v = a.kv;
  // Flash attention only where a quantised V cache needs it: otherwise the plain f32 path.
  bool quantised = a.kv != GGML_TYPE_F32 && a.kv != GGML_TYPE_F16;
  cp.flash_attn_type = quantised ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.no_perf = true;
  ExpertDump experts;
  if (a.experts) cp.cb_eval = capture_experts, cp.cb_eval_user_data = &experts;
  o.ctx = llama_init_from_model(o.model, cp);
  if (!o.ctx) fail(a.model + ": llama.cpp cannot create a context");

  for (size_t first = 0; first < a.tokens.size(); first += batch) {
    size_t n = std::min(batch, a.tokens.size() - first);
    experts.first = first;
    decode(o.ctx, a.tokens, first, n);
    for (size_t i = 0; i < n; ++i) print_row("logits", first + i, llama_get_logits_ith(o.ctx, int32_t(i)), n_vocab);
  }
  for (const std::string& line : experts.lines) std::printf("%s\n", line.c_str());
  experts.lines.clear();
  std::vector<llama_token> seq = a.tokens;
  if (a.greedy) std::printf("greedy");
  for (size_t step = 0; step < a.greedy; ++step) {
    const float* row = llama_get_logits_ith(o.ctx, -1);
    llama_token next = llama_token(std::max_element(row, row + n_vocab) - row);
    std::printf(" %d", next);
    seq.push_back(next);
    if (step + 1 < a.greedy) decode(o.ctx, seq, seq.size() - 1, 1);
  }
  if (a.greedy) std::printf("\n");
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw std::runtime_error("cannot write to stdout");
  return 0;
}

// One batch of several sequences, each with its own id and every token an output (as
// llama.cpp's embedding example adds them).
llama_batch sequences_batch(const std::vector<std::vector<llama_token>>& seqs, size_t total) {
  llama_batch b = llama_batch_init(int32_t(total), 0, 1);
  for (size_t s = 0; s < seqs.size(); ++s)
    for (size_t i = 0; i < seqs[s].size(); ++i) {
      int32_t k = b.n_tokens++;
      b.token[k] = seqs[s][i], b.pos[k] = llama_pos(i), b.n_seq_id[k] = 1, b.seq_id[k][0] = llama_seq_id(s);
      b.logits[k] = 1;
    }
  return b;
}

int embed(int argc, char** argv) {
  std::string model;
  std::vector<std::vector<llama_token>> seqs;
  enum llama_pooling_type pooling = LLAMA_POOLING_TYPE_UNSPECIFIED;
  static const std::map<std::string, enum llama_pooling_type> poolings = {
      {"mean", LLAMA_POOLING_TYPE_MEAN}, {"cls", LLAMA_POOLING_TYPE_CLS}, {"last", LLAMA_POOLING_TYPE_LAST}};
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "-m")
      model = value;
    else if (flag == "--tokens")
      seqs.push_back(parse_tokens(value));
    else if (flag == "--pooling" && poolings.count(value))
      pooling = poolings.at(value);
    else
      throw std::runtime_error("embed: unknown option or value: " + flag + " " + value);
  }
  if (model.empty() || seqs.empty() || argc % 2) throw std::runtime_error("embed needs -m FILE and --tokens LIST");
  size_t total = 0;
  for (const auto& s : seqs) total += s.size();
  Owned o;
  llama_model_params mp = computing_params();
  o.model = llama_model_load_from_file(model.c_str(), mp);
  if (!o.model) fail(model + ": llama.cpp cannot load this file");
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = uint32_t((total + 255) / 256 * 256);
  cp.n_batch = cp.n_ubatch = uint32_t(total);
  cp.n_seq_max = uint32_t(seqs.size());
  // One KV stream, as llama.cpp's embedding example sets it: with a stream per sequence, the
  // batch is split into ubatches of equal tokens per sequence and mean/cls pool a part of one.
  cp.kv_unified = true;
  cp.embeddings = true;
  cp.pooling_type = pooling;
  cp.type_k = cp.type_v = GGML_TYPE_F32;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.no_perf = true;
  cp.n_threads = cp.n_threads_batch = 1;  // see Args::threads
  o.ctx = llama_init_from_model(o.model, cp);
  if (!o.ctx) fail(model + ": llama.cpp cannot create a context");
  llama_batch b = sequences_batch(seqs, total);
  int32_t rc = llama_decode(o.ctx, b);
  llama_batch_free(b);
  if (rc != 0) fail("llama_decode returned " + std::to_string(rc));
  int n_embd = llama_model_n_embd(o.model);
  for (size_t s = 0; s < seqs.size(); ++s) {
    const float* e = llama_get_embeddings_seq(o.ctx, llama_seq_id(s));
    if (!e) fail("llama_get_embeddings_seq gave nothing (pooling none?)");
    print_row("embedding", s, e, n_embd);
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw std::runtime_error("cannot write to stdout");
  return 0;
}

llama_ftype ftype(const std::string& name) {
  static const std::map<std::string, llama_ftype> types = {
      {"F16", LLAMA_FTYPE_MOSTLY_F16},       {"Q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},
      {"Q4_0", LLAMA_FTYPE_MOSTLY_Q4_0},     {"Q4_1", LLAMA_FTYPE_MOSTLY_Q4_1},
      {"Q5_0", LLAMA_FTYPE_MOSTLY_Q5_0},     {"Q5_1", LLAMA_FTYPE_MOSTLY_Q5_1},
      {"Q2_K", LLAMA_FTYPE_MOSTLY_Q2_K},     {"Q3_K_M", LLAMA_FTYPE_MOSTLY_Q3_K_M},
      {"Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M}, {"Q5_K_M", LLAMA_FTYPE_MOSTLY_Q5_K_M},
      {"Q6_K", LLAMA_FTYPE_MOSTLY_Q6_K},     {"IQ4_NL", LLAMA_FTYPE_MOSTLY_IQ4_NL},
      {"IQ4_XS", LLAMA_FTYPE_MOSTLY_IQ4_XS}, {"MXFP4_MOE", LLAMA_FTYPE_MOSTLY_MXFP4_MOE},
  };
  auto it = types.find(name);
  if (it == types.end()) throw std::runtime_error("quantize: unknown or unsupported type " + name);
  return it->second;
}

int quantize(int argc, char** argv) {
  if (argc != 5) throw std::runtime_error("usage: llamacpp_oracle quantize IN OUT TYPE");
  llama_model_quantize_params p = llama_model_quantize_default_params();
  p.ftype = ftype(argv[4]);
  p.nthread = 1;  // tiny files; see Args::threads
  if (llama_model_quantize(argv[2], argv[3], &p) != 0) fail(std::string(argv[2]) + ": llama_model_quantize failed");
  return 0;
}

ggml_type ggml_type_named(const std::string& name) {
  for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
    const char* n = ggml_type_name(ggml_type(t));
    if (n && ggml_blck_size(ggml_type(t)) > 0 && strcasecmp(n, name.c_str()) == 0) return ggml_type(t);
  }
  throw std::runtime_error("ggml has no type named " + name);
}

std::vector<char> read_all(const std::string& path) {
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path);
  std::vector<char> data;
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) data.insert(data.end(), buf, buf + n);
  bool bad = std::ferror(f);
  if (f != stdin) std::fclose(f);
  if (bad) throw std::runtime_error("cannot read " + path);
  return data;
}

void write_all(const std::string& path, const void* data, size_t bytes) {
  std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot create " + path);
  bool ok = std::fwrite(data, 1, bytes, f) == bytes && std::fflush(f) == 0;
  if (f != stdout) ok = std::fclose(f) == 0 && ok;
  if (!ok) throw std::runtime_error("cannot write " + path);
}

int dequantize(int argc, char** argv) {
  if (argc != 5) throw std::runtime_error("usage: llamacpp_oracle dequantize TYPE IN OUT");
  ggml_type type = ggml_type_named(argv[2]);
  std::vector<char> in = read_all(argv[3]);
  size_t block_bytes = ggml_type_size(type);
  if (in.size() % block_bytes)
    throw std::runtime_error(std::string(argv[3]) + ": " + std::to_string(in.size()) + " bytes are not whole " +
                             argv[2] + " blocks of " + std::to_string(block_bytes));
  int64_t n = int64_t(in.size() / block_bytes) * ggml_blck_size(type);
  auto out = std::vector<float>(static_cast<size_t>(n));
  const ggml_type_traits* traits = ggml_get_type_traits(type);
  if (type == GGML_TYPE_F32)
    std::memcpy(out.data(), in.data(), in.size());
  else if (traits->to_float)
    traits->to_float(in.data(), out.data(), n);
  else
    throw std::runtime_error(std::string("dequantize: ggml has no dequantiser for ") + argv[2]);
  write_all(argv[4], out.data(), out.size() * sizeof(float));
  return 0;
}

int quantize_ref(int argc, char** argv) {
  if (argc != 5) throw std::runtime_error("usage: llamacpp_oracle quantize-ref TYPE IN OUT");
  ggml_type type = ggml_type_named(argv[2]);
  std::vector<char> in = read_all(argv[3]);
  int64_t n = int64_t(in.size() / sizeof(float)), qk = ggml_blck_size(type);
  if (in.size() % sizeof(float) || n % qk)
    throw std::runtime_error(std::string(argv[3]) + ": " + std::to_string(in.size()) + " bytes are not whole " +
                             argv[2] + " blocks of " + std::to_string(qk) + " f32 values");
  auto values = std::vector<float>(static_cast<size_t>(n));
  std::memcpy(values.data(), in.data(), in.size());
  auto out = std::vector<char>(static_cast<size_t>(n / qk) * ggml_type_size(type));
  const ggml_type_traits* traits = ggml_get_type_traits(type);
  if (!traits->from_float_ref)
    throw std::runtime_error(std::string("quantize-ref: ggml has no quantiser for ") + argv[2]);
  traits->from_float_ref(values.data(), out.data(), n);
  write_all(argv[4], out.data(), out.size());
  return 0;
}

int tokenize(int argc, char** argv) {
  std::string model;
  bool add_special = false, parse_special = false;
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--add-special")
      add_special = true;
    else if (flag == "--parse-special")
      parse_special = true;
    else if (flag == "-m" && i + 1 < argc)
      model = argv[++i];
    else
      throw std::runtime_error("tokenize: unknown option or missing value: " + flag);
  }
  if (model.empty()) throw std::runtime_error("tokenize needs -m FILE");
  Owned o;
  llama_model_params mp = llama_model_default_params();
  mp.vocab_only = true;
  o.model = llama_model_load_from_file(model.c_str(), mp);
  if (!o.model) fail(model + ": llama.cpp cannot load this file");
  const llama_vocab* vocab = llama_model_get_vocab(o.model);
  std::string input;
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, stdin)) > 0;) input.append(buf, n);
  std::vector<llama_token> ids;
  for (size_t start = 0, end; (end = input.find('\0', start)) != std::string::npos; start = end + 1) {
    ids.resize(end - start + 16);
    auto run = [&] {
      return llama_tokenize(vocab, input.data() + start, int32_t(end - start), ids.data(), int32_t(ids.size()),
                            add_special, parse_special);
    };
    int32_t n = run();
    if (n < 0) {
      ids.resize(size_t(-n));
      n = run();
    }
    if (n < 0) fail("llama_tokenize failed");
    std::printf("tokens");
    for (int32_t i = 0; i < n; ++i) std::printf(" %d", ids[size_t(i)]);
    std::printf("\n");
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw std::runtime_error("cannot write to stdout");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    llama_log_set(quiet_log, nullptr);
    ggml_backend_load_all();  // ggml's CPU backends live beside this executable
    llama_backend_init();
    static const std::map<std::string, int (*)(int, char**)> commands = {
        {"logits", logits},     {"quantize", quantize}, {"dequantize", dequantize}, {"quantize-ref", quantize_ref},
        {"tokenize", tokenize}, {"embed", embed}};
    auto command = commands.find(argc > 1 ? argv[1] : "");
    if (command == commands.end())
      throw std::runtime_error(
          "usage: llamacpp_oracle logits|embed|quantize|dequantize|quantize-ref|tokenize ... (see tests/llamacpp/)");
    int rc = command->second(argc, argv);
    llama_backend_free();
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
