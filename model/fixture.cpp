// Fixture models for tests: config from a FixtureSpec, a tiny tokenizer, and random tensors of
// every storage type (how the values are chosen: fixture.h).
#include "fixture.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <glm/gtc/packing.hpp>

#include "check.h"
#include "gguf_writer.h"
#include "tokenizer.h"

namespace vkllm {

// --- config and vocabulary

ModelConfig fixture_config(const FixtureSpec& s) {
  ModelConfig c;
  c.arch = s.arch;
  c.arch_name = std::string(to_string(s.arch));
  c.name = "vkllm fixture";
  c.dim = s.dim;
  c.n_layers = s.n_layers;
  c.n_heads = s.n_heads;
  c.hidden_dim.assign(s.n_layers, s.hidden_dim);
  c.vocab_size = s.vocab_size;
  c.seq_len = s.seq_len;
  c.norm_eps = s.norm_eps;
  c.rope.theta = s.rope_theta;
  c.tied_embeddings = s.tied_embeddings;
  if (s.arch == Arch::Deepseek2) {
    c.mla = {s.q_lora_rank, s.kv_lora_rank, s.qk_nope_head_dim, s.qk_rope_head_dim, s.v_head_dim, s.mla_layout};
    c.n_kv_heads = 1;
    c.head_dim = s.qk_nope_head_dim + s.qk_rope_head_dim;
    c.v_head_dim = s.v_head_dim;
    c.rope.dim = s.qk_rope_head_dim;
  } else {
    ENSURE(s.n_heads > 0, "fixture: n_heads must be positive");
    c.n_kv_heads = s.n_kv_heads;
    c.head_dim = c.v_head_dim = s.head_dim ? s.head_dim : s.dim / s.n_heads;
    c.rope.dim = c.head_dim;
    c.rope.mode = s.arch == Arch::Qwen2 ? RopeMode::Neox : RopeMode::Norm;
    c.qkv_bias = s.arch == Arch::Qwen2;
    c.rope.has_freq_factors = s.rope_freqs && s.arch == Arch::Llama;
  }
  c.validate();
  return c;
}

namespace {

// Pieces a tiny vocabulary adds after its bytes: ASCII, then space+letter, then letter pairs.
std::vector<std::string> fixture_pieces(std::string_view space) {
  std::vector<std::string> p;
  for (char c = '!'; c <= '~'; ++c) p.push_back(std::string(1, c));
  for (char c = 'a'; c <= 'z'; ++c) p.push_back(std::string(space) + c);
  for (char a = 'a'; a <= 'z'; ++a)
    for (char b = 'a'; b <= 'z'; ++b) p.push_back(std::string{a, b});
  return p;
}

void pad_vocab(VocabConfig& v, uint32_t size) {
  for (uint32_t i = uint32_t(v.tokens.size()); i < size; ++i) {
    v.tokens.push_back(fmt::format("[PAD{}]", i));
    v.types.push_back(TokenType::Unused);
    if (!v.scores.empty()) v.scores.push_back(-1e9f);
  }
}

VocabConfig spm_vocab(uint32_t size) {
  VocabConfig v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::Unknown, TokenType::Control, TokenType::Control};
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(fmt::format("<0x{:02X}>", b));
    v.types.push_back(TokenType::Byte);
  }
  v.tokens.push_back("\xe2\x96\x81");
  v.types.push_back(TokenType::Normal);
  v.scores.assign(v.tokens.size(), 0.0f);
  ENSURE(size >= v.tokens.size(), fmt::format("fixture: a llama vocabulary needs at least {} tokens", v.tokens.size()));
  for (const std::string& p : fixture_pieces("\xe2\x96\x81")) {
    if (v.tokens.size() >= size) break;
    v.scores.push_back(-float(v.tokens.size()));  // earlier pieces merge first
    v.tokens.push_back(p);
    v.types.push_back(TokenType::Normal);
  }
  pad_vocab(v, size);
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  v.add_bos = true;
  v.add_space_prefix = true;
  return v;
}

VocabConfig bpe_vocab(uint32_t size, const std::string& pre) {
  VocabConfig v = gpt2_byte_vocab(pre);
  ENSURE(size >= v.tokens.size(), fmt::format("fixture: a gpt2 vocabulary needs at least {} tokens", v.tokens.size()));
  std::string space(gpt2_byte_char(' '));
  for (const std::string& p : fixture_pieces(space)) {
    if (v.tokens.size() >= size) break;
    if (p.size() == 1) continue;  // single characters are already byte tokens
    // "Ġa" = "Ġ" + "a"; "ab" = "a" + "b"
    size_t split = p.size() - 1;
    v.merges.push_back(p.substr(0, split) + " " + p.substr(split));
    v.tokens.push_back(p);
    v.types.push_back(TokenType::Normal);
  }
  pad_vocab(v, size);
  v.bos = v.eos = 256;
  return v;
}

}  // namespace

VocabConfig gpt2_byte_vocab(const std::string& pre) {
  VocabConfig v;
  v.model = "gpt2";
  v.pre = pre;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(std::string(gpt2_byte_char(uint8_t(b))));
  v.types.assign(256, TokenType::Normal);
  v.tokens.push_back("<|endoftext|>");
  v.types.push_back(TokenType::Control);
  return v;
}

VocabConfig fixture_vocab(const std::string& model, uint32_t vocab_size, const std::string& pre) {
  if (model == "llama") return spm_vocab(vocab_size);
  if (model == "gpt2") return bpe_vocab(vocab_size, pre);
  throw Error(fmt::format("fixture: unknown tokenizer model {}", model));
}

// --- random tensors

