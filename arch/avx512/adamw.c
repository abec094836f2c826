/* adamw.c — AVX-512 AdamW, bit-identical to the reference: elementwise, the
 * same operations in the same order (fma only where the reference has
 * fmaf); the tail runs the same code under a mask (lanes past n compute on
 * zeros, are not stored). Same shape as arch/avx2/adamw.c, 16 lanes where
 * that has 8. */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx512.h"

void ngpt_f32_adamw__avx512(float *p, const float *grad, float *m, float *v, size_t n,
                            const ngpt_adamw_coef *c)
{
    const __m512 gmul = _mm512_set1_ps(c->gmul), decay = _mm512_set1_ps(c->decay);
    const __m512 b1 = _mm512_set1_ps(c->beta1), omb1 = _mm512_set1_ps(c->one_minus_beta1);
    const __m512 b2 = _mm512_set1_ps(c->beta2), omb2 = _mm512_set1_ps(c->one_minus_beta2);
    const __m512 nstep = _mm512_set1_ps(-c->step_size), bc2 = _mm512_set1_ps(c->bc2_sqrt);
    const __m512 eps = _mm512_set1_ps(c->eps);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        const __m512 g = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, grad + i), gmul);
        const __m512 w = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, p + i), decay);
        const __m512 mi = _mm512_fmadd_ps(b1, _mm512_maskz_loadu_ps(k, m + i), _mm512_mul_ps(omb1, g));
        const __m512 vi = _mm512_fmadd_ps(b2, _mm512_maskz_loadu_ps(k, v + i),
                                          _mm512_mul_ps(_mm512_mul_ps(omb2, g), g));
        _mm512_mask_storeu_ps(m + i, k, mi);
        _mm512_mask_storeu_ps(v + i, k, vi);
        const __m512 den = _mm512_add_ps(_mm512_div_ps(_mm512_sqrt_ps(vi), bc2), eps);
        _mm512_mask_storeu_ps(p + i, k, _mm512_fmadd_ps(nstep, _mm512_div_ps(mi, den), w));
    }
}
