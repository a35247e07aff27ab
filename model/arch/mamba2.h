// What the Mamba-2 hybrids share (nemotron_h, nemotron_h_moe, granitehybrid; docs/formats.md §15):
// the ssm.* keys, their checks and the Mamba-2 mixer's tensor names.
#pragma once
#include <cstdint>

namespace vkllm {

class GgufFile;
class GgufWriter;
class TensorCatalogue;
struct KeyPrefix;
struct ModelConfig;

// ssm.{conv_kernel, inner_size, state_size, time_step_rank, group_count} into c.ssm.
void read_mamba2(const GgufFile& f, const KeyPrefix& k, ModelConfig& c);
void write_mamba2(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);
// Checks the Mamba-2 shape where some block is a Mamba-2 mixer; throws vkllm::Error.
void validate_mamba2(const ModelConfig& c);
// Block l's Mamba-2 mixer: ssm_in (z | xBC | dt), ssm_conv1d and its bias (llama.cpp's loader calls
// the bias optional, but its graph adds it unconditionally, so a file without one cannot run
// there), ssm_dt.bias, ssm_a, ssm_d, ssm_norm (grouped), ssm_out. The block's norm (attn_norm) is
// the caller's.
void add_mamba2_mixer(const ModelConfig& c, uint32_t l, TensorCatalogue& t);

}  // namespace vkllm
