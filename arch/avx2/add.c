/* add.c — AVX2 elementwise sum: 8 lanes a step, the tail in scalar. Same
 * shape as arch/neon/add.c. */
#include <immintrin.h>

#include "kernels_avx2.h"

void ngpt_f32_add__avx2(float *y, const float *a, const float *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    for (; i < n; i++) y[i] = a[i] + b[i];
}
