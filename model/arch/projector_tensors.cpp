// The projector file's tensors: names and shapes per type (llama.cpp clip-impl.h TN_*, clip.cpp
// load_tensors; ggml order, ne[0] fastest), and the checks a file must pass before any upload.
#include <fmt/format.h>

#include "arch/projector.h"
#include "gguf/reader.h"

namespace vkllm {

namespace {

struct RoleName {
  VisionRole role;
  std::string_view name;  // with {} for the layer where per layer
};
constexpr RoleName kNames[] = {
    {VisionRole::PatchEmbd, "v.patch_embd.weight"},
    {VisionRole::PatchEmbd1, "v.patch_embd.weight.1"},
    {VisionRole::PatchBias, "v.patch_embd.bias"},
    {VisionRole::PosEmbd, "v.position_embd.weight"},
    {VisionRole::PostLnW, "v.post_ln.weight"},
    {VisionRole::PostLnB, "v.post_ln.bias"},
    {VisionRole::Ln1W, "v.blk.{}.ln1.weight"},
    {VisionRole::Ln1B, "v.blk.{}.ln1.bias"},
    {VisionRole::AttnQkvW, "v.blk.{}.attn_qkv.weight"},
    {VisionRole::AttnQkvB, "v.blk.{}.attn_qkv.bias"},
    {VisionRole::AttnQW, "v.blk.{}.attn_q.weight"},
    {VisionRole::AttnQB, "v.blk.{}.attn_q.bias"},
    {VisionRole::AttnKW, "v.blk.{}.attn_k.weight"},
    {VisionRole::AttnKB, "v.blk.{}.attn_k.bias"},
    {VisionRole::AttnVW, "v.blk.{}.attn_v.weight"},
    {VisionRole::AttnVB, "v.blk.{}.attn_v.bias"},
    {VisionRole::AttnOutW, "v.blk.{}.attn_out.weight"},
    {VisionRole::AttnOutB, "v.blk.{}.attn_out.bias"},
    {VisionRole::AttnQNorm, "v.blk.{}.attn_q_norm.weight"},
    {VisionRole::AttnKNorm, "v.blk.{}.attn_k_norm.weight"},
    {VisionRole::AttnPostNorm, "v.blk.{}.attn_post_norm.weight"},
    {VisionRole::Ln2W, "v.blk.{}.ln2.weight"},
    {VisionRole::Ln2B, "v.blk.{}.ln2.bias"},
    {VisionRole::FfnGateW, "v.blk.{}.ffn_gate.weight"},
    {VisionRole::FfnUpW, "v.blk.{}.ffn_up.weight"},
    {VisionRole::FfnUpB, "v.blk.{}.ffn_up.bias"},
    {VisionRole::FfnDownW, "v.blk.{}.ffn_down.weight"},
    {VisionRole::FfnDownB, "v.blk.{}.ffn_down.bias"},
    {VisionRole::FfnPostNorm, "v.blk.{}.ffn_post_norm.weight"},
    {VisionRole::LayerOutScale, "v.blk.{}.out_scale.weight"},
    {VisionRole::DeepstackNormW, "v.deepstack.{}.norm.weight"},
    {VisionRole::DeepstackNormB, "v.deepstack.{}.norm.bias"},
    {VisionRole::DeepstackFc1W, "v.deepstack.{}.fc1.weight"},
    {VisionRole::DeepstackFc1B, "v.deepstack.{}.fc1.bias"},
    {VisionRole::DeepstackFc2W, "v.deepstack.{}.fc2.weight"},
    {VisionRole::DeepstackFc2B, "v.deepstack.{}.fc2.bias"},
    {VisionRole::Mm0W, "mm.0.weight"},
    {VisionRole::Mm0B, "mm.0.bias"},
    {VisionRole::Mm2W, "mm.2.weight"},
    {VisionRole::Mm2B, "mm.2.bias"},
    {VisionRole::SoftEmbNorm, "mm.soft_emb_norm.weight"},
    {VisionRole::InputProj, "mm.input_projection.weight"},
    {VisionRole::StdBias, "v.std_bias"},
    {VisionRole::StdScale, "v.std_scale"},
};

std::string_view pattern(VisionRole r) {
  for (const RoleName& n : kNames)
    if (n.role == r) return n.name;
  return "?";
}

std::string name_of(VisionRole r, int layer) {
  std::string_view p = pattern(r);
  return layer < 0 ? std::string(p) : fmt::format(fmt::runtime(p), layer);
}

class Specs {
 public:
  explicit Specs(std::vector<VisionTensorSpec>& out) : out_(out) {}
  void add(VisionRole r, std::vector<uint64_t> ne, int layer = -1, bool optional = false) {
    out_.push_back({name_of(r, layer), std::move(ne), r, layer, optional});
  }

