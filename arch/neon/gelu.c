/* gelu.c — NEON GELU forward and backward through SLEEF's vector finz_
 * erf/exp, which return the bits of the scalar Sleef_finz_<f>f1_u10purecfma
 * the reference calls; tails in scalar. SLEEF's advsimd functions are
 * AArch64-only (ARMv7 runs the reference: src/kernels.inc). */
#include <math.h>
#include <arm_neon.h>
#include <sleef.h>

#include "kernels_neon.h"

#if defined(__aarch64__)
static const float RSQRT2 = 0.70710678118654752f, RSQRT2PI = 0.39894228040143268f;

void ngpt_f32_gelu_fwd__neon(float *y, const float *x, size_t n)
{
    const float32x4_t half = vdupq_n_f32(0.5f), one = vdupq_n_f32(1.0f), k = vdupq_n_f32(RSQRT2);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        vst1q_f32(y + i, vmulq_f32(vmulq_f32(half, v), vaddq_f32(one, Sleef_finz_erff4_u10advsimd(vmulq_f32(v, k)))));
    }
    for (; i < n; i++) {
        const float v = x[i];
        y[i] = (0.5f * v) * (1.0f + Sleef_finz_erff1_u10purecfma(v * RSQRT2));
    }
}

void ngpt_f32_gelu_bwd__neon(float *dx, const float *x, const float *dy, size_t n)
{
    const float32x4_t half = vdupq_n_f32(0.5f), mhalf = vdupq_n_f32(-0.5f),
                      one = vdupq_n_f32(1.0f), k = vdupq_n_f32(RSQRT2), kp = vdupq_n_f32(RSQRT2PI);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        const float32x4_t cdf = vmulq_f32(half, vaddq_f32(one, Sleef_finz_erff4_u10advsimd(vmulq_f32(v, k))));
        const float32x4_t pdf = vmulq_f32(Sleef_finz_expf4_u10advsimd(vmulq_f32(vmulq_f32(mhalf, v), v)), kp);
        vst1q_f32(dx + i, vmulq_f32(vld1q_f32(dy + i), vfmaq_f32(cdf, v, pdf)));
    }
    for (; i < n; i++) {
        const float v = x[i];
        const float cdf = 0.5f * (1.0f + Sleef_finz_erff1_u10purecfma(v * RSQRT2));
        const float pdf = Sleef_finz_expf1_u10purecfma((-0.5f * v) * v) * RSQRT2PI;
        dx[i] = dy[i] * fmaf(v, pdf, cdf);
    }
}
#endif
