/* add.c — AVX-512 elementwise sum: 16 lanes a step, the tail under a mask.
 * Same shape as arch/avx2/add.c. */
#include <immintrin.h>

#include "kernels_avx512.h"

void ngpt_f32_add__avx512(float *y, const float *a, const float *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, a + i),
                                                      _mm512_maskz_loadu_ps(m, b + i)));
    }
}
