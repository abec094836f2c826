/* rope.c — NEON RoPE forward and backward (the transposed rotation): the
 * reference's products and sums per element (no fma). */
#include <arm_neon.h>

#include "kernels_neon.h"

/* Pairs (x_2i, x_2i+1) deinterleaved by vld2q: 4 pairs per step. */
static void rotate(float *x, int heads, int dim, const float *cos_t, const float *sin_t,
                   bool backward)
{
    const int half = dim / 2;
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * (size_t)dim;
        int i = 0;
        for (; i + 4 <= half; i += 4) {
            float32x4x2_t ab = vld2q_f32(v + 2 * i);
            const float32x4_t a = ab.val[0], b = ab.val[1];
            const float32x4_t c = vld1q_f32(cos_t + i), s = vld1q_f32(sin_t + i);
            if (!backward) {
                ab.val[0] = vsubq_f32(vmulq_f32(a, c), vmulq_f32(b, s));
                ab.val[1] = vaddq_f32(vmulq_f32(a, s), vmulq_f32(b, c));
            } else {
                ab.val[0] = vaddq_f32(vmulq_f32(a, c), vmulq_f32(b, s));
                ab.val[1] = vsubq_f32(vmulq_f32(b, c), vmulq_f32(a, s));
            }
            vst2q_f32(v + 2 * i, ab);
        }
        for (; i < half; i++) {
            const float a = v[2 * i], b = v[2 * i + 1], c = cos_t[i], s = sin_t[i];
            if (!backward) {
                v[2 * i] = a * c - b * s;
                v[2 * i + 1] = a * s + b * c;
            } else {
                v[2 * i] = a * c + b * s;
                v[2 * i + 1] = b * c - a * s;
            }
        }
    }
}

void ngpt_f32_rope__neon(float *x, int heads, int dim, const float *cos_t, const float *sin_t)
{
    rotate(x, heads, dim, cos_t, sin_t, false);
}

void ngpt_f32_rope_bwd__neon(float *g, int heads, int dim, const float *cos_t,
                             const float *sin_t)
{
    rotate(g, heads, dim, cos_t, sin_t, true);
}
