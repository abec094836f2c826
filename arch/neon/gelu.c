/* gelu.c — NEON GELU forward and backward, bit-identical to the reference:
 * the same operations per element in the same order, erf/exp from SLEEF's
 * deterministic advsimd finz functions (the bits of the scalar finz ones the
 * reference calls); the tail (< 4 elements) runs the reference. Same shape
 * as arch/avx2/gelu.c, 4 lanes where that has 8. SLEEF's advsimd functions
 * are AArch64 only (the list's A64). */
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
    ngpt_f32_gelu_fwd_ref(y + i, x + i, n - i);
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
    ngpt_f32_gelu_bwd_ref(dx + i, x + i, dy + i, n - i);
}
#endif
