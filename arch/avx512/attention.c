/* attention.c — AVX-512 multi-row attention products (scores against
 * transposed keys, the weighted sum, the outer-product accumulation of their
 * backward), bit-identical to the reference: every output is one fma chain
 * in increasing index order, lanes hold different outputs.
 *  - scores_t, wsum: register tiles of up to 8 query rows x 32 outputs (two
 *    __m512 a row, 16 chains in flight); the inputs of one step of the chains
 *    (2 vectors of kt or v) are loaded once for the 8 rows, each row's value
 *    broadcast from memory into its fmas. Causality inside a tile: the keys
 *    every row sees run for all rows, the last few (one more per row) only
 *    for the rows that see them.
 *  - outer_acc: the rows of dK/dV, 32 columns at a time, each loaded once per
 *    tile of up to 8 query rows, taking every row's fma in row order.
 *  - Column edges (a last block of fewer than 32 keys or dims) run the same
 *    code with masked loads and stores instead of the reference.
 *  - scores (decoding: the query heads of a key/value head against keys as
 *    they are in the cache): 16 keys side by side (lane = key), two 8x8
 *    blocks of keys x dims transposed in ymm and joined, for up to 8 rows
 *    per transpose; a last block of fewer keys repeats a real key in the
 *    spare lanes, which are not stored.
 * Same shape as arch/avx2/attention.c, which has tiles of 4 rows x 16
 * outputs (two __m256). */
#include <immintrin.h>

#include "kernels_avx512.h"
#include "../transpose8.h"

enum { TILE_ROWS = 8, TILE_COLS = 32 };

/* The loops over a tile's rows and vectors run a known few times: unrolled,
 * the tile stays in registers. */
#define UNROLL _Pragma("GCC unroll 8")

/* The lanes of the two vectors of a block of `cols` (<= 32) outputs. */
static inline void col_masks(int cols, __mmask16 *m0, __mmask16 *m1)
{
    *m0 = cols >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << cols) - 1);
    *m1 = cols >= 32 ? (__mmask16)0xFFFF : cols <= 16 ? 0 : (__mmask16)((1u << (cols - 16)) - 1);
}

/* ---- scores: s_r[j] = (q_r . k_j) * scale, rows that share their n keys */

/* The chains of R rows against 16 keys (rows[jj] is key jj): per 8 dims,
 * two 8x8 blocks of keys x dims transposed in ymm and joined, so one zmm
 * holds k_j[d] of the 16 keys and each row's fma adds q_r[d] * k_j[d] to
 * key j's chain; the transposes serve all R rows (up to 8: the query heads
 * of a key/value head). */
static inline __attribute__((always_inline)) void
scores_keys16(const int R, __m512 acc[TILE_ROWS], const float *const *rows, const float *q,
              ptrdiff_t q_stride, int dim)
{
    const int d8 = dim - dim % 8;
    UNROLL
    for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_ps();
    for (int d = 0; d < d8; d += 8) {
        __m256 lo[8], hi[8];
        UNROLL
        for (int jj = 0; jj < 8; jj++)
            lo[jj] = _mm256_loadu_ps(rows[jj] + d), hi[jj] = _mm256_loadu_ps(rows[8 + jj] + d);
        transpose8(lo);
        transpose8(hi);
        UNROLL
        for (int dd = 0; dd < 8; dd++) {
            const __m512 col = _mm512_insertf32x8(_mm512_castps256_ps512(lo[dd]), hi[dd], 1);
            UNROLL
            for (int r = 0; r < R; r++)
                acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(q[r * q_stride + d + dd]), col, acc[r]);
        }
    }
    for (int d = d8; d < dim; d++) {
        float c[16];
        for (int jj = 0; jj < 16; jj++) c[jj] = rows[jj][d];
        const __m512 col = _mm512_loadu_ps(c);
        UNROLL
        for (int r = 0; r < R; r++)
            acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(q[r * q_stride + d]), col, acc[r]);
    }
}

/* R rows' scores against all n keys, 16 at a time; a last block of fewer
 * repeats key j in the lanes past n, which are not stored. */
static inline __attribute__((always_inline)) void
scores_rows(const int R, float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
            const float *k, ptrdiff_t k_stride, int n, int dim, __m512 vs)
{
    const float *rows[16];
    __m512 acc[TILE_ROWS];
    for (int j = 0; j < n; j += 16) {
        const int left = n - j < 16 ? n - j : 16;
        for (int jj = 0; jj < 16; jj++) rows[jj] = k + (j + (jj < left ? jj : 0)) * k_stride;
        scores_keys16(R, acc, rows, q, q_stride, dim);
        const __mmask16 m = (__mmask16)(left == 16 ? 0xFFFF : (1u << left) - 1);
        UNROLL
        for (int r = 0; r < R; r++) _mm512_mask_storeu_ps(s + r * s_stride + j, m, _mm512_mul_ps(acc[r], vs));
    }
}

/* ---- scores_t: s_r[j] = (q_r . kt[., j]) * scale */

