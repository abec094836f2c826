/* reduce.c — NEON canonical 8-lane row sums: lanes 0-3 and 4-7 are two
 * float32x4_t accumulators over 8-element blocks, the tail goes to its lanes
 * one element at a time, then the reference tree combines them. */
#include <math.h>
#include <arm_neon.h>

#include "kernels_neon.h"


float ngpt_f32_rsum__neon(const float *x, size_t n)
{
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        lo = vaddq_f32(lo, vld1q_f32(x + i));
        hi = vaddq_f32(hi, vld1q_f32(x + i + 4));
    }
    float p[8];
    vst1q_f32(p, lo);
    vst1q_f32(p + 4, hi);
    for (size_t l = 0; i < n; i++, l++) p[l] = p[l] + x[i];
    return ngpt_lanes_combine(p);
}

float ngpt_f32_sumsq__neon(const float *x, size_t n)
{
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t a = vld1q_f32(x + i), b = vld1q_f32(x + i + 4);
        lo = vfmaq_f32(lo, a, a);
        hi = vfmaq_f32(hi, b, b);
    }
    float p[8];
    vst1q_f32(p, lo);
    vst1q_f32(p + 4, hi);
    for (size_t l = 0; i < n; i++, l++) p[l] = fmaf(x[i], x[i], p[l]);
    return ngpt_lanes_combine(p);
}

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
