/* kernels_neon.h — what the NEON kernels (AArch64, and ARMv7 NEON-VFPv4)
 * share: their prototypes and the helpers more than one op file uses. Each
 * kernel matches its reference in src/ref/ bit for bit (contract: src/kernels.inc). */
#ifndef NGPT_KERNELS_NEON_H
#define NGPT_KERNELS_NEON_H

#include <arm_neon.h>
#include <sleef.h>

#include "kernels.h"
#include "ref/softmax.h"

/* The prototypes of the kernels the list's neon column marks SIMD or A64
 * (arch/neon/table.c says which this target runs). */
#define NEON_PROTO_SIMD SIMD
#define NEON_PROTO_A64 SIMD
#define NEON_PROTO_REF REF
#define NGPT_KERNEL(kernel, op, ret, params, avx2_flag, neon_flag, ...) \
    NGPT_ISA_PROTO(kernel, neon, NEON_PROTO_##neon_flag, ret, params)
#include "kernels.inc"

/* ---- softmax and cross-entropy (softmax.c, cross_entropy.c) ---- */
#if defined(__aarch64__)
/* ngpt_exp_term of 4 lanes: SLEEF's vector finz exp (the bits of the scalar
 * one), the cutoff a lane select. */
static inline float32x4_t neon_exp_term(float32x4_t d)
{
    const uint32x4_t below = vcltq_f32(d, vdupq_n_f32(NGPT_EXP_CUTOFF));
    return vbslq_f32(below, vdupq_n_f32(0.0f), Sleef_finz_expf4_u10advsimd(d));
}

/* e_j = exp term of s_j - max, stored to e when e != NULL; returns their
 * canonical sum (lanes 0-3 and 4-7 in two float32x4_t). */
static inline float neon_exp_row(float *e, const float *s, int n, float mx)
{
    const float32x4_t m = vdupq_n_f32(mx);
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const float32x4_t e0 = neon_exp_term(vsubq_f32(vld1q_f32(s + j), m));
        const float32x4_t e1 = neon_exp_term(vsubq_f32(vld1q_f32(s + j + 4), m));
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

#endif
