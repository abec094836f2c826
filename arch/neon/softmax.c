/* softmax.c — NEON softmax of one row and its backward, bit-identical to the
 * reference: the exp row (neon_exp_row: SLEEF's finz exp 4 lanes at a time,
 * the cutoff a lane select, the canonical 8 lanes in two float32x4_t), then
 * one divide per element; the backward's dot in the 8 lanes, then one vector
 * expression. Same shape as arch/avx2/softmax.c (one __m256 there is two
 * float32x4_t here). ARMv7 divides each lane on the VFP unit (neon_div), and
 * recomputes with the reference what flushed before it is stored
 * (kernels_neon.h, "the flush check"): a quotient cannot flush, every term
 * being +0 or at least exp(NGPT_EXP_CUTOFF) and the sum at most n. */
#include <math.h>
#include <arm_neon.h>

#include "exp_row.h"
#include "kernels_neon.h"

void ngpt_f32_softmax__neon(float *p, const float *s, int n)
{
    const float sum = neon_exp_row(p, s, n, ngpt_row_max(s, n));
    const float32x4_t sv = vdupq_n_f32(sum);
    int j = 0;
    for (; j + 4 <= n; j += 4) vst1q_f32(p + j, neon_div(vld1q_f32(p + j), sv));
    for (; j < n; j++) p[j] = p[j] / sum;
}

/* ds_j for j in [j0, j1) once the dot is known, in scalar. */
static void softmax_bwd_range(float *ds, const float *p, const float *dp, float dot, float scale,
                              int j0, int j1)
{
    for (int j = j0; j < j1; j++) ds[j] = (p[j] * (dp[j] - dot)) * scale;
}

void ngpt_f32_softmax_bwd__neon(float *ds, const float *p, const float *dp, int n, float scale)
{
    neon_flags_clear();
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        lo = vfmaq_f32(lo, vld1q_f32(p + j), vld1q_f32(dp + j));
        hi = vfmaq_f32(hi, vld1q_f32(p + j + 4), vld1q_f32(dp + j + 4));
    }
    if (neon_flushed2(lo, hi)) {    /* nothing is stored yet */
        neon_flags_clear();
        ngpt_f32_softmax_bwd_ref(ds, p, dp, n, scale);
        return;
    }
    float lanes[8];
    vst1q_f32(lanes, lo);
    vst1q_f32(lanes + 4, hi);
    for (int l = 0; j < n; j++, l++) lanes[l] = fmaf(p[j], dp[j], lanes[l]);
    const float dot = ngpt_lanes_combine(lanes);
    const float32x4_t dotv = vdupq_n_f32(dot), sv = vdupq_n_f32(scale);
    j = 0;
    for (; j + 8 <= n; j += 8) {
        const float32x4_t d0 = vmulq_f32(vmulq_f32(vld1q_f32(p + j), vsubq_f32(vld1q_f32(dp + j), dotv)), sv);
        const float32x4_t d1 = vmulq_f32(vmulq_f32(vld1q_f32(p + j + 4), vsubq_f32(vld1q_f32(dp + j + 4), dotv)), sv);
        if (neon_flushed2(d0, d1)) {
            softmax_bwd_range(ds, p, dp, dot, scale, j, j + 8);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(ds + j, d0);
        vst1q_f32(ds + j + 4, d1);
    }
    softmax_bwd_range(ds, p, dp, dot, scale, j, n);
}
