/* cross_entropy.c — NEON cross-entropy of one row and its backward,
 * bit-identical to the reference: the exp row as in softmax (neon_exp_row),
 * log through the reference's scalar SLEEF call; the backward divides and
 * scales every term, then subtracts 1 at the target only ((e/sum - 0.0f) is
 * e/sum bit for bit). Same shape as arch/avx2/cross_entropy.c. Vector
 * divide: AArch64 only (the list's A64). */
#include <arm_neon.h>

#include "kernels_neon.h"

#if defined(__aarch64__)
float ngpt_f32_xent__neon(const float *logits, int n, int target)
{
    const float mx = ngpt_row_max(logits, n);
    return (mx + Sleef_finz_logf1_u10purecfma(neon_exp_row(NULL, logits, n, mx))) - logits[target];
}

/* (e_j/sum - 0.0f) == e_j/sum bit for bit, so only the target subtracts. */
void ngpt_f32_xent_bwd__neon(float *dlogits, const float *logits, int n, int target, float scale)
{
    const float sum = neon_exp_row(dlogits, logits, n, ngpt_row_max(logits, n));
    const float et = dlogits[target];
    const float32x4_t sv = vdupq_n_f32(sum), kv = vdupq_n_f32(scale);
    int j = 0;
    for (; j + 4 <= n; j += 4)
        vst1q_f32(dlogits + j, vmulq_f32(vdivq_f32(vld1q_f32(dlogits + j), sv), kv));
    for (; j < n; j++) dlogits[j] = (dlogits[j] / sum) * scale;
    dlogits[target] = (et / sum - 1.0f) * scale;
}
#endif
