/* adamw.c — NEON AdamW, bit-identical to the reference: elementwise, the
 * same operations in the same order (vfmaq_f32 where it has fmaf); the tail
 * (< 4 elements) runs the reference. Same shape as arch/avx2/adamw.c, 4
 * lanes where that has 8. Vector divide and sqrt: AArch64 only (the list's
 * A64). */
#include <arm_neon.h>

#include "kernels_neon.h"

#if defined(__aarch64__)
void ngpt_f32_adamw__neon(float *p, const float *grad, float *m, float *v, size_t n,
                          const ngpt_adamw_coef *c)
{
    const float32x4_t gmul = vdupq_n_f32(c->gmul), decay = vdupq_n_f32(c->decay);
    const float32x4_t b1 = vdupq_n_f32(c->beta1), omb1 = vdupq_n_f32(c->one_minus_beta1);
    const float32x4_t b2 = vdupq_n_f32(c->beta2), omb2 = vdupq_n_f32(c->one_minus_beta2);
    const float32x4_t nstep = vdupq_n_f32(-c->step_size), bc2 = vdupq_n_f32(c->bc2_sqrt);
    const float32x4_t eps = vdupq_n_f32(c->eps);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t g = vmulq_f32(vld1q_f32(grad + i), gmul);
        const float32x4_t w = vmulq_f32(vld1q_f32(p + i), decay);
        const float32x4_t mi = vfmaq_f32(vmulq_f32(omb1, g), b1, vld1q_f32(m + i));
        const float32x4_t vi = vfmaq_f32(vmulq_f32(vmulq_f32(omb2, g), g), b2, vld1q_f32(v + i));
        vst1q_f32(m + i, mi);
        vst1q_f32(v + i, vi);
        const float32x4_t den = vaddq_f32(vdivq_f32(vsqrtq_f32(vi), bc2), eps);
        vst1q_f32(p + i, vfmaq_f32(w, nstep, vdivq_f32(mi, den)));
    }
    if (i < n) ngpt_f32_adamw_ref(p + i, grad + i, m + i, v + i, n - i, c);
}
#endif
