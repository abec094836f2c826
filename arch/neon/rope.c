/* rope.c — NEON RoPE forward and backward (the transposed rotation),
 * bit-identical to the reference: the same products and sums per element
 * (no fma), operands in the reference's order; 4 pairs a step,
 * deinterleaved by vld2q_f32 into a and b vectors; the loop over heads and
 * the pairs left to the reference are arch/rope.h, shared with
 * arch/avx2/rope.c, which keeps the pairs interleaved. ARMv7: 4 pairs that
 * flushed are rotated by the reference before they are stored
 * (kernels_neon.h, "the flush check"). */
#include <arm_neon.h>

#include "kernels_neon.h"
#include "../rope.h"

/* Pairs (v_2i, v_2i+1) deinterleaved by vld2q into a and b. */
static inline void rotate4(float *v, const float *cos_t, const float *sin_t, bool backward)
{
    float32x4x2_t ab = vld2q_f32(v);
    const float32x4_t a = ab.val[0], b = ab.val[1];
    const float32x4_t c = vld1q_f32(cos_t), s = vld1q_f32(sin_t);
    if (!backward) {
        ab.val[0] = vsubq_f32(vmulq_f32(a, c), vmulq_f32(b, s));
        ab.val[1] = vaddq_f32(vmulq_f32(a, s), vmulq_f32(b, c));
    } else {
        ab.val[0] = vaddq_f32(vmulq_f32(a, c), vmulq_f32(b, s));
        ab.val[1] = vsubq_f32(vmulq_f32(b, c), vmulq_f32(a, s));
    }
    if (neon_flushed2(ab.val[0], ab.val[1])) {
        if (backward)
            ngpt_f32_rope_bwd_ref(v, 1, 8, cos_t, sin_t);
        else
            ngpt_f32_rope_ref(v, 1, 8, cos_t, sin_t);
        neon_flags_clear();
        return;
    }
    vst2q_f32(v, ab);
}

void ngpt_f32_rope__neon(float *x, int heads, int dim, const float *cos_t, const float *sin_t)
{
    neon_flags_clear();
    ngpt_rope_by4(x, heads, dim, cos_t, sin_t, false, rotate4);
}

void ngpt_f32_rope_bwd__neon(float *g, int heads, int dim, const float *cos_t,
                             const float *sin_t)
{
    neon_flags_clear();
    ngpt_rope_by4(g, heads, dim, cos_t, sin_t, true, rotate4);
}

/* Pairs i0..half-1 of one head on halves, in scalar (the reference's
 * expressions). */
static void halves_scalar(float *v, int half, int i0, const float *cos_t, const float *sin_t,
                          bool backward)
{
    for (int i = i0; i < half; i++) {
        const float a = v[i], b = v[i + half], c = cos_t[i], s = sin_t[i];
        v[i] = backward ? a * c + b * s : a * c - b * s;
        v[i + half] = backward ? b * c - a * s : a * s + b * c;
    }
}

/* Halves (rope_pairs=halves): x_i and x_i+dim/2 are 4 consecutive floats
 * each; 4 pairs that flushed (ARMv7) are rotated in scalar before they are
 * stored. */
static void rope_halves(float *x, int heads, int dim, const float *cos_t, const float *sin_t,
                        bool backward)
{
    const int half = dim / 2;
    neon_flags_clear();
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * (size_t)dim;
        int i = 0;
        for (; i + 4 <= half; i += 4) {
            const float32x4_t a = vld1q_f32(v + i), b = vld1q_f32(v + i + half);
            const float32x4_t c = vld1q_f32(cos_t + i), s = vld1q_f32(sin_t + i);
            float32x4_t lo, hi;
            if (backward) {
                lo = vaddq_f32(vmulq_f32(a, c), vmulq_f32(b, s));
                hi = vsubq_f32(vmulq_f32(b, c), vmulq_f32(a, s));
            } else {
                lo = vsubq_f32(vmulq_f32(a, c), vmulq_f32(b, s));
                hi = vaddq_f32(vmulq_f32(a, s), vmulq_f32(b, c));
            }
            if (neon_flushed2(lo, hi)) {
                float t[8];
                for (int k = 0; k < 4; k++) t[k] = v[i + k], t[4 + k] = v[i + half + k];
                halves_scalar(t, 4, 0, cos_t + i, sin_t + i, backward);
                for (int k = 0; k < 4; k++) v[i + k] = t[k], v[i + half + k] = t[4 + k];
                neon_flags_clear();
                continue;
            }
            vst1q_f32(v + i, lo);
            vst1q_f32(v + i + half, hi);
        }
        halves_scalar(v, half, i, cos_t, sin_t, backward);
    }
}

void ngpt_f32_rope_halves__neon(float *x, int heads, int dim, const float *cos_t,
                                const float *sin_t)
{
    rope_halves(x, heads, dim, cos_t, sin_t, false);
}

void ngpt_f32_rope_halves_bwd__neon(float *g, int heads, int dim, const float *cos_t,
                                    const float *sin_t)
{
    rope_halves(g, heads, dim, cos_t, sin_t, true);
}
