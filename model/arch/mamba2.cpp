// The keys, checks and tensor names of the Mamba-2 mixer (docs/formats.md §15; llama.cpp's
// src/models/nemotron-h.cpp and granite-hybrid.cpp load_arch_hparams / load_arch_tensors).
#include "arch/mamba2.h"

#include <fmt/format.h>

#include "arch/keys.h"
#include "arch/model_config.h"
#include "arch/tensors.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

void read_mamba2(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  Mamba2Config& m = c.ssm;
  m.conv_kernel = read_u32(f, k("ssm.conv_kernel"));
  m.inner = read_u32(f, k("ssm.inner_size"));
  m.state = read_u32(f, k("ssm.state_size"));
  m.heads = read_u32(f, k("ssm.time_step_rank"));
  m.groups = read_u32(f, k("ssm.group_count"));
}

void write_mamba2(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  const Mamba2Config& m = c.ssm;
  w.add(k("ssm.conv_kernel"), m.conv_kernel);
  w.add(k("ssm.inner_size"), m.inner);
  w.add(k("ssm.state_size"), m.state);
  w.add(k("ssm.time_step_rank"), m.heads);
  w.add(k("ssm.group_count"), m.groups);
}

void validate_mamba2(const ModelConfig& c) {
  if (!c.has_mixer(Mixer::Mamba2)) return;
  const Mamba2Config& m = c.ssm;
  ENSURE(m.conv_kernel >= 2 && m.conv_kernel <= 8,
         fmt::format("ssm.conv_kernel = {} is out of range (2..8)", m.conv_kernel));
  ENSURE(m.state >= 4 && m.state <= 256 && m.state % 4 == 0,
         fmt::format("ssm.state_size = {} must be a multiple of 4 from 4 to 256", m.state));
  ENSURE(m.heads >= 1 && m.inner % m.heads == 0 && m.inner / m.heads <= 4096,
         fmt::format("ssm.inner_size = {} does not split into ssm.time_step_rank = {} heads", m.inner, m.heads));
  ENSURE(m.groups >= 1 && m.heads % m.groups == 0,
         fmt::format("{} Mamba-2 heads cannot share {} groups (ssm.group_count) evenly", m.heads, m.groups));
  ENSURE(uint64_t(m.inner) * m.state <= (1ull << 28), "the Mamba-2 state is too large");
}

void add_mamba2_mixer(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  const Mamba2Config& m = c.ssm;
  uint64_t E = c.dim, D = m.inner, H = m.heads, C = m.conv_channels(), G = m.groups;
  t.add(l, TensorRole::SsmIn, "ssm_in.weight", {E, 2 * D + 2 * uint64_t(G) * m.state + H});
  t.add(l, TensorRole::SsmConv, "ssm_conv1d.weight", {m.conv_kernel, C});
  t.add(l, TensorRole::SsmConvBias, "ssm_conv1d.bias", {C});
  t.add(l, TensorRole::SsmDt, "ssm_dt.bias", {H});
  t.add(l, TensorRole::SsmA, "ssm_a", {1, H});
  t.add(l, TensorRole::SsmD, "ssm_d", {1, H});
  t.add(l, TensorRole::SsmNorm, "ssm_norm.weight", {D / G, G});
  t.add(l, TensorRole::SsmOut, "ssm_out.weight", {D, E});
}

}  // namespace vkllm
