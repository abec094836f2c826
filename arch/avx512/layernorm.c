/* layernorm.c — AVX-512 LayerNorm weight and bias gradients, bit-identical
 * to the reference: 32 columns at a time (two __m512) keep their dw and db
 * chains in registers over every row, then 16, the last ones under a mask;
 * each chain takes the rows in order, as the reference's. The forward and
 * the input gradient are AVX2's (the list's avx512 column says AVX2): their
 * time goes to the canonical 8-lane row sums, chains of adds bound by the
 * add's latency, which wider vectors do not shorten. Same shape as
 * arch/avx2/layernorm.c's layernorm_bwd_wb. */
#include <immintrin.h>

#include "kernels_avx512.h"

/* Columns i..i+16*V-1 (those of the masks) over every row. */
static inline __attribute__((always_inline)) void
wb_cols(const int V, __mmask16 m0, __mmask16 m1, float *dw, float *db, const float *dy,
        const float *x, ptrdiff_t ld, const float *mean, const float *rstd, size_t rows)
{
    __m512 w0 = _mm512_maskz_loadu_ps(m0, dw), b0 = _mm512_maskz_loadu_ps(m0, db);
    __m512 w1 = w0, b1 = b0;
    if (V == 2) w1 = _mm512_maskz_loadu_ps(m1, dw + 16), b1 = _mm512_maskz_loadu_ps(m1, db + 16);
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + (ptrdiff_t)r * ld, *dyr = dy + (ptrdiff_t)r * ld;
        const __m512 vmu = _mm512_set1_ps(mean[r]), vrs = _mm512_set1_ps(rstd[r]);
        const __m512 d0 = _mm512_maskz_loadu_ps(m0, dyr);
        w0 = _mm512_fmadd_ps(d0, _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m0, xr), vmu), vrs), w0);
        b0 = _mm512_add_ps(b0, d0);
        if (V == 2) {
            const __m512 d1 = _mm512_maskz_loadu_ps(m1, dyr + 16);
            w1 = _mm512_fmadd_ps(d1, _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m1, xr + 16), vmu), vrs), w1);
            b1 = _mm512_add_ps(b1, d1);
        }
    }
    _mm512_mask_storeu_ps(dw, m0, w0), _mm512_mask_storeu_ps(db, m0, b0);
    if (V == 2) _mm512_mask_storeu_ps(dw + 16, m1, w1), _mm512_mask_storeu_ps(db + 16, m1, b1);
}

void ngpt_f32_layernorm_bwd_wb__avx512(float *dw, float *db, const float *dy, const float *x,
                                       ptrdiff_t ld, const float *mean, const float *rstd,
                                       size_t rows, int n)
{
    int i = 0;
    for (; i + 32 <= n; i += 32)
        wb_cols(2, 0xFFFF, 0xFFFF, dw + i, db + i, dy + i, x + i, ld, mean, rstd, rows);
    for (; i < n; i += 16)
        wb_cols(1, avx512_lanes((size_t)i, (size_t)n), 0, dw + i, db + i, dy + i, x + i, ld, mean,
                rstd, rows);
}