/* acc[r] += a[r][i] * b[i][0..31] for i in 0..len-1, rows r < R (the
 * columns of the masks m0/m1 read: the others add 0): one step of every
 * chain per i, the two vectors of b's row loaded once for the R rows. */
static inline __attribute__((always_inline)) void
strip_fma(const int R, __mmask16 m0, __mmask16 m1, __m512 acc[TILE_ROWS][2], const float *a,
          ptrdiff_t a_stride, const float *b, ptrdiff_t b_stride, int len)
{
    for (int i = 0; i < len; i++) {
        const float *bi = b + i * b_stride;
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, bi), b1 = _mm512_maskz_loadu_ps(m1, bi + 16);
        UNROLL
        for (int r = 0; r < R; r++) {
            const __m512 ai = _mm512_set1_ps(a[r * a_stride + i]);
            acc[r][0] = _mm512_fmadd_ps(ai, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(ai, b1, acc[r][1]);
        }
    }
}

/* Scores of R rows against keys j0..j0+31 (32 columns of kt, those of the
 * masks m0/m1 read: the others are 0). */
static inline __attribute__((always_inline)) void
scores_t_tile(const int R, __mmask16 m0, __mmask16 m1, __m512 acc[TILE_ROWS][2], const float *q,
              ptrdiff_t q_stride, const float *kt, ptrdiff_t kt_stride, int dim)
{
    UNROLL
    for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    strip_fma(R, m0, m1, acc, q, q_stride, kt, kt_stride, dim);
}

/* Stores each row's scores of the tile at key j: row r keeps n + r - j. */
static inline __attribute__((always_inline)) void
scores_t_store(const int R, __m512 acc[TILE_ROWS][2], float *s, ptrdiff_t s_stride, int n, int j,
               __m512 vs)
{
    UNROLL
    for (int r = 0; r < R; r++) {
        const int keep = n + r - j;
        if (keep <= 0) continue;
        __mmask16 m0, m1;
        col_masks(keep, &m0, &m1);
        float *sr = s + r * s_stride + j;
        _mm512_mask_storeu_ps(sr, m0, _mm512_mul_ps(acc[r][0], vs));
        _mm512_mask_storeu_ps(sr + 16, m1, _mm512_mul_ps(acc[r][1], vs));
    }
}

/* Rows r0..r0+R-1 of attn_scores_t: row r has n + r scores. Blocks of 32
 * keys up to the last row's count are computed for all R rows (the last
 * block with masked loads) and each row stores its own keys. */
static inline __attribute__((always_inline)) void
scores_t_rows(const int R, float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
              const float *kt, ptrdiff_t kt_stride, int n, int dim, float scale)
{
    const __m512 vs = _mm512_set1_ps(scale);
    const int nmax = n + R - 1;
    __m512 acc[TILE_ROWS][2];
    for (int j = 0; j < nmax; j += TILE_COLS) {
        __mmask16 m0, m1;
        col_masks(nmax - j, &m0, &m1);
        scores_t_tile(R, m0, m1, acc, q, q_stride, kt + j, kt_stride, dim);
        scores_t_store(R, acc, s, s_stride, n, j, vs);
    }
}

/* ---- wsum: o_r[d] = sum_{j < n + step*r} p_r[j] v_j[d] */

/* Columns d..d+31 (those of m0/m1) of R rows: the keys j < n run for every
 * row, then (step 1) key n + t for the rows after t. */
static inline __attribute__((always_inline)) void
wsum_rows(const int R, __mmask16 m0, __mmask16 m1, float *o, ptrdiff_t o_stride, const float *p,
          ptrdiff_t p_stride, const float *v, ptrdiff_t v_stride, int n, int step)
{
    __m512 acc[TILE_ROWS][2];
    UNROLL
    for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    strip_fma(R, m0, m1, acc, p, p_stride, v, v_stride, n);
    if (step)     /* causal rows: each next row's one more key */
        UNROLL
        for (int t = 0; t + 1 < R; t++) {
            const float *vj = v + (n + t) * v_stride;
            const __m512 v0 = _mm512_maskz_loadu_ps(m0, vj), v1 = _mm512_maskz_loadu_ps(m1, vj + 16);
            UNROLL
            for (int r = t + 1; r < R; r++) {
                const __m512 pj = _mm512_set1_ps(p[r * p_stride + n + t]);
                acc[r][0] = _mm512_fmadd_ps(pj, v0, acc[r][0]);
                acc[r][1] = _mm512_fmadd_ps(pj, v1, acc[r][1]);
            }
        }
    UNROLL
    for (int r = 0; r < R; r++) {
        _mm512_mask_storeu_ps(o + r * o_stride, m0, acc[r][0]);
        _mm512_mask_storeu_ps(o + r * o_stride + 16, m1, acc[r][1]);
    }
}

static inline __attribute__((always_inline)) void
wsum_group(const int R, float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
           const float *v, ptrdiff_t v_stride, int n, int step, int dim)
{
    for (int d = 0; d < dim; d += TILE_COLS) {
        __mmask16 m0, m1;
        col_masks(dim - d, &m0, &m1);
        wsum_rows(R, m0, m1, o + d, o_stride, p, p_stride, v + d, v_stride, n, step);
    }
}

