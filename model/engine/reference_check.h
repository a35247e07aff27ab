// The bring-up check (VKLLM_CHECK=1, `vkllm logits --check`), as ggml's CHECK_RESULTS: a forward
// on the GPU with its activations tapped, the reference model over the same sequence beside it,
// and the first layer and activation whose NMSE passes the bound named.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "graph/transformer.h"

namespace vkllm {

namespace ref {
class Model;
}

struct CheckReport {
  struct Row {
    int layer;  // -1: before the first layer; the logits row has n_layers
    std::string name;
    double nmse;
  };
  std::vector<Row> rows;  // every activation both sides have, in graph order, then the logits
  int first_bad = -1;     // the first row above the bound; -1 when none is
  double bound = 1e-4;
  std::string summary() const;  // one line naming the first divergence, or the largest NMSE
};

// Compares the taps of a GPU forward of tokens at positions pos0 .. (and its logits of the
// last token) with the reference model's activations over history (every token from position
// 0, the step's included) at the same positions.
CheckReport compare_with_reference(const ref::Model& reference, std::span<const int32_t> history, uint32_t pos0,
                                   const std::vector<Tap>& taps, std::span<const float> last_logits, uint32_t n_layers,
                                   double bound = 1e-4);

}  // namespace vkllm