 private:
  std::vector<VisionTensorSpec>& out_;
};

void qwen3vl_tensors(const ProjectorConfig& c, Specs& t) {
  uint64_t n = c.n_embd, p = c.patch_size, ff = c.n_ff, m4 = 4 * n, pd = c.proj_dim;
  t.add(VisionRole::PatchEmbd, {p, p, 3, n});
  t.add(VisionRole::PatchEmbd1, {p, p, 3, n});
  t.add(VisionRole::PatchBias, {n});
  t.add(VisionRole::PosEmbd, {n, c.n_pos_embd});
  for (int l = 0; l < int(c.n_layers); ++l) {
    t.add(VisionRole::Ln1W, {n}, l), t.add(VisionRole::Ln1B, {n}, l);
    t.add(VisionRole::AttnQkvW, {n, 3 * n}, l), t.add(VisionRole::AttnQkvB, {3 * n}, l);
    t.add(VisionRole::AttnOutW, {n, n}, l), t.add(VisionRole::AttnOutB, {n}, l);
    t.add(VisionRole::Ln2W, {n}, l), t.add(VisionRole::Ln2B, {n}, l);
    t.add(VisionRole::FfnUpW, {n, ff}, l), t.add(VisionRole::FfnUpB, {ff}, l);
    t.add(VisionRole::FfnDownW, {ff, n}, l), t.add(VisionRole::FfnDownB, {n}, l);
    if (size_t(l) >= c.deepstack.size() || !c.deepstack[l]) continue;
    t.add(VisionRole::DeepstackNormW, {m4}, l), t.add(VisionRole::DeepstackNormB, {m4}, l);
    t.add(VisionRole::DeepstackFc1W, {m4, m4}, l), t.add(VisionRole::DeepstackFc1B, {m4}, l);
    t.add(VisionRole::DeepstackFc2W, {m4, pd}, l), t.add(VisionRole::DeepstackFc2B, {pd}, l);
  }
  t.add(VisionRole::PostLnW, {n}), t.add(VisionRole::PostLnB, {n});
  t.add(VisionRole::Mm0W, {m4, m4}), t.add(VisionRole::Mm0B, {m4});
  t.add(VisionRole::Mm2W, {m4, pd}), t.add(VisionRole::Mm2B, {pd});
}

void gemma3_tensors(const ProjectorConfig& c, Specs& t) {
  uint64_t n = c.n_embd, p = c.patch_size, ff = c.n_ff, side = c.image_size / c.patch_size;
  t.add(VisionRole::PatchEmbd, {p, p, 3, n});
  t.add(VisionRole::PatchBias, {n});
  t.add(VisionRole::PosEmbd, {n, side * side});
  for (int l = 0; l < int(c.n_layers); ++l) {
    t.add(VisionRole::Ln1W, {n}, l), t.add(VisionRole::Ln1B, {n}, l);
    for (auto [w, b] :
         {std::pair{VisionRole::AttnQW, VisionRole::AttnQB}, std::pair{VisionRole::AttnKW, VisionRole::AttnKB},
          std::pair{VisionRole::AttnVW, VisionRole::AttnVB}, std::pair{VisionRole::AttnOutW, VisionRole::AttnOutB}})
      t.add(w, {n, n}, l), t.add(b, {n}, l);
    t.add(VisionRole::Ln2W, {n}, l), t.add(VisionRole::Ln2B, {n}, l);
    t.add(VisionRole::FfnUpW, {n, ff}, l), t.add(VisionRole::FfnUpB, {ff}, l);
    t.add(VisionRole::FfnDownW, {ff, n}, l), t.add(VisionRole::FfnDownB, {n}, l);
  }
  t.add(VisionRole::PostLnW, {n}), t.add(VisionRole::PostLnB, {n});
  t.add(VisionRole::SoftEmbNorm, {n});
  t.add(VisionRole::InputProj, {c.proj_dim, n});  // used transposed
}

void gemma4v_tensors(const ProjectorConfig& c, Specs& t) {
  uint64_t n = c.n_embd, p = c.patch_size, ff = c.n_ff, hd = c.head_dim;
  t.add(VisionRole::PatchEmbd, {p, p, 3, n});
  t.add(VisionRole::PosEmbd, {n, c.n_pos_embd, 2});
  for (int l = 0; l < int(c.n_layers); ++l) {
    t.add(VisionRole::Ln1W, {n}, l);
    for (VisionRole r : {VisionRole::AttnQW, VisionRole::AttnKW, VisionRole::AttnVW}) t.add(r, {n, n}, l);
    t.add(VisionRole::AttnQNorm, {hd}, l), t.add(VisionRole::AttnKNorm, {hd}, l);
    t.add(VisionRole::AttnOutW, {n, n}, l);
    t.add(VisionRole::AttnPostNorm, {n}, l);
    t.add(VisionRole::Ln2W, {n}, l);
    t.add(VisionRole::FfnGateW, {n, ff}, l), t.add(VisionRole::FfnUpW, {n, ff}, l);
    t.add(VisionRole::FfnDownW, {ff, n}, l);
    t.add(VisionRole::FfnPostNorm, {n}, l);
    t.add(VisionRole::LayerOutScale, {1}, l, true);
  }
  t.add(VisionRole::InputProj, {n, c.proj_dim});
  t.add(VisionRole::StdBias, {n}, -1, !c.std_scale);
  t.add(VisionRole::StdScale, {n}, -1, !c.std_scale);
}

std::string shape(std::span<const uint64_t> ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

}  // namespace

std::string_view to_string(VisionRole r) { return pattern(r); }

std::vector<VisionTensorSpec> projector_tensors(const ProjectorConfig& c) {
  std::vector<VisionTensorSpec> out;
  Specs t(out);
  switch (c.type) {
    case ProjectorType::Qwen3vlMerger:
      qwen3vl_tensors(c, t);
      break;
    case ProjectorType::Gemma3:
      gemma3_tensors(c, t);
      break;
    case ProjectorType::Gemma4v:
      gemma4v_tensors(c, t);
      break;
  }
  return out;
}

const VisionTensorSpec* find_spec(const std::vector<VisionTensorSpec>& specs, VisionRole r, int layer) {
  for (const VisionTensorSpec& s : specs)
    if (s.role == r && s.layer == layer) return &s;
  return nullptr;
}

std::string clamp_tensor_name(std::string_view weight_name, ClampBound b) {
  static constexpr std::string_view kSuffix[] = {".input_min", ".input_max", ".output_min", ".output_max"};
  std::string_view stem =
      weight_name.ends_with(".weight") ? weight_name.substr(0, weight_name.size() - 7) : weight_name;
  return std::string(stem) + std::string(kSuffix[int(b)]);
}

void read_projector_tensor_facts(const GgufFile& f, ProjectorConfig& c) {
  const GgufTensor* pos = f.find_tensor(pattern(VisionRole::PosEmbd));
  if (c.type == ProjectorType::Gemma3) {
    uint64_t side = c.image_size / c.patch_size;
    c.n_pos_embd = uint32_t(side * side);
  } else {
    if (!pos) f.fail(fmt::format("missing tensor {}", pattern(VisionRole::PosEmbd)));
    if (pos->ne[1] == 0 || pos->ne[1] > (1u << 20)) f.fail(fmt::format("tensor {} has {} rows", pos->name, pos->ne[1]));
    c.n_pos_embd = uint32_t(pos->ne[1]);
  }
  if (c.type == ProjectorType::Qwen3vlMerger) {
    c.deepstack.assign(c.n_layers, false);
    for (uint32_t l = 0; l < c.n_layers; ++l)
      c.deepstack[l] = f.find_tensor(name_of(VisionRole::DeepstackFc1W, int(l))) != nullptr;
    uint64_t side = uint64_t(std::sqrt(double(c.n_pos_embd)));
    if (side * side != c.n_pos_embd)
      f.fail(fmt::format("tensor {} has {} rows, not a square grid", pattern(VisionRole::PosEmbd), c.n_pos_embd));
  }
  if (c.type == ProjectorType::Gemma4v) c.std_scale = f.find_tensor(pattern(VisionRole::StdScale)) != nullptr;
}

void check_projector_tensors(const GgufFile& f, const ProjectorConfig& c) {
  for (const VisionTensorSpec& s : projector_tensors(c)) {
    const GgufTensor* t = f.find_tensor(s.name);
    if (!t) {
      if (s.optional) continue;
      f.fail(fmt::format("missing tensor {}", s.name));
    }
    // ggml drops trailing dimensions of 1, so compare with those dropped on both sides.
    std::vector<uint64_t> want = s.ne, have = t->shape();
    while (want.size() > 1 && want.back() == 1) want.pop_back();
    while (have.size() > 1 && have.back() == 1) have.pop_back();
    if (want != have) f.fail(fmt::format("tensor {} has shape {}, expected {}", s.name, shape(have), shape(want)));
  }
}

}  // namespace vkllm
