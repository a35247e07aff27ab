#version 450
#extension GL_GOOGLE_include_directive : require
// The vision encoders' position embeddings, added in place to the patch embeddings x (n_tokens, n)
// (push_vision.h VisionPositionsPush): a learned row per patch (gemma3), a square table resized to
// the patch grid bilinearly with aligned corners as ggml_interpolate does it (qwen3vl_merger), or a
// column table plus a row table (gemma4v). One thread per value.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Table { float table[]; };
layout(std430, binding = 1) readonly buffer Pos { int pos[]; };  // rows (n_tokens) then columns (n_tokens)
layout(std430, binding = 2) buffer X { float x[]; };
layout(push_constant) uniform PushBlock { VisionPositionsPush p; };

float at(uint tx, uint ty, uint c) { return table[(ty * p.side + tx) * p.n + c]; }

void main() {
  uint i = thread_index(WG);
  if (i >= p.n_tokens * p.n) return;
  uint t = i / p.n, c = i % p.n;
  uint row = uint(pos[t]), col = uint(pos[p.n_tokens + t]);
  float e;
  if (p.mode == 0u) {
    e = table[(row * p.px + col) * p.n + c];
  } else if (p.mode == 1u) {
    float fy = float(row) / p.sy, fx = float(col) / p.sx;
    int last = int(p.side) - 1;
    int y0 = clamp(int(floor(fy)), 0, last), x0 = clamp(int(floor(fx)), 0, last);
    int y1 = clamp(y0 + 1, 0, last), x1 = clamp(x0 + 1, 0, last);
    float dy = clamp(fy - float(y0), 0.0, 1.0), dx = clamp(fx - float(x0), 0.0, 1.0);
    e = at(x0, y0, c) * (1.0 - dx) * (1.0 - dy) + at(x1, y0, c) * dx * (1.0 - dy) + at(x0, y1, c) * (1.0 - dx) * dy +
        at(x1, y1, c) * dx * dy;
  } else {
    e = table[col * p.n + c] + table[(p.n_pos + row) * p.n + c];
  }
  x[i] += e;
}
