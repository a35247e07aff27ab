// mistral3: Ministral 3 (3B, 8B, 14B) and the text of Mistral 3 files converted as mistral3. A
// llama block (adjacent-pair rope, gated SiLU FFN, full rotary; an output bias when the file has
// one) under YaRN rope, with Llama 4's attention temperature: after rope each query is scaled by
// 1 + beta·ln(floor(pos / n) + 1), beta = attention.temperature_scale and n the YaRN original
// context (rope.scaling.original_context_length, else context_length), as llama.cpp's
// mistral3.cpp does. Its yarn_log_multiplier is HF's mscale_all_dim (docs/formats.md §3.5, §11).
#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "error.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  c.attn_temperature_beta = read_f32(f, k("attention.temperature_scale"), 0.0f);
  c.attn_temperature_length = c.rope.original_ctx ? c.rope.original_ctx : c.seq_len;
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_standard_heads(w, k, c);
  if (c.attn_temperature_beta != 0) w.add(k("attention.temperature_scale"), c.attn_temperature_beta);
}

void validate(const ModelConfig& c) {
  ENSURE(c.moe.n_experts == 0, "mistral3 files with experts are not supported (Ministral 3 is dense)");
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) { add_standard_block(c, l, t); }

}  // namespace

extern const Architecture mistral3_architecture = {
    .name = "mistral3",
    .gguf_names = {"mistral3"},
    .recipe = llama_recipe(),
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
    .unrun_tensors = longrope_factors(),
};

}  // namespace vkllm
