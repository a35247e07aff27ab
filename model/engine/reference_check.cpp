// Matching the GPU's taps with the reference model's activations by (layer, name), rows of the
// step's positions only, in the order the graph computed them.
#include "engine/reference_check.h"

#include <fmt/format.h>
#include <map>

#include "error.h"
#include "reference/model.h"

namespace vkllm {

namespace {

double nmse(std::span<const float> got, std::span<const float> want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = double(got[i]) - want[i];
    num += d * d, den += double(want[i]) * want[i];
  }
  if (!std::isfinite(num)) return INFINITY;
  return den > 0 ? num / den : num;
}

}  // namespace

std::string CheckReport::summary() const {
  auto where = [](const Row& r) {
    return r.layer < 0 ? fmt::format("{} (before layer 0)", r.name) : fmt::format("layer {} {}", r.layer, r.name);
  };
  if (first_bad >= 0) {
    const Row& r = rows[first_bad];
    return fmt::format("check: the GPU diverges from the reference first at {}: nmse {:.3e} > {:.0e}", where(r), r.nmse,
                       bound);
  }
  if (rows.empty()) return "check: nothing to compare";
  const Row* worst = &rows[0];
  for (const Row& r : rows)
    if (r.nmse > worst->nmse) worst = &r;
  return fmt::format("check: the GPU matches the reference ({} activations; largest nmse {:.3e} at {})", rows.size(),
                     worst->nmse, where(*worst));
}

CheckReport compare_with_reference(const ref::Model& reference, std::span<const int32_t> history, uint32_t pos0,
                                   const std::vector<Tap>& taps, std::span<const float> last_logits, uint32_t n_layers,
                                   double bound) {
  std::map<std::pair<int, std::string>, const Tap*> gpu;
  for (const Tap& t : taps) gpu[{t.layer, t.name}] = &t;
  CheckReport report{.bound = bound};
  auto add = [&](int layer, std::string name, double v) {
    if (report.first_bad < 0 && !(v <= bound)) report.first_bad = int(report.rows.size());
    report.rows.push_back({layer, std::move(name), v});
  };
  ref::TapFn tap = [&](int layer, std::string_view name, std::span<const float> values, size_t width) {
    auto it = gpu.find({layer, std::string(name)});
    if (it == gpu.end()) return;
    const Tap& g = *it->second;
    ENSURE(g.width == width && values.size() >= (pos0 + size_t(g.rows)) * width,
           fmt::format("check: {} has {} values per token on the GPU, {} in the reference", name, g.width, width));
    add(layer, std::string(name), nmse(g.values, values.subspan(pos0 * width, size_t(g.rows) * width)));
  };
  std::vector<float> logits = reference.forward(history, tap);
  size_t vocab = last_logits.size();
  add(int(n_layers), "logits", nmse(last_logits, std::span<const float>(logits).last(vocab)));
  return report;
}

}  // namespace vkllm
