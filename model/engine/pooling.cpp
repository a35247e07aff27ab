// Pooling names, the refusals of none and rank, and llama.cpp's normalisations.
#include "engine/pooling.h"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cmath>

#include "error.h"

namespace vkllm {

namespace {

constexpr std::string_view kPoolingNames[] = {"none", "mean", "cls", "last", "rank"};

}  // namespace

std::string_view to_string(Pooling p) {
  int i = int(p);
  return i >= 0 && i < int(std::size(kPoolingNames)) ? kPoolingNames[i] : "unspecified";
}

std::optional<Pooling> pooling_named(std::string_view name) {
  for (size_t i = 0; i < std::size(kPoolingNames); ++i)
    if (kPoolingNames[i] == name) return Pooling(i);
  return std::nullopt;
}

std::string pooling_refusal(Pooling p) {
  if (p == Pooling::None)
    return "pooling none gives a vector per token, which vkllm does not return: use --pooling mean, cls or last";
  if (p == Pooling::Rank)
    return "pooling rank is a reranker's score, not an embedding: use --pooling mean, cls or last";
  return "";
}

Pooling embedding_pooling(const ModelConfig& c, Pooling requested) {
  Pooling p = requested != Pooling::Unspecified ? requested : c.pooling;
  if (p == Pooling::Unspecified) p = Pooling::Last;
  std::string refusal = pooling_refusal(p);
  ENSURE(refusal.empty(), refusal);
  return p;
}

double json_float(float x) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, x);
  double d = 0;
  std::from_chars(text, end, d);
  return d;
}

void normalize_embedding(std::span<float> v, int mode) {
  ENSURE(valid_normalization(mode), fmt::format("embedding normalisation {} is not -1, 0, 1, 2 or more", mode));
  double sum = 0;
  if (mode == -1) {
    sum = 1;
  } else if (mode == 0) {
    for (float x : v) sum = std::max(sum, double(std::abs(x)));
    sum /= 32760.0;  // llama.cpp's int16 range
  } else if (mode == 2) {
    for (float x : v) sum += double(x) * x;
    sum = std::sqrt(sum);
  } else {
    for (float x : v) sum += std::pow(std::abs(double(x)), mode);
    sum = std::pow(sum, 1.0 / mode);
  }
  float scale = sum > 0 ? float(1 / sum) : 0.0f;
  for (float& x : v) x *= scale;
}

}  // namespace vkllm
