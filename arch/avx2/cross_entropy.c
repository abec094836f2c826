/* cross_entropy.c — AVX2 cross-entropy of one row and its backward,
 * bit-identical to the reference: the exp row as in softmax (avx2_exp_row),
 * log through the reference's scalar SLEEF call; the backward divides and
 * scales every term, then subtracts 1 at the target only ((e/sum - 0.0f) is
 * e/sum bit for bit). Same shape as arch/neon/cross_entropy.c. */
#include <immintrin.h>

#include "kernels_avx2.h"

float ngpt_f32_xent__avx2(const float *logits, int n, int target)
{
    const float mx = avx2_row_max(logits, n);
    const float sum = avx2_exp_row(NULL, logits, n, mx);
    return (mx + Sleef_finz_logf1_u10purecfma(sum)) - logits[target];
}

void ngpt_f32_xent_bwd__avx2(float *dlogits, const float *logits, int n, int target, float scale)
{
    const float sum = avx2_exp_row(dlogits, logits, n, avx2_row_max(logits, n));
    const bool has_t = target >= 0 && target < n;
    const float et = has_t ? dlogits[target] : 0.0f;
    const __m256 vs = _mm256_set1_ps(sum), vc = _mm256_set1_ps(scale);
    int j = 0;
    /* (e/sum - 0.0f) * scale == (e/sum) * scale bit for bit (x - +0 == x). */
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(dlogits + j, _mm256_mul_ps(_mm256_div_ps(_mm256_loadu_ps(dlogits + j), vs), vc));
    for (; j < n; j++) dlogits[j] = (dlogits[j] / sum - 0.0f) * scale;
    if (has_t) dlogits[target] = (et / sum - 1.0f) * scale;
}
