/* cross_entropy.c — NEON cross-entropy of one row and its backward,
 * bit-identical to the reference: the exp row as in softmax (neon_exp_row),
 * log through the reference's scalar SLEEF call; the backward divides and
 * scales every term, then subtracts 1 at the target only ((e/sum - 0.0f) is
 * e/sum bit for bit). Same shape as arch/avx2/cross_entropy.c. ARMv7
 * divides each lane on the VFP unit (neon_div); a block whose scaled terms
 * flushed (a tiny scale) is recomputed in scalar before it is stored
 * (kernels_neon.h, "the flush check"). */
#include <arm_neon.h>

#include "exp_row.h"
#include "kernels_neon.h"

float ngpt_f32_xent__neon(const float *logits, int n, int target)
{
    const float mx = ngpt_row_max(logits, n);
    return (mx + Sleef_finz_logf1_u10purecfma(neon_exp_row(NULL, logits, n, mx))) - logits[target];
}

/* d_j = (e_j / sum) * scale for j in [j0, j1), in place over e, in scalar. */
static void scaled_range(float *d, float sum, float scale, int j0, int j1)
{
    for (int j = j0; j < j1; j++) d[j] = (d[j] / sum) * scale;
}

/* (e_j/sum - 0.0f) == e_j/sum bit for bit, so only the target subtracts. */
void ngpt_f32_xent_bwd__neon(float *dlogits, const float *logits, int n, int target, float scale)
{
    const float sum = neon_exp_row(dlogits, logits, n, ngpt_row_max(logits, n));
    const float et = dlogits[target];
    neon_flags_clear();     /* the exp row's scalar tail may have left one */
    const float32x4_t sv = vdupq_n_f32(sum), kv = vdupq_n_f32(scale);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const float32x4_t d0 = vmulq_f32(neon_div(vld1q_f32(dlogits + j), sv), kv);
        const float32x4_t d1 = vmulq_f32(neon_div(vld1q_f32(dlogits + j + 4), sv), kv);
        if (neon_flushed2(d0, d1)) {
            scaled_range(dlogits, sum, scale, j, j + 8);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(dlogits + j, d0);
        vst1q_f32(dlogits + j + 4, d1);
    }
    scaled_range(dlogits, sum, scale, j, n);
    dlogits[target] = (et / sum - 1.0f) * scale;
}
