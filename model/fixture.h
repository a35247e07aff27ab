// Fixture models: complete llama / qwen2 / deepseek2 GGUF files with random weights of real shapes
// and a tiny valid tokenizer, built in memory for tests (no downloads). Not for inference quality.
//
// Weights: values uniform in [-1, 1] / sqrt(ne[0]) (so activations stay O(1)), generated as f32
// and stored as F32/F16/BF16. Quantised types hold random bytes whose block scales are set to sane
// f16 values: d (and dmin / m) = (0.5..1) * that range / the largest quant magnitude, so
// dequantised values lie within about the same range. K-quant tensors whose ne[0] is not a
// multiple of 256 fall back to Q8_0 (to F16 if not a multiple of 32), as llama.cpp falls back.
// Norm weights are 1 +- 0.1, biases +-0.1, all 1-D tensors F32. rope_freqs holds Llama-3.1 factors.
#pragma once
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "config.h"
#include "dtype.h"

namespace vkllm {

class GgufWriter;

struct FixtureSpec {
  Arch arch = Arch::Llama;
  uint32_t dim = 64;
  uint32_t n_layers = 2;
  uint32_t n_heads = 4;
  uint32_t n_kv_heads = 4;  // = n_heads: MHA; 1: MQA; else GQA (deepseek2: ignored)
  uint32_t head_dim = 0;    // 0: dim / n_heads (llama, qwen2)
  uint32_t hidden_dim = 128;
  uint32_t vocab_size = 512;  // at least 260 (the tokenizer's bytes and specials)
  uint32_t seq_len = 256;
  float norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  bool tied_embeddings = false;  // no output.weight
  bool rope_freqs = false;       // llama: a rope_freqs.weight tensor (Llama 3.1 style)
  // deepseek2 (MLA); head_dim = qk_nope + qk_rope
  uint32_t q_lora_rank = 0;  // 0: plain attn_q
  uint32_t kv_lora_rank = 32;
  uint32_t qk_nope_head_dim = 16;
  uint32_t qk_rope_head_dim = 8;
  uint32_t v_head_dim = 16;
  MlaLayout mla_layout = MlaLayout::Split;
  // storage
  DType weight_type = DType::F16;    // matrices (2-D and 3-D)
  std::optional<DType> embed_type;   // token_embd; default weight_type
  std::optional<DType> output_type;  // output.weight; default weight_type
  // tokenizer: "llama" (SentencePiece with byte fallback) or "gpt2" (byte-level BPE, pre below)
  std::string tokenizer = "llama";
  std::string tokenizer_pre = "gpt-2";
  uint32_t seed = 1;
};

ModelConfig fixture_config(const FixtureSpec& s);
// A small valid vocabulary of exactly vocab_size tokens. "llama": <unk> <s> </s>, <0x00>..<0xFF>,
// "▁", then pieces with scores; "gpt2": the 256 byte characters, <|endoftext|>, merged pieces.
VocabConfig fixture_vocab(const std::string& model, uint32_t vocab_size, const std::string& pre = "gpt-2");
// The start of every byte-level "gpt2" vocabulary: ids 0..255 are the bytes' GPT-2 characters
// (id = byte value), 256 is <|endoftext|> (control); merges and tokens follow.
VocabConfig gpt2_byte_vocab(const std::string& pre);
// The writer with everything added (add more metadata before saving if needed).
GgufWriter fixture_writer(const FixtureSpec& s);
std::vector<std::byte> make_fixture_model(const FixtureSpec& s);

// Random bytes of a tensor of n elements (n a multiple of the type's block size), as above.
std::vector<std::byte> random_tensor_bytes(DType type, uint64_t n, float range, std::mt19937& rng);

}  // namespace vkllm
