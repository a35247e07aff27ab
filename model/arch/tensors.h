// The tensor catalogue: every tensor a ModelConfig implies, with its GGUF name, shape and role.
// Names are spelled only in model/arch/; everything else asks for a role (TensorRole), so
// validation, weight binding, the fixture writer and the reference model agree by construction.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vkllm {

class GgufFile;
struct ModelConfig;

// What a tensor is for. Global roles have no layer; the rest are per block.
enum class TensorRole : uint8_t {
  TokenEmbd,
  OutputNorm,
  Output,
  RopeFreqs,
  // attention, both forms
  AttnNorm,
  AttnQ,
  AttnOut,
  // standard attention
  AttnK,
  AttnV,
  AttnQBias,
  AttnKBias,
  AttnVBias,
  // latent attention (MLA)
  AttnQA,
  AttnQANorm,
  AttnQB,
  AttnKvA,
  AttnKvANorm,
  AttnKB,
  AttnVB,
  AttnKvB,
  // standard attention, optional parts: per-head RMSNorm of q and k (qwen3, gemma3), a norm of
  // the block's output before the residual add (gemma2/3), q|k|v rows in one matrix (phi3)
  AttnQNorm,
  AttnKNorm,
  AttnPostNorm,
  AttnQkv,
  // feed-forward
  FfnNorm,
  FfnGate,
  FfnUp,
  FfnDown,
  FfnPostNorm,  // a norm of the FFN output before the residual add (gemma2/3)
  FfnGateUp,    // gate|up rows in one matrix (phi3's ffn_up)
  // mixture of experts (docs/formats.md §8): router, routed experts (3-D), shared experts
  FfnGateInp,
  ExpProbsB,
  FfnGateExps,
  FfnUpExps,
  FfnDownExps,
  FfnGateShexp,
  FfnUpShexp,
  FfnDownShexp,
  FfnGateInpShexp,
  // linear attention (Gated DeltaNet, docs/formats.md §10): the q|k|v projection the conv reads,
  // the output gate z, the conv taps, the decay's bias and rate (-exp(A_log)), the beta and alpha
  // projections, the gated norm of the output, the output projection
  LinearQkv,
  LinearGate,
  SsmConv,
  SsmDt,
  SsmA,
  SsmBeta,
  SsmAlpha,
  SsmNorm,
  SsmOut,
  // multi-token-prediction (nextn) blocks after the trunk: loaded, not run
  NextnEhProj,
  NextnEnorm,
  NextnHnorm,
  NextnHeadNorm,
  // gpt-oss: the output projection's bias, one attention-sink logit per head, the router's bias,
  // and a bias per expert (rows (F | dim, n_experts), added by the chosen expert)
  AttnOutBias,
  AttnSinks,
  FfnGateInpBias,
  FfnGateExpsBias,
  FfnUpExpsBias,
  FfnDownExpsBias,
  // gemma4's mixture of experts beside its dense FFN: the router's input scale, a scale per expert
  // on its output, the experts' input norm and the two branches' output norms
  FfnGateInpScale,
  FfnDownExpsScale,
  FfnPreNorm2,
  FfnPostNorm1,
  FfnPostNorm2,
  // gemma4's per-layer embeddings (global table, projection and its norm; per layer the gate, the
  // projection back and its norm) and the scalar on each layer's output
  PerLayerTokenEmbd,
  PerLayerModelProj,
  PerLayerProjNorm,
  PerLayerInpGate,
  PerLayerProj,
  PerLayerPostNorm,
  LayerOutScale,
  // the alternative layouts llama.cpp reads (docs/formats.md §13): attn_qkv's bias (q|k|v), the
  // experts' gate|up rows in one tensor, the dense FFN's biases (llama, mistral3), the logits' bias
  // (qwen2)
  AttnQkvBias,
  FfnGateUpExps,
  FfnGateBias,
  FfnUpBias,
  FfnDownBias,
  OutputBias,
  // the Mamba-2 mixer (docs/formats.md §15): the input projection (z | xBC | dt), the conv's bias,
  // the skip D; and Nemotron 3's latent projections around the experts
  SsmIn,
  SsmConvBias,
  SsmD,
  FfnLatentDown,
  FfnLatentUp,
  // LFM2's gated short conv (docs/formats.md §15.1): the projection to b|c|x, the conv taps
  // (dim, L) and the output projection
  ShortConvIn,
  ShortConvTaps,
  ShortConvOut,
};
std::string_view to_string(TensorRole r);
bool is_norm(TensorRole r);     // a norm weight (its values sit around 1)
bool is_experts(TensorRole r);  // a routed-experts tensor (ne[2] = n_experts)
// A tensor that vkllm needs in f32 whatever the file stores (the conv taps, read per channel;
// expert biases, gathered by expert).
bool needs_f32(TensorRole r);

constexpr int kGlobal = -1;  // the layer of a global tensor

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> ne;  // ggml order, ne[0] fastest
  TensorRole role;
  int layer = kGlobal;
  uint64_t n_elements() const {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    return n;
  }
};

// One role's rows of a tensor that holds several (attn_qkv and its bias: q, k, v; phi3's ffn_up:
// gate, up), in the order they lie.
struct FusedPart {
  TensorRole role;
  uint64_t rows;  // of a bias: values
};
// The parts of layer `layer`'s tensor of role `role` under c; empty when it is not such a tensor.
std::vector<FusedPart> fused_parts(const ModelConfig& c, TensorRole role, int layer);

class TensorCatalogue {
 public:
  // A global tensor (its full name) or a block tensor ("blk.<l>." + suffix).
  void add_global(TensorRole role, std::string name, std::vector<uint64_t> ne);
  void add(uint32_t layer, TensorRole role, std::string_view suffix, std::vector<uint64_t> ne);

  const std::vector<TensorSpec>& specs() const& { return specs_; }
  std::vector<TensorSpec> specs() && { return std::move(specs_); }  // safe in `for (... : catalogue(c).specs())`
  const TensorSpec* find(TensorRole role, int layer = kGlobal) const;
  const TensorSpec* find(std::string_view name) const;

 private:
  std::vector<TensorSpec> specs_;
  std::unordered_map<std::string, size_t> by_name_;  // index into specs_
};

// Every tensor the config implies, in llama.cpp's order (docs/formats.md §1.4, §1.5), the
// multi-token-prediction blocks' included (layers n_layers ..).
TensorCatalogue tensor_catalogue(const ModelConfig& c);
uint64_t parameter_count(const ModelConfig& c);
// Sets tied_embeddings, rope.has_freq_factors, (where optional) qkv_bias, attn_out_bias and
// moe.probs_bias, and the family's own flags (Architecture::tensor_flags) from which tensors exist.
void read_tensor_flags(const GgufFile& f, ModelConfig& c);
// Whether f has the tensor `role` of block `layer` as c's family names it with `with` applied to
// a copy of c (to probe an optional tensor).
bool file_has(const GgufFile& f, const ModelConfig& c, uint32_t layer, TensorRole role,
              const std::function<void(ModelConfig&)>& with);
// Throws naming the first tensor that is unexpected or has the wrong shape, or the first missing.
// An unexpected tensor's error names the architecture and says whether llama.cpp reads a tensor
// of that name for it (vkllm's gap) or not (a damaged file, or one of another architecture).
void check_tensors(const GgufFile& f, const ModelConfig& c);

}  // namespace vkllm
