/* kv_q8.c — the AVX-512 weighted sum of the 8-bit KV cache's values
 * (contract in kernels.inc, the reference in src/ref/kv_q8.c): a group of
 * 32 outputs is two zmm of chains, for up to 4 rows at a time; position j's
 * 32 values are widened to floats once for the rows, and each row adds
 * fmadd(p_r[j] * d_j[g], (float)q_j, acc) in increasing j, the factor one
 * scalar product as in the reference. Outputs past dim (the row's zero
 * padding) are computed, not stored (masked stores). Same shape as
 * arch/avx2/kv_q8.c's, 16 lanes and 4 rows where that has 8 and 2; the
 * scores run the AVX2 kernel. */
#include <immintrin.h>
#include <string.h>

#include "kernels_avx512.h"

enum { G = NGPT_Q8_GROUP, WSUM_ROWS = 4 };

/* The loops over a tile's rows run a known few times: unrolled, the
 * accumulators stay in registers. */
#define UNROLL _Pragma("GCC unroll 4")

static inline __m512 lanes16(const int8_t *x)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)x)));
}

/* Adds position j of group g to the chains of rows first..R-1 (acc[r]). */
static inline __attribute__((always_inline)) void
wsum_step(const int R, int first, __m512 acc[WSUM_ROWS][2], const float *p, ptrdiff_t p_stride,
          const int8_t *vj, int j, int g, int groups)
{
    float d;
    memcpy(&d, (const unsigned char *)vj + (size_t)groups * G + 4 * (size_t)g, sizeof d);
    const __m512 x0 = lanes16(vj + g * G), x1 = lanes16(vj + g * G + 16);
    UNROLL
    for (int r = first; r < R; r++) {
        const __m512 f = _mm512_set1_ps(p[r * p_stride + j] * d);
        acc[r][0] = _mm512_fmadd_ps(f, x0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(f, x1, acc[r][1]);
    }
}

/* Group g of R rows, row r seeing n + step*r positions: the positions every
 * row sees for all, then (step 1) position n + t for the rows after t. */
static inline __attribute__((always_inline)) void
wsum_rows(const int R, float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
          const int8_t *v, ptrdiff_t v_stride, int n, int step, int dim, int g)
{
    const int groups = ngpt_q8_groups(dim);
    __m512 acc[WSUM_ROWS][2];
    UNROLL
    for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int j = 0; j < n; j++) wsum_step(R, 0, acc, p, p_stride, v + j * v_stride, j, g, groups);
    if (step)
        UNROLL
        for (int t = 0; t + 1 < R; t++)
            wsum_step(R, t + 1, acc, p, p_stride, v + (n + t) * v_stride, n + t, g, groups);
    const size_t nd = (size_t)(dim - g * G < G ? dim - g * G : G);
    UNROLL
    for (int r = 0; r < R; r++) {
        float *og = o + r * o_stride + g * G;
        _mm512_mask_storeu_ps(og, avx512_lanes(0, nd), acc[r][0]);
        if (nd > 16) _mm512_mask_storeu_ps(og + 16, avx512_lanes(16, nd), acc[r][1]);
    }
}

void ngpt_f32_attn_wsum_q8__avx512(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                                   int rows, const int8_t *v, ptrdiff_t v_stride, int n, int step,
                                   int dim)
{
    const int groups = ngpt_q8_groups(dim);
    for (int r = 0; r < rows; r += WSUM_ROWS) {
        float *orow = o + r * o_stride;
        const float *prow = p + r * p_stride;
        const int nr = n + step * r;
        for (int g = 0; g < groups; g++) {
            switch (rows - r < WSUM_ROWS ? rows - r : WSUM_ROWS) {
            case 4: wsum_rows(4, orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim, g); break;
            case 3: wsum_rows(3, orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim, g); break;
            case 2: wsum_rows(2, orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim, g); break;
            default: wsum_rows(1, orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim, g); break;
            }
        }
    }
}
