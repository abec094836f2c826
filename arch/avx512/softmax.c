/* softmax.c — AVX-512 softmax of one row and its backward, bit-identical to
 * the reference: the exp row (avx512_exp_row: SLEEF's 16-lane finz exp, the
 * cutoff a mask, the canonical 8-lane sum kept in one __m256 that takes
 * each __m512's halves in turn), then one divide per element; the
 * backward's dot the same way, then one vector expression. Tails run under
 * masks. Same shape as arch/avx2/softmax.c, 16 lanes where that has 8. */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx512.h"

void ngpt_f32_softmax__avx512(float *p, const float *s, int n)
{
    const float sum = avx512_exp_row(p, s, n, avx512_row_max(s, n));
    const __m512 vs = _mm512_set1_ps(sum);
    for (int j = 0; j < n; j += 16) {
        const __mmask16 k = avx512_lanes((size_t)j, (size_t)n);
        _mm512_mask_storeu_ps(p + j, k, _mm512_div_ps(_mm512_maskz_loadu_ps(k, p + j), vs));
    }
}

void ngpt_f32_softmax_bwd__avx512(float *ds, const float *p, const float *dp, int n, float scale)
{
    __m256 acc = _mm256_setzero_ps();
    int j = 0;
    for (; j + 16 <= n; j += 16)
        acc = avx512_fma_halves(acc, _mm512_loadu_ps(p + j), _mm512_loadu_ps(dp + j));
    float l[NGPT_LANES];
    _mm256_storeu_ps(l, acc);
    for (; j < n; j++) l[j % NGPT_LANES] = fmaf(p[j], dp[j], l[j % NGPT_LANES]);
    const float dot = ngpt_lanes_combine(l);
    const __m512 vd = _mm512_set1_ps(dot), vc = _mm512_set1_ps(scale);
    for (j = 0; j < n; j += 16) {
        const __mmask16 k = avx512_lanes((size_t)j, (size_t)n);
        const __m512 pj = _mm512_maskz_loadu_ps(k, p + j), dpj = _mm512_maskz_loadu_ps(k, dp + j);
        _mm512_mask_storeu_ps(ds + j, k, _mm512_mul_ps(_mm512_mul_ps(pj, _mm512_sub_ps(dpj, vd)), vc));
    }
}
