/* exp_row.h — the exp row NEON's softmax and cross-entropy share
 * (softmax.c, cross_entropy.c): each term exp(s_j - max) and their
 * canonical sum, 8 lanes in two float32x4_t. */
#ifndef NGPT_NEON_EXP_ROW_H
#define NGPT_NEON_EXP_ROW_H

#include "kernels_neon.h"
#include "ref/softmax.h"

/* ngpt_exp_term of 4 lanes: SLEEF's vector finz exp, the cutoff a lane
 * select. */
static inline float32x4_t neon_exp_term(float32x4_t d)
{
    const uint32x4_t below = vcltq_f32(d, vdupq_n_f32(NGPT_EXP_CUTOFF));
    return vbslq_f32(below, vdupq_n_f32(0.0f), neon_expf(d));
}

/* e_j = exp term of s_j - max, stored to e when e != NULL (e may alias s);
 * returns their canonical sum (lanes 0-3 and 4-7 in two float32x4_t). A
 * block of 8 terms that flushed is recomputed by ngpt_exp_term before it is
 * stored. The sums cannot flush: every term is +0 or at least
 * exp(NGPT_EXP_CUTOFF), far above the subnormals. */
static inline float neon_exp_row(float *e, const float *s, int n, float mx)
{
    neon_flags_clear();
    const float32x4_t m = vdupq_n_f32(mx);
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        float32x4_t e0 = neon_exp_term(vsubq_f32(vld1q_f32(s + j), m));
        float32x4_t e1 = neon_exp_term(vsubq_f32(vld1q_f32(s + j + 4), m));
        if (neon_flushed2(e0, e1)) {
            float t[8];
            for (int l = 0; l < 8; l++) t[l] = ngpt_exp_term(s[j + l] - mx);
            e0 = vld1q_f32(t), e1 = vld1q_f32(t + 4);
            neon_flags_clear();
        }
        if (e) {
            vst1q_f32(e + j, e0);
            vst1q_f32(e + j + 4, e1);
        }
        lo = vaddq_f32(lo, e0);
        hi = vaddq_f32(hi, e1);
    }
    float lanes[NGPT_LANES];
    vst1q_f32(lanes, lo);
    vst1q_f32(lanes + 4, hi);
    for (int l = 0; j < n; j++, l++) {
        const float t = ngpt_exp_term(s[j] - mx);
        if (e) e[j] = t;
        lanes[l] = lanes[l] + t;
    }
    return ngpt_lanes_combine(lanes);
}

#endif
