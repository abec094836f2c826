/* rope.c — reference RoPE on interleaved pairs, on halves (rope_pairs=halves),
 * and their transposes (the backward): plain products and sums, no fma. */
#include "../kernels.h"

void ngpt_f32_rope_ref(float *x, int heads, int dim, const float *cos_t, const float *sin_t)
{
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * (size_t)dim;
        for (int i = 0; i < dim / 2; i++) {
            float a = v[2 * i], b = v[2 * i + 1], c = cos_t[i], s = sin_t[i];
            v[2 * i] = a * c - b * s;
            v[2 * i + 1] = a * s + b * c;
        }
    }
}

void ngpt_f32_rope_bwd_ref(float *g, int heads, int dim, const float *cos_t, const float *sin_t)
{
    for (int h = 0; h < heads; h++) {
        float *v = g + (size_t)h * (size_t)dim;
        for (int i = 0; i < dim / 2; i++) {
            float a = v[2 * i], b = v[2 * i + 1], c = cos_t[i], s = sin_t[i];
            v[2 * i] = a * c + b * s;
            v[2 * i + 1] = b * c - a * s;
        }
    }
}

void ngpt_f32_rope_halves_ref(float *x, int heads, int dim, const float *cos_t, const float *sin_t)
{
    const int half = dim / 2;
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * (size_t)dim;
        for (int i = 0; i < half; i++) {
            float a = v[i], b = v[i + half], c = cos_t[i], s = sin_t[i];
            v[i] = a * c - b * s;
            v[i + half] = a * s + b * c;
        }
    }
}

void ngpt_f32_rope_halves_bwd_ref(float *g, int heads, int dim, const float *cos_t,
                                  const float *sin_t)
{
    const int half = dim / 2;
    for (int h = 0; h < heads; h++) {
        float *v = g + (size_t)h * (size_t)dim;
        for (int i = 0; i < half; i++) {
            float a = v[i], b = v[i + half], c = cos_t[i], s = sin_t[i];
            v[i] = a * c + b * s;
            v[i + half] = b * c - a * s;
        }
    }
}
