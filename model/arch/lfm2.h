// What the LFM2 families share (lfm2, lfm2moe; docs/formats.md §15.1): blocks whose mixer is
// either LFM2's gated short convolution or GQA attention with q/k head norms, which llama.cpp
// tells apart by attention.head_count_kv (0 in a short-conv layer); the final norm is the tensor
// llama.cpp reads as token_embd_norm.
#pragma once
#include <cstdint>
#include <vector>

#include "arch/architecture.h"

namespace vkllm {

class GgufFile;
class GgufWriter;
class TensorCatalogue;
struct KeyPrefix;
struct ModelConfig;

// shortconv.l_cache (the conv's taps); each layer's mixer from attention.head_count_kv (0: a short
// conv); attention.sliding_window, which only LFM2.5's audio tokenizer has, is refused.
void read_lfm2(const GgufFile& f, const KeyPrefix& k, ModelConfig& c);
void write_lfm2(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);
void validate_lfm2(const ModelConfig& c);

// Block l's mixer: attn_norm, then shortconv.conv {L, dim}, shortconv.in_proj {dim, 3·dim} (b, c
// and x per token) and shortconv.out_proj {dim, dim}, or attention (q/k/v as add_qkv lays them
// out, attn_output, attn_q_norm and attn_k_norm).
void add_lfm2_mixer(const ModelConfig& c, uint32_t l, TensorCatalogue& t);

// The recipe both families run: GQA with q/k head norms and NEOX rope over the whole head.
BlockRecipe lfm2_recipe();
// What llama.cpp reads for LFM2-ColBERT that vkllm does not run: its dense output projection.
std::vector<UnrunTensor> lfm2_dense_out();
inline constexpr std::string_view kLfm2OutputNorm = "token_embd_norm.weight";

}  // namespace vkllm
