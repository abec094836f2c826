/* gelu.c — NEON GELU forward, forward with derivative, backward product,
 * and the tanh form (gelu=tanh), bit-identical to the reference: the same
 * operations per element in the same order, erf/exp/tanh from SLEEF's finz
 * vector functions (neon_erff, neon_expf, neon_tanhf: the bits of the scalar
 * finz ones the reference calls); 4 elements a block (gelu_bwd: 8), the tail
 * runs the reference. Same shape as arch/avx2/gelu.c. ARMv7: a block that flushed
 * (a tiny or very large x, whose erf or exp meets a subnormal inside SLEEF)
 * is recomputed by the reference before it is stored (kernels_neon.h, "the
 * flush check"). */
#include <math.h>
#include <arm_neon.h>
#include <sleef.h>

#include "kernels_neon.h"

static const float RSQRT2 = 0.70710678118654752f, RSQRT2PI = 0.39894228040143268f;

/* GELU of 4 elements a block, x read again after the erf call (NEON_ORDER:
 * SLEEF's functions are const, so the compiler would keep it in a register,
 * which the call clobbers, on the stack): nothing lives across the call. */
void ngpt_f32_gelu_fwd__neon(float *y, const float *x, size_t n)
{
    const float32x4_t half = vdupq_n_f32(0.5f), one = vdupq_n_f32(1.0f), k = vdupq_n_f32(RSQRT2);
    neon_flags_clear();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t e = neon_erff(vmulq_f32(vld1q_f32(x + i), k));
        NEON_ORDER();
        const float32x4_t yi = vmulq_f32(vmulq_f32(half, vld1q_f32(x + i)), vaddq_f32(one, e));
        if (neon_flushed1(yi)) {
            ngpt_f32_gelu_fwd_ref(y + i, x + i, 4);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(y + i, yi);
    }
    ngpt_f32_gelu_fwd_ref(y + i, x + i, n - i);
}

/* GELU and its derivative, 4 elements a block: exp first, then erf, x read
 * again after each call, so that only pdf lives across a call (on the
 * stack on AArch64, whose calling convention keeps no 128-bit register). */
void ngpt_f32_gelu_fwd_grad__neon(float *y, float *g, const float *x, size_t n)
{
    const float32x4_t half = vdupq_n_f32(0.5f), mhalf = vdupq_n_f32(-0.5f),
                      one = vdupq_n_f32(1.0f), k = vdupq_n_f32(RSQRT2), kp = vdupq_n_f32(RSQRT2PI);
    neon_flags_clear();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        const float32x4_t pdf = vmulq_f32(neon_expf(vmulq_f32(vmulq_f32(mhalf, v), v)), kp);
        NEON_ORDER();
        v = vld1q_f32(x + i);
        const float32x4_t e = neon_erff(vmulq_f32(v, k));
        NEON_ORDER();
        v = vld1q_f32(x + i);
        const float32x4_t e1 = vaddq_f32(one, e);
        const float32x4_t yi = vmulq_f32(vmulq_f32(half, v), e1);
        const float32x4_t gi = vfmaq_f32(vmulq_f32(half, e1), v, pdf);
        if (neon_flushed2(yi, gi)) {
            ngpt_f32_gelu_fwd_grad_ref(y + i, g + i, x + i, 4);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(y + i, yi);
        vst1q_f32(g + i, gi);
    }
    ngpt_f32_gelu_fwd_grad_ref(y + i, g + i, x + i, n - i);
}

void ngpt_f32_gelu_bwd__neon(float *dx, const float *g, const float *dy, size_t n)
{
    neon_flags_clear();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t d0 = vmulq_f32(vld1q_f32(dy + i), vld1q_f32(g + i));
        const float32x4_t d1 = vmulq_f32(vld1q_f32(dy + i + 4), vld1q_f32(g + i + 4));
        if (neon_flushed2(d0, d1)) {
            ngpt_f32_gelu_bwd_ref(dx + i, g + i, dy + i, 8);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(dx + i, d0);
        vst1q_f32(dx + i + 4, d1);
    }
    ngpt_f32_gelu_bwd_ref(dx + i, g + i, dy + i, n - i);
}

/* The tanh form (gelu=tanh): tanh's argument u of 4 elements. */
static inline float32x4_t tanh_arg(float32x4_t v)
{
    const float32x4_t cube = vmulq_f32(vmulq_f32(v, v), v);
    return vmulq_f32(vdupq_n_f32(0.7978845608028654f),
                     vaddq_f32(v, vmulq_f32(vdupq_n_f32(0.044715f), cube)));
}

