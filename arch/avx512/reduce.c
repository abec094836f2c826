/* reduce.c — AVX-512 bias column sums, bit-identical to the reference: each
 * column's chain adds the rows in order, 16 columns a vector, the last
 * ones under a mask. The canonical 8-lane row sums (rsum, sumsq) are
 * AVX2's (the list's avx512 column says AVX2): each is one chain of adds
 * over 8 lanes, bound by the add's latency, which wider vectors do not
 * shorten. Same shape as arch/avx2/reduce.c's colsum_acc. */
#include <immintrin.h>

#include "kernels_avx512.h"

void ngpt_f32_colsum_acc__avx512(float *db, const float *dy, ptrdiff_t ld, size_t rows, int n)
{
    for (size_t r = 0; r < rows; r++) {
        const float *row = dy + (ptrdiff_t)r * ld;
        for (int j = 0; j < n; j += 16) {
            const __mmask16 k = avx512_lanes((size_t)j, (size_t)n);
            _mm512_mask_storeu_ps(db + j, k, _mm512_add_ps(_mm512_maskz_loadu_ps(k, db + j),
                                                           _mm512_maskz_loadu_ps(k, row + j)));
        }
    }
}
