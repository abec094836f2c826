/* cross_entropy.c — AVX-512 cross-entropy of one row and its backward,
 * bit-identical to the reference: the exp row as in softmax
 * (avx512_exp_row), log through the reference's scalar SLEEF call; the
 * backward divides and scales every term, then subtracts 1 at the target
 * only ((e/sum - 0.0f) is e/sum bit for bit). Same shape as
 * arch/avx2/cross_entropy.c, 16 lanes where that has 8. */
#include <immintrin.h>

#include "kernels_avx512.h"

float ngpt_f32_xent__avx512(const float *logits, int n, int target)
{
    const float mx = avx512_row_max(logits, n);
    const float sum = avx512_exp_row(NULL, logits, n, mx);
    return (mx + Sleef_finz_logf1_u10purecfma(sum)) - logits[target];
}

void ngpt_f32_xent_bwd__avx512(float *dlogits, const float *logits, int n, int target, float scale)
{
    const float sum = avx512_exp_row(dlogits, logits, n, avx512_row_max(logits, n));
    const bool has_t = target >= 0 && target < n;
    const float et = has_t ? dlogits[target] : 0.0f;
    const __m512 vs = _mm512_set1_ps(sum), vc = _mm512_set1_ps(scale);
    /* (e/sum - 0.0f) * scale == (e/sum) * scale bit for bit (x - +0 == x). */
    for (int j = 0; j < n; j += 16) {
        const __mmask16 k = avx512_lanes((size_t)j, (size_t)n);
        _mm512_mask_storeu_ps(dlogits + j, k,
                              _mm512_mul_ps(_mm512_div_ps(_mm512_maskz_loadu_ps(k, dlogits + j), vs), vc));
    }
    if (has_t) dlogits[target] = (et / sum - 1.0f) * scale;
}
