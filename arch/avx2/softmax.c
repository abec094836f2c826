/* softmax.c — AVX2 softmax of one row and its backward, bit-identical to the
 * reference: the exp row (avx2_exp_row: SLEEF's vector finz exp, the cutoff
 * a mask, the canonical 8 lanes in one __m256), then one divide per
 * element; the backward's dot in the 8 lanes, then one vector expression.
 * Same shape as arch/neon/softmax.c: one __m256 here is two float32x4_t
 * there. */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"

void ngpt_f32_softmax__avx2(float *p, const float *s, int n)
{
    const float sum = avx2_exp_row(p, s, n, avx2_row_max(s, n));
    const __m256 vs = _mm256_set1_ps(sum);
    int j = 0;
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(p + j, _mm256_div_ps(_mm256_loadu_ps(p + j), vs));
    for (; j < n; j++) p[j] = p[j] / sum;
}

void ngpt_f32_softmax_bwd__avx2(float *ds, const float *p, const float *dp, int n, float scale)
{
    __m256 acc = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= n; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(p + j), _mm256_loadu_ps(dp + j), acc);
    float l[NGPT_LANES];
    _mm256_storeu_ps(l, acc);
    for (; j < n; j++) l[j % NGPT_LANES] = fmaf(p[j], dp[j], l[j % NGPT_LANES]);
    const float dot = ngpt_lanes_combine(l);
    const __m256 vd = _mm256_set1_ps(dot), vc = _mm256_set1_ps(scale);
    for (j = 0; j + 8 <= n; j += 8) {
        const __m256 pj = _mm256_loadu_ps(p + j), dpj = _mm256_loadu_ps(dp + j);
        _mm256_storeu_ps(ds + j, _mm256_mul_ps(_mm256_mul_ps(pj, _mm256_sub_ps(dpj, vd)), vc));
    }
    for (; j < n; j++) ds[j] = (p[j] * (dp[j] - dot)) * scale;
}
