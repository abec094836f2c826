/* adamw.c — AVX2 AdamW, bit-identical to the reference: elementwise, the
 * same operations in the same order (fma only where the reference has
 * fmaf); the tail (< 8 elements) runs the reference. Same shape as
 * arch/neon/adamw.c, 8 lanes where that has 4. */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"

void ngpt_f32_adamw__avx2(float *p, const float *grad, float *m, float *v, size_t n,
                          const ngpt_adamw_coef *c)
{
    const __m256 gmul = _mm256_set1_ps(c->gmul), decay = _mm256_set1_ps(c->decay);
    const __m256 b1 = _mm256_set1_ps(c->beta1), omb1 = _mm256_set1_ps(c->one_minus_beta1);
    const __m256 b2 = _mm256_set1_ps(c->beta2), omb2 = _mm256_set1_ps(c->one_minus_beta2);
    const __m256 nstep = _mm256_set1_ps(-c->step_size), bc2 = _mm256_set1_ps(c->bc2_sqrt);
    const __m256 eps = _mm256_set1_ps(c->eps);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_mul_ps(_mm256_loadu_ps(grad + i), gmul);
        const __m256 w = _mm256_mul_ps(_mm256_loadu_ps(p + i), decay);
        const __m256 mi = _mm256_fmadd_ps(b1, _mm256_loadu_ps(m + i), _mm256_mul_ps(omb1, g));
        const __m256 vi = _mm256_fmadd_ps(b2, _mm256_loadu_ps(v + i), _mm256_mul_ps(_mm256_mul_ps(omb2, g), g));
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        const __m256 den = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vi), bc2), eps);
        _mm256_storeu_ps(p + i, _mm256_fmadd_ps(nstep, _mm256_div_ps(mi, den), w));
    }
    ngpt_f32_adamw_ref(p + i, grad + i, m + i, v + i, n - i, c);
}