namespace {

void put_f16(std::byte* p, float v) {
  uint16_t h = glm::packHalf1x16(v);
  std::memcpy(p, &h, 2);
}

uint16_t to_bf16(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);  // round to nearest even
}

// Where a quantised block keeps its f16 scales, and the largest |q * sub-scale| it multiplies.
struct QuantScales {
  DType type;
  int d_at, min_at;    // byte offsets of d and of dmin / m (-1: none)
  float qmax;          // y = d * (up to qmax)
  bool min_is_offset;  // Q4_1/Q5_1: y = q*d + m; K-quants: y = ... - dmin * mn (mn <= 63 or 15)
  float min_divisor;
};

constexpr QuantScales kScales[] = {
    {DType::Q4_0, 0, -1, 8, false, 1},           {DType::Q4_1, 0, 2, 8, true, 1},
    {DType::Q5_0, 0, -1, 16, false, 1},          {DType::Q5_1, 0, 2, 16, true, 1},
    {DType::Q8_0, 0, -1, 128, false, 1},         {DType::Q2_K, 80, 82, 15 * 3, false, 2 * 15},
    {DType::Q3_K, 108, -1, 32 * 4, false, 1},    {DType::Q4_K, 0, 2, 63 * 15, false, 2 * 63},
    {DType::Q5_K, 0, 2, 63 * 31, false, 2 * 63}, {DType::Q6_K, 208, -1, 128 * 32, false, 1},
};

}  // namespace

std::vector<std::byte> random_tensor_bytes(DType type, uint64_t n, float range, std::mt19937& rng) {
  const DTypeInfo& ti = info(type);
  ENSURE(n % ti.block_values == 0, fmt::format("fixture: {} values are not whole {} blocks", n, ti.name));
  std::vector<std::byte> out(n / ti.block_values * ti.block_bytes);
  std::uniform_real_distribution<float> value(-range, range), half_to_one(0.5f, 1.0f);
  if (type == DType::F32 || type == DType::F16 || type == DType::BF16) {
    for (uint64_t i = 0; i < n; ++i) {
      float v = value(rng);
      if (type == DType::F32)
        std::memcpy(&out[i * 4], &v, 4);
      else if (type == DType::F16)
        put_f16(&out[i * 2], v);
      else {
        uint16_t b = to_bf16(v);
        std::memcpy(&out[i * 2], &b, 2);
      }
    }
    return out;
  }
  const QuantScales* q = nullptr;
  for (const QuantScales& s : kScales)
    if (s.type == type) q = &s;
  ENSURE(q, fmt::format("fixture: type {} cannot hold weights", ti.name));
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::byte& b : out) b = std::byte(byte(rng));
  for (size_t blk = 0; blk < out.size(); blk += ti.block_bytes) {
    put_f16(&out[blk + q->d_at], range / q->qmax * half_to_one(rng));
    if (q->min_at >= 0)
      put_f16(&out[blk + q->min_at],
              q->min_is_offset ? -range * half_to_one(rng) : range / q->min_divisor * half_to_one(rng));
  }
  return out;
}

// --- the model file

namespace {

// Llama 3.1's rope factors (FORMATS §3.4): factor 8, low/high frequency factors 1 and 4, 8192 ctx.
std::vector<float> llama3_rope_factors(uint32_t dim, float theta) {
  const double factor = 8, lo = 1, hi = 4, ctx = 8192;
  std::vector<float> f;
  for (uint32_t i = 0; i < dim / 2; ++i) {
    double wavelen = 2 * M_PI / std::pow(double(theta), -2.0 * i / dim);
    if (wavelen < ctx / hi)
      f.push_back(1.0f);
    else if (wavelen > ctx / lo)
      f.push_back(float(factor));
    else {
      double s = (ctx / wavelen - lo) / (hi - lo);
      f.push_back(float(1.0 / ((1 - s) / factor + s)));
    }
  }
  return f;
}

std::vector<std::byte> one_d_tensor(const TensorSpec& t, const ModelConfig& c, std::mt19937& rng) {
  std::vector<float> v(t.ne[0]);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  if (t.name == "rope_freqs.weight")
    v = llama3_rope_factors(c.rope.dim, c.rope.theta);
  else if (t.name.ends_with("norm.weight"))
    for (float& x : v) x = 1.0f + u(rng);
  else
    for (float& x : v) x = u(rng);
  std::vector<std::byte> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

DType storage_type(DType want, uint64_t ne0) {
  if (ne0 % info(want).block_values == 0) return want;
  return ne0 % 32 == 0 ? DType::Q8_0 : DType::F16;
}

}  // namespace

GgufWriter fixture_writer(const FixtureSpec& s) {
  ModelConfig c = fixture_config(s);
  GgufWriter w;
  write_config(w, c);
  write_vocab(w, fixture_vocab(s.tokenizer, s.vocab_size, s.tokenizer_pre));
  std::mt19937 rng(s.seed);
  for (const TensorSpec& t : expected_tensors(c)) {
    if (t.ne.size() == 1) {
      w.add_tensor(t.name, t.ne, DType::F32, one_d_tensor(t, c, rng));
      continue;
    }
    DType want = t.name == "token_embd.weight" ? s.embed_type.value_or(s.weight_type)
                 : t.name == "output.weight"   ? s.output_type.value_or(s.weight_type)
                                               : s.weight_type;
    DType type = storage_type(want, t.ne[0]);
    uint64_t n = 1;
    for (uint64_t d : t.ne) n *= d;
    w.add_tensor(t.name, t.ne, type, random_tensor_bytes(type, n, 1.0f / std::sqrt(float(t.ne[0])), rng));
  }
  return w;
}

std::vector<std::byte> make_fixture_model(const FixtureSpec& s) { return fixture_writer(s).bytes(); }

}  // namespace vkllm
