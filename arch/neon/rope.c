/* rope.c — NEON RoPE forward and backward (the transposed rotation),
 * bit-identical to the reference: the same products and sums per element
 * (no fma), operands in the reference's order; 4 pairs a step,
 * deinterleaved by vld2q_f32 into a and b vectors; the loop over heads and
 * the pairs left to the reference are arch/rope.h, shared with
 * arch/avx2/rope.c, which keeps the pairs interleaved. */
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
    vst2q_f32(v, ab);
}

void ngpt_f32_rope__neon(float *x, int heads, int dim, const float *cos_t, const float *sin_t)
{
    ngpt_rope_by4(x, heads, dim, cos_t, sin_t, false, rotate4);
}

void ngpt_f32_rope_bwd__neon(float *g, int heads, int dim, const float *cos_t,
                             const float *sin_t)
{
    ngpt_rope_by4(g, heads, dim, cos_t, sin_t, true, rotate4);
}