/* 4 elements a block, x read again after the tanh call (as gelu_fwd). */
void ngpt_f32_gelu_tanh_fwd__neon(float *y, const float *x, size_t n)
{
    const float32x4_t half = vdupq_n_f32(0.5f), one = vdupq_n_f32(1.0f);
    neon_flags_clear();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t t = neon_tanhf(tanh_arg(vld1q_f32(x + i)));
        NEON_ORDER();
        const float32x4_t yi = vmulq_f32(vmulq_f32(half, vld1q_f32(x + i)), vaddq_f32(one, t));
        if (neon_flushed1(yi)) {
            ngpt_f32_gelu_tanh_fwd_ref(y + i, x + i, 4);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(y + i, yi);
    }
    ngpt_f32_gelu_tanh_fwd_ref(y + i, x + i, n - i);
}

void ngpt_f32_gelu_tanh_fwd_grad__neon(float *y, float *g, const float *x, size_t n)
{
    const float32x4_t half = vdupq_n_f32(0.5f), one = vdupq_n_f32(1.0f);
    const float32x4_t k = vdupq_n_f32(0.7978845608028654f), c3 = vdupq_n_f32(0.134145f);
    const float32x4_t lo = vdupq_n_f32(-10.0f), hi = vdupq_n_f32(10.0f);
    neon_flags_clear();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t t = neon_tanhf(tanh_arg(vld1q_f32(x + i)));
        NEON_ORDER();
        const float32x4_t v = vld1q_f32(x + i);
        const float32x4_t cl = vminq_f32(vmaxq_f32(v, lo), hi);
        const float32x4_t du = vmulq_f32(k, vfmaq_f32(one, c3, vmulq_f32(cl, cl)));
        const float32x4_t hv = vmulq_f32(half, v), t1 = vaddq_f32(one, t);
        const float32x4_t sech2 = vfmsq_f32(one, t, t);
        const float32x4_t yi = vmulq_f32(hv, t1);
        const float32x4_t gi = vfmaq_f32(vmulq_f32(half, t1), vmulq_f32(hv, sech2), du);
        if (neon_flushed2(yi, gi)) {
            ngpt_f32_gelu_tanh_fwd_grad_ref(y + i, g + i, x + i, 4);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(y + i, yi);
        vst1q_f32(g + i, gi);
    }
    ngpt_f32_gelu_tanh_fwd_grad_ref(y + i, g + i, x + i, n - i);
}

/* SwiGLU (mlp=swiglu), 4 lanes: SLEEF's finz vector exp, then the
 * reference's divides (ARMv7: per lane on the VFP unit) and products; the
 * inputs read again after the exp call (as gelu_fwd). */
void ngpt_f32_swiglu_fwd__neon(float *h, const float *g, const float *u, size_t n)
{
    const float32x4_t one = vdupq_n_f32(1.0f);
    neon_flags_clear();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t e = neon_expf(vnegq_f32(vld1q_f32(g + i)));
        NEON_ORDER();
        const float32x4_t s = neon_div(vld1q_f32(g + i), vaddq_f32(one, e));
        const float32x4_t hi = vmulq_f32(s, vld1q_f32(u + i));
        if (neon_flushed2(s, hi)) {
            ngpt_f32_swiglu_fwd_ref(h + i, g + i, u + i, 4);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(h + i, hi);
    }
    ngpt_f32_swiglu_fwd_ref(h + i, g + i, u + i, n - i);
}

void ngpt_f32_swiglu_bwd__neon(float *dg, float *du, const float *dh, const float *g,
                               const float *u, size_t n)
{
    const float32x4_t one = vdupq_n_f32(1.0f);
    neon_flags_clear();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t e = neon_expf(vnegq_f32(vld1q_f32(g + i)));
        NEON_ORDER();
        const float32x4_t den = vaddq_f32(one, e), d = vld1q_f32(dh + i);
        const float32x4_t s = neon_div(vld1q_f32(g + i), den), sg = neon_div(one, den);
        const float32x4_t ds = vfmaq_f32(sg, s, vsubq_f32(one, sg));
        const float32x4_t dui = vmulq_f32(d, s);
        const float32x4_t dgi = vmulq_f32(vmulq_f32(d, vld1q_f32(u + i)), ds);
        if (neon_flushed(s, ds, dui, dgi)) {
            ngpt_f32_swiglu_bwd_ref(dg + i, du + i, dh + i, g + i, u + i, 4);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(du + i, dui);
        vst1q_f32(dg + i, dgi);
    }
    ngpt_f32_swiglu_bwd_ref(dg + i, du + i, dh + i, g + i, u + i, n - i);
}
