// Architecture: what one model family is, as data. Each family is one file in model/arch/ that
// fills in an Architecture: the general.architecture names it answers to, its extra
// hyperparameters, its tensor catalogue (the one place its tensor names are spelled) and its block
// recipe. The registry maps a GGUF name to it; the graph, the reference model, the fixture writer
// and the checks read the recipe and the catalogue, never the name.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch/model_config.h"

namespace vkllm {

class GgufFile;
class GgufWriter;
class TensorCatalogue;
struct KeyPrefix;

// The attention of a block: per-head q/k/v/o projections, or DeepSeek's multi-head latent
// attention (a compressed latent row per token; docs/formats.md §5).
enum class AttentionForm { Standard, Latent };
// Whether a tensor exists: never; when the file has it (Usual: llama.cpp reads files without it,
// but the family's converter writes it, so fixtures have it unless told otherwise); always.
enum class Presence { None, Optional, Usual, Required };
inline bool varies(Presence p) { return p == Presence::Optional || p == Presence::Usual; }
// The gate of the gated FFN (and of every expert): silu(gate)·up, gelu(gate)·up (tanh GELU), or
// gpt-oss's clamped variant: g·sigmoid(1.702·g)·(u + 1) with g = min(gate, 7), u = clamp(up, ±7);
// or, for an FFN without a gate (Nemotron-H), the squared ReLU of up: max(up, 0)^2.
enum class FfnActivation { Silu, Gelu, SwigluOai, ReluSqr };

// How a block is built from the shared blocks (model/graph/blocks*.cpp): options, not code,
// grouped by what they change. Which FFN a block has (dense, or mixture of experts) is
// ModelConfig::is_moe_layer; which optional tensors it has (shared experts, the shared gate, fused
// projections, expert biases) is its tensor catalogue; per-layer shapes are in ModelConfig.
struct AttentionRecipe {
  AttentionForm form = AttentionForm::Standard;
  Presence qkv_bias = Presence::None;  // attn_q/k/v.bias
  Presence out_bias = Presence::None;  // attn_output.bias (gpt-oss; mistral3 when the file has it)
  bool qk_norm = false;                // RMSNorm of each q and k head (attn_q_norm, attn_k_norm) before rope
  bool v_norm = false;                 // RMSNorm of each v head, without a weight (gemma4)
  // The query projection gives q and a gate per head (q_h | gate_h, 2·head_dim rows each), and
  // the attention output is scaled by sigmoid(gate) before the output projection (qwen35).
  bool gated = false;
  // attn_sinks: one learned logit per head that joins the softmax denominator and weighs no
  // value (gpt-oss).
  bool sinks = false;
};
struct PositionRecipe {
  RopeMode rope_mode = RopeMode::Norm;
  bool full_rotary = true;  // rope.dimension_count must equal the head dim
};
struct NormRecipe {
  bool post_norms = false;  // RMSNorm of the attention and FFN outputs before each residual add
};
struct FfnRecipe {
  FfnActivation activation = FfnActivation::Silu;
  Presence bias = Presence::None;  // ffn_gate/up/down.bias of the dense FFN (llama, mistral3)
  // gemma4: MoE layers run their dense FFN beside the experts, each on its own norm of the input
  // and normed apart before the sum; the router reads rmsnorm(x)/sqrt(dim) times its own scale.
  bool moe_beside_dense = false;
};
struct EmbeddingRecipe {
  bool scale = false;                     // token embeddings times sqrt(dim) (gemma)
  Presence output_bias = Presence::None;  // output.bias added to the logits (qwen2)
};
// Whether a family's files may hold two projections in one tensor (docs/formats.md §13): never;
// optionally (llama.cpp's converter writes them apart unless asked, --fuse-qkv,
// --fuse-gate-up-exps); usually (the converter writes them fused, older or hand-made files apart).
enum class Fusion { Never, Optional, Usual };
struct LayoutRecipe {
  Fusion qkv = Fusion::Never;           // attn_qkv (+ attn_qkv.bias) for attn_q/k/v (+ their biases)
  Fusion gate_up_exps = Fusion::Never;  // ffn_gate_up_exps for ffn_gate_exps + ffn_up_exps
};
// A tensor llama.cpp's loader reads for the family that vkllm does not run, and why: `suffix`
// ends the name ("cls.output.weight", ".rope_factors_long.weight").
struct UnrunTensor {
  std::string_view suffix;
  std::string_view what;
};
struct BlockRecipe {
  AttentionRecipe attention;
  PositionRecipe position;
  NormRecipe norms;
  FfnRecipe ffn;
  EmbeddingRecipe embeddings;
  LayoutRecipe layouts;
};

struct Architecture {
  std::string_view name;                     // canonical name (what fixtures and tests ask for)
  std::vector<std::string_view> gguf_names;  // general.architecture values it answers to
  BlockRecipe recipe;
  // Reads the hyperparameters beyond the common keys (head dims, rope mode, MLA, MoE) into c.
  void (*read_hparams)(const GgufFile& f, const KeyPrefix& k, ModelConfig& c);
  // Writes what read_hparams reads (and the keys whose spelling depends on the family).
  void (*write_hparams)(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);
  // Checks beyond the common ones; throws vkllm::Error. May be null.
  void (*validate)(const ModelConfig& c);
  // Every tensor of layer l, in llama.cpp's order; the globals are common. Layers from n_layers on
  // are multi-token-prediction blocks (only where nextn_blocks says the family has them).
  void (*layer_tensors)(const ModelConfig& c, uint32_t l, TensorCatalogue& t);
  // Sets the family's flags that come from which tensors a file has (file_has); may be null.
  void (*tensor_flags)(const GgufFile& f, ModelConfig& c) = nullptr;
  // Whether files of this family may carry multi-token-prediction blocks (nextn_predict_layers),
  // which layer_tensors then lists so they load; they are not run.
  bool nextn_blocks = false;
  // Tensors llama.cpp reads for this family that vkllm refuses by name (check_tensors says so).
  std::vector<UnrunTensor> unrun_tensors = {};
  // The final norm's tensor (lfm2: token_embd_norm.weight, which llama.cpp reads as the output norm).
  std::string_view output_norm = "output_norm.weight";
};

// The registered families, in the order `vkllm info` lists them.
std::span<const Architecture* const> architectures();
// The family that answers to a general.architecture value; null if none.
const Architecture* find_architecture(std::string_view gguf_name);
// The family by canonical name; throws naming the known ones.
const Architecture& architecture(std::string_view name);
// "llama, mistral, qwen2, ...": for messages.
std::string known_architectures();

}  // namespace vkllm
