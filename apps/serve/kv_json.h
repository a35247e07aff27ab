// The JSON that `vkllm info --json` and GET /v1/info share about a model's memory per sequence:
// what each attention kind would cache per token at its dimensions, and the hybrid models'
// linear-attention layers.
#pragma once
#include <nlohmann/json.hpp>

#include "arch/model_config.h"
#include "dtype.h"

namespace vkllm {

// Sets "kv_bytes_per_token_by_kind" {"mha", "gqa", "mqa", "mla", "hybrid"} and "kv_by_kind_dims"
// {"gqa_n_head_kv", "mla_kv_lora_rank", "mla_rope_dim", "hybrid_attention_layers",
// "hybrid_bytes_per_sequence"} (arch/kv_comparison.h), "recurrent_bytes_per_sequence" and
// "linear_attention" ({"layers", "key_heads", "value_heads", "head_dim", "conv_kernel",
// "bytes_per_sequence"}, or null for a model without linear attention).
void add_kv_json(nlohmann::json& j, const ModelConfig& c, DType kv);
void add_kv_json(nlohmann::ordered_json& j, const ModelConfig& c, DType kv);

}  // namespace vkllm