/* ---- outer_acc: out_j[d] = fmaf(w_r[j], x_r[d], out_j[d]) over rows r in order */

/* Columns d..d+31 (those of m0/m1) of the outputs, R rows: each out_j is
 * loaded once, takes the fma of every row that sees key j, in row order,
 * and is stored. */
static inline __attribute__((always_inline)) void
outer_rows(const int R, __mmask16 m0, __mmask16 m1, float *out, ptrdiff_t out_stride,
           const float *w, ptrdiff_t w_stride, const float *x, ptrdiff_t x_stride, int n)
{
    __m512 xr[TILE_ROWS][2];
    UNROLL
    for (int r = 0; r < R; r++) {
        xr[r][0] = _mm512_maskz_loadu_ps(m0, x + r * x_stride);
        xr[r][1] = _mm512_maskz_loadu_ps(m1, x + r * x_stride + 16);
    }
    for (int j = 0; j < n + R - 1; j++) {
        float *oj = out + j * out_stride;
        const int first = j < n ? 0 : j - n + 1;     /* rows r see keys j < n + r */
        __m512 a0 = _mm512_maskz_loadu_ps(m0, oj), a1 = _mm512_maskz_loadu_ps(m1, oj + 16);
        UNROLL
        for (int r = 0; r < R; r++) {
            if (r < first) continue;
            const __m512 wj = _mm512_set1_ps(w[r * w_stride + j]);
            a0 = _mm512_fmadd_ps(wj, xr[r][0], a0);
            a1 = _mm512_fmadd_ps(wj, xr[r][1], a1);
        }
        _mm512_mask_storeu_ps(oj, m0, a0);
        _mm512_mask_storeu_ps(oj + 16, m1, a1);
    }
}

static inline __attribute__((always_inline)) void
outer_group(const int R, float *out, ptrdiff_t out_stride, const float *w, ptrdiff_t w_stride,
            const float *x, ptrdiff_t x_stride, int n, int dim)
{
    for (int d = 0; d < dim; d += TILE_COLS) {
        __mmask16 m0, m1;
        col_masks(dim - d, &m0, &m1);
        outer_rows(R, m0, m1, out + d, out_stride, w, w_stride, x + d, x_stride, n);
    }
}

/* ---- the kernels: tiles of TILE_ROWS rows, then the rows left (R < 8) */

#define ROWS_LEFT(call)                                                                  \
    switch (rows - r) {                                                                  \
    case 7: call(7); break;                                                              \
    case 6: call(6); break;                                                              \
    case 5: call(5); break;                                                              \
    case 4: call(4); break;                                                              \
    case 3: call(3); break;                                                              \
    case 2: call(2); break;                                                              \
    case 1: call(1); break;                                                              \
    default: break;                                                                      \
    }

void ngpt_f32_attn_scores__avx512(float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
                                  int rows, const float *k, ptrdiff_t k_stride, int n, int dim,
                                  float scale)
{
    const __m512 vs = _mm512_set1_ps(scale);
    int r = 0;
#define SCORES(R)                                                                        \
    scores_rows(R, s + r * s_stride, s_stride, q + r * q_stride, q_stride, k, k_stride, n, dim, vs)
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS) SCORES(TILE_ROWS);
    ROWS_LEFT(SCORES)
#undef SCORES
}

void ngpt_f32_attn_scores_t__avx512(float *s, ptrdiff_t s_stride, const float *q,
                                    ptrdiff_t q_stride, int rows, const float *kt,
                                    ptrdiff_t kt_stride, int n, int dim, float scale)
{
    int r = 0;
#define SCORES(R)                                                                        \
    scores_t_rows(R, s + r * s_stride, s_stride, q + r * q_stride, q_stride, kt, kt_stride, \
                  n + r, dim, scale)
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS) SCORES(TILE_ROWS);
    ROWS_LEFT(SCORES)
#undef SCORES
}

void ngpt_f32_attn_wsum__avx512(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                                int rows, const float *v, ptrdiff_t v_stride, int n, int step,
                                int dim)
{
    int r = 0;
#define WSUM(R)                                                                          \
    wsum_group(R, o + r * o_stride, o_stride, p + r * p_stride, p_stride, v, v_stride,    \
               n + step * r, step, dim)
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS) WSUM(TILE_ROWS);
    ROWS_LEFT(WSUM)
#undef WSUM
}

void ngpt_f32_outer_acc__avx512(float *out, ptrdiff_t out_stride, const float *w,
                                ptrdiff_t w_stride, const float *x, ptrdiff_t x_stride, int rows,
                                int n, int dim)
{
    int r = 0;
#define OUTER(R)                                                                         \
    outer_group(R, out, out_stride, w + r * w_stride, w_stride, x + r * x_stride, x_stride, n + r, dim)
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS) OUTER(TILE_ROWS);
    ROWS_LEFT(OUTER)
#undef OUTER
}
