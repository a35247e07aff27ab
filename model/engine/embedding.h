// Embeddings: each input's final-normed hidden states (the output projection skipped) pooled into
// one vector per input, as llama.cpp's embedding example and server compute them: the mean of
// its tokens, its first token (cls) or its last. Inputs run several to a forward, each in a
// KV-cache slot of its own; one longer than a forward's batch runs in chunks. Normalising is a
// separate step (normalize_embedding), so that callers can truncate first (Matryoshka).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch/model_config.h"
#include "engine/pooling.h"

namespace vkllm {

class Engine;

// The pooled vectors (dim floats each, not normalised) of every input, in input order. Inputs
// take the KV-cache `slots` given (distinct; their cached tokens are overwritten; slot 0 also
// ends the engine's single sequence). Every input must be non-empty, fit one slot's context and
// hold token ids of the vocabulary (Error otherwise, before anything runs).
std::vector<std::vector<float>> embed(Engine& engine, std::span<const std::vector<int32_t>> inputs, Pooling pooling,
                                      std::span<const uint32_t> slots);
// Every slot of the engine (vkllm embed).
std::vector<std::vector<float>> embed(Engine& engine, std::span<const std::vector<int32_t>> inputs, Pooling pooling);

}  // namespace vkllm
