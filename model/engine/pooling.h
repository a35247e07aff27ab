// Pooling and normalising embeddings, apart from running the model: llama.cpp's pooling types
// and --embd-normalize modes, and floats as JSON prints them. No GPU here (the server's request
// fuzzer links it).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "arch/model_config.h"

namespace vkllm {

// The pooling embeddings use: `requested` when given, else the file's pooling_type, else Last (a
// generative model: its last token is the only one that has seen the whole input). None (one
// vector per token) and Rank (a reranker's score) are errors that say so.
Pooling embedding_pooling(const ModelConfig& c, Pooling requested = Pooling::Unspecified);
std::string_view to_string(Pooling p);  // "none", "mean", "cls", "last", "rank"
// Why pooling p gives no embeddings ("" when it does): none and rank, in words.
std::string pooling_refusal(Pooling p);
// llama.cpp's --pooling spellings (none, mean, cls, last, rank); nullopt for anything else.
std::optional<Pooling> pooling_named(std::string_view name);

// llama.cpp's --embd-normalize, in place: -1 none, 0 the largest |value| scaled to 32760 (int16),
// 1 taxicab, 2 Euclidean, p > 2 the p-norm. A zero vector stays zero.
void normalize_embedding(std::span<float> v, int mode);
// Whether normalize_embedding takes `mode` (-1 or more).
inline bool valid_normalization(int mode) { return mode >= -1; }

// The double whose shortest decimal is the float's: JSON writers print doubles, and a float only
// widened prints 17 digits (0.1f as 0.10000000149011612).
double json_float(float x);

}  // namespace vkllm
