/* softmax.c — NEON softmax of one row and its backward, bit-identical to the
 * reference: the exp row (neon_exp_row: SLEEF's advsimd finz exp, the
 * cutoff a lane select, the canonical 8 lanes in two float32x4_t), then one
 * divide per element; the backward's dot in the 8 lanes, then one vector
 * expression. Same shape as arch/avx2/softmax.c (one __m256 there is two
 * float32x4_t here). The forward needs vdivq_f32 and SLEEF's advsimd
 * functions: AArch64 only (the list's A64). */
#include <math.h>
#include <arm_neon.h>

#include "kernels_neon.h"

#if defined(__aarch64__)
void ngpt_f32_softmax__neon(float *p, const float *s, int n)
{
    const float sum = neon_exp_row(p, s, n, ngpt_row_max(s, n));
    const float32x4_t sv = vdupq_n_f32(sum);
    int j = 0;
    for (; j + 4 <= n; j += 4) vst1q_f32(p + j, vdivq_f32(vld1q_f32(p + j), sv));
    for (; j < n; j++) p[j] = p[j] / sum;
}
#endif

void ngpt_f32_softmax_bwd__neon(float *ds, const float *p, const float *dp, int n, float scale)
{
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        lo = vfmaq_f32(lo, vld1q_f32(p + j), vld1q_f32(dp + j));
        hi = vfmaq_f32(hi, vld1q_f32(p + j + 4), vld1q_f32(dp + j + 4));
    }
    float lanes[8];
    vst1q_f32(lanes, lo);
    vst1q_f32(lanes + 4, hi);
    for (int l = 0; j < n; j++, l++) lanes[l] = fmaf(p[j], dp[j], lanes[l]);
    const float dot = ngpt_lanes_combine(lanes);
    const float32x4_t dotv = vdupq_n_f32(dot), sv = vdupq_n_f32(scale);
    j = 0;
    for (; j + 4 <= n; j += 4) {
        const float32x4_t pj = vld1q_f32(p + j), dj = vld1q_f32(dp + j);
        vst1q_f32(ds + j, vmulq_f32(vmulq_f32(pj, vsubq_f32(dj, dotv)), sv));
    }
    for (; j < n; j++) ds[j] = (p[j] * (dp[j] - dot)) * scale;
}
