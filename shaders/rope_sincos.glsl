// sin and cos of an angle in f32, accurate where the GPU's own may not be for large arguments:
// shared by the rotary embeddings (rope_math.glsl, vision_rope.comp).
#ifndef VKLLM_ROPE_SINCOS_GLSL
#define VKLLM_ROPE_SINCOS_GLSL

const float PIO2_HI = 1.5703125;            // 8 significant bits: k * PIO2_HI is exact for k < 2^16
const float PIO2_MID = 4.838267923e-4;      // pi/2 - PIO2_HI, rounded
const float PIO2_LO = 2.563282919e-12;      // the rest

// sin and cos of a: a = k pi/2 + r with |r| <= pi/4, then Cephes' minimax polynomials.
void sin_cos(float a, out float s, out float c) {
  float k = roundEven(a * 0.63661977236758134);
  precise float r = ((a - k * PIO2_HI) - k * PIO2_MID) - k * PIO2_LO;
  float z = r * r;
  float sr = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
  float cr = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
  int q = int(k) & 3;  // quadrant (two's complement keeps this right for negative k)
  s = q == 0 ? sr : q == 1 ? cr : q == 2 ? -sr : -cr;
  c = q == 0 ? cr : q == 1 ? -sr : q == 2 ? -cr : sr;
}

#endif
