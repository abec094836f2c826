/* kernels_neon.h — what the NEON kernels (AArch64, and ARMv7 NEON-VFPv4)
 * share: their prototypes and the helpers more than one op file uses. Each
 * kernel matches its reference in src/ref/ bit for bit (spec: src/kernels.h). */
#ifndef NGPT_KERNELS_NEON_H
#define NGPT_KERNELS_NEON_H

#include <arm_neon.h>
#include <sleef.h>

#include "kernels.h"
#include "ref/softmax.h"

void ngpt_f32_gemm__neon(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate);
void ngpt_f32_attn_scores__neon(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                                int n, int dim, float scale);
void ngpt_f32_attn_wsum__neon(float *o, const float *p, const float *v, ptrdiff_t v_stride,
                              int n, int dim);
void ngpt_f32_add__neon(float *y, const float *a, const float *b, size_t n);
void ngpt_f32_rope__neon(float *x, int heads, int dim, const float *cos_t, const float *sin_t);
void ngpt_f32_rope_bwd__neon(float *g, int heads, int dim, const float *cos_t,
                             const float *sin_t);
void ngpt_f32_outer_acc__neon(float *out, ptrdiff_t out_stride, const float *w, const float *x,
                              int n, int dim);
void ngpt_f32_colsum_acc__neon(float *db, const float *dy, size_t rows, int n);
float ngpt_f32_rsum__neon(const float *x, size_t n);
float ngpt_f32_sumsq__neon(const float *x, size_t n);
void ngpt_f32_softmax_bwd__neon(float *ds, const float *p, const float *dp, int n, float scale);
void ngpt_f32_layernorm_fwd__neon(float *out, float *mean, float *rstd, const float *x,
                                  const float *w, const float *b, size_t rows, int c);
void ngpt_f32_layernorm_bwd__neon(float *dx, float *dw, float *db, const float *dy,
                                  const float *x, const float *mean, const float *rstd,
                                  const float *w, size_t rows, int c);
/* AArch64 only (vector divide, SLEEF advsimd) */
void ngpt_f32_gelu_fwd__neon(float *y, const float *x, size_t n);
void ngpt_f32_gelu_bwd__neon(float *dx, const float *x, const float *dy, size_t n);
void ngpt_f32_softmax__neon(float *p, const float *s, int n);
float ngpt_f32_xent__neon(const float *logits, int n, int target);
void ngpt_f32_xent_bwd__neon(float *dlogits, const float *logits, int n, int target, float scale);
void ngpt_f32_adamw__neon(float *p, const float *grad, float *m, float *v, size_t n,
                          const ngpt_adamw_coef *c);

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
static inline float neon_exp_sum(float *e, const float *s, int n, float mx)
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
