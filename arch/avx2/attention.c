/* attention.c — AVX2 attention scores, weighted sum and the outer-product
 * accumulation of their backward, bit-identical to the reference: every
 * output is one fma chain in increasing index order, lanes hold different
 * outputs, leftovers run the reference.
 *  - scores: 8 keys side by side (lane = key); an 8x8 block of keys x dims is
 *    transposed in registers so each fma adds q[d] * k_j[d] to key j's chain,
 *    for up to 4 query rows (grouped-query heads) per transpose; one row
 *    takes two such groups at a time (two chains in flight); a last partial
 *    group's spare lanes recompute a real key and are not stored.
 *  - scores_t, wsum, outer_acc: register tiles of up to 4 query rows x 16
 *    outputs (two vectors a row, 8 chains in flight); the inputs of one step
 *    of the chains (2 vectors of kt, v, or of the rows of dK/dV) are loaded
 *    once for the 4 rows. Causality inside a tile: the keys every row sees
 *    run for all rows, the last few (one more per row) only for the rows
 *    that see them. Column tails (< 8) run the reference.
 * Same shape as arch/neon/attention.c, which has 4 lanes where this has 8
 * (4x4 transposes). */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"
#include "../transpose8.h"

/* The loops over a tile's rows and vectors run a known few times: unrolled,
 * the tile stays in registers. */
#define UNROLL _Pragma("GCC unroll 8")

/* attn_scores: query rows a transposed block of keys serves (their chains,
 * the block and a broadcast fill the 16 registers) */
enum { SCORE_ROWS = 4 };

/* The chains of R query rows (q_r = q + r*q_stride) against G groups of 8
 * keys (rows[g*8 + jj] is key jj of group g): each 8x8 block is transposed
 * once for the R rows; G*R independent fma chains hide the fma latency.
 * out[g*R + r] gets row r's finished chains of group g (scaled). */
static inline __attribute__((always_inline)) void
scores_groups(const int G, const int R, __m256 *out, const float *const *rows, const float *q,
              ptrdiff_t q_stride, int dim, __m256 vs)
{
    const int d8 = dim - dim % 8;
    __m256 acc[2][SCORE_ROWS];
    UNROLL
    for (int g = 0; g < G; g++)
        UNROLL
        for (int r = 0; r < R; r++) acc[g][r] = _mm256_setzero_ps();
    for (int d = 0; d < d8; d += 8) {
        __m256 kb[2][8];
        UNROLL
        for (int g = 0; g < G; g++) {
            UNROLL
            for (int jj = 0; jj < 8; jj++) kb[g][jj] = _mm256_loadu_ps(rows[g * 8 + jj] + d);
            transpose8(kb[g]);
        }
        UNROLL
        for (int dd = 0; dd < 8; dd++)
            UNROLL
            for (int r = 0; r < R; r++) {
                const __m256 qd = _mm256_broadcast_ss(q + r * q_stride + d + dd);
                UNROLL
                for (int g = 0; g < G; g++) acc[g][r] = _mm256_fmadd_ps(qd, kb[g][dd], acc[g][r]);
            }
    }
    for (int d = d8; d < dim; d++)
        UNROLL
        for (int g = 0; g < G; g++) {
            const float *const *k = rows + g * 8;
            const __m256 col = _mm256_setr_ps(k[0][d], k[1][d], k[2][d], k[3][d], k[4][d], k[5][d],
                                              k[6][d], k[7][d]);
            UNROLL
            for (int r = 0; r < R; r++)
                acc[g][r] = _mm256_fmadd_ps(_mm256_broadcast_ss(q + r * q_stride + d), col, acc[g][r]);
        }
    UNROLL
    for (int g = 0; g < G; g++)
        UNROLL
        for (int r = 0; r < R; r++) out[g * R + r] = _mm256_mul_ps(acc[g][r], vs);
}

/* R rows' scores against all n keys. One row takes two groups of 8 keys at
 * a time (two chains in flight); more rows one group, their chains in
 * flight. A last group of 1..15 keys repeats key j in the lanes past n,
 * which are not stored. */
static inline __attribute__((always_inline)) void
scores_rows(const int R, float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
            const float *k, ptrdiff_t k_stride, int n, int dim, __m256 vs)
{
    const int G = R == 1 ? 2 : 1;
    const float *rows[16];
    __m256 out[2 * SCORE_ROWS];
    int j = 0;
    for (; j + 8 * G <= n; j += 8 * G) {
        for (int jj = 0; jj < 8 * G; jj++) rows[jj] = k + (j + jj) * k_stride;
        /* the keys after next: a key is a few lines of a strided cache,
         * which the hardware prefetchers follow late */
        if (j + 24 * G <= n)
            for (int jj = 16 * G; jj < 24 * G; jj++)
                for (int d = 0; d < dim; d += 16)
                    _mm_prefetch((const char *)(k + (j + jj) * k_stride + d), _MM_HINT_T0);
        scores_groups(G, R, out, rows, q, q_stride, dim, vs);
        UNROLL
        for (int g = 0; g < G; g++)
            UNROLL
            for (int r = 0; r < R; r++) _mm256_storeu_ps(s + r * s_stride + j + 8 * g, out[g * R + r]);
    }
    if (j < n) {
        const int left = n - j, Gt = G == 2 && left > 8 ? 2 : 1;
        for (int jj = 0; jj < 8 * Gt; jj++) rows[jj] = k + (j + (jj < left ? jj : 0)) * k_stride;
        if (Gt == 2) scores_groups(2, R, out, rows, q, q_stride, dim, vs);
        else scores_groups(1, R, out, rows, q, q_stride, dim, vs);
        UNROLL
        for (int r = 0; r < R; r++) {
            float t[16];
            UNROLL
            for (int g = 0; g < Gt; g++) _mm256_storeu_ps(t + 8 * g, out[g * R + r]);
            for (int jj = 0; jj < left; jj++) s[r * s_stride + j + jj] = t[jj];
        }
    }
}

void ngpt_f32_attn_scores__avx2(float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
                                int rows, const float *k, ptrdiff_t k_stride, int n, int dim,
                                float scale)
{
    const __m256 vs = _mm256_set1_ps(scale);
    int r = 0;
    for (; r + SCORE_ROWS <= rows; r += SCORE_ROWS)
        scores_rows(SCORE_ROWS, s + r * s_stride, s_stride, q + r * q_stride, q_stride, k, k_stride,
                    n, dim, vs);
    float *sr = s + r * s_stride;
    const float *qr = q + r * q_stride;
    if (rows - r == 3) scores_rows(3, sr, s_stride, qr, q_stride, k, k_stride, n, dim, vs);
    if (rows - r == 2) scores_rows(2, sr, s_stride, qr, q_stride, k, k_stride, n, dim, vs);
    if (rows - r == 1) scores_rows(1, sr, s_stride, qr, q_stride, k, k_stride, n, dim, vs);
}

enum { TILE_ROWS = 4 };


/* Scores of R (<= 4) rows against keys j0..j0+15 (16 columns of kt); with
 * `masked`, only the columns of m0/m1 are read (the others give 0). */
static inline __attribute__((always_inline)) void
scores_t_tile(const int R, const bool masked, __m256i m0, __m256i m1, __m256 acc[TILE_ROWS][2],
              const float *q, ptrdiff_t q_stride, const float *kt, ptrdiff_t kt_stride, int dim)
{
    UNROLL
    for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int d = 0; d < dim; d++) {
        const float *k = kt + d * kt_stride;
        const __m256 k0 = masked ? _mm256_maskload_ps(k, m0) : _mm256_loadu_ps(k);
        const __m256 k1 = masked ? _mm256_maskload_ps(k + 8, m1) : _mm256_loadu_ps(k + 8);
        UNROLL
        for (int r = 0; r < R; r++) {
            const __m256 qd = _mm256_broadcast_ss(q + r * q_stride + d);
            acc[r][0] = _mm256_fmadd_ps(qd, k0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(qd, k1, acc[r][1]);
        }
    }
}

/* Stores each row's scores of the tile at key j: row r keeps n + r - j. */
static inline __attribute__((always_inline)) void
scores_t_store(const int R, __m256 acc[TILE_ROWS][2], float *s, ptrdiff_t s_stride, int n, int j,
               __m256 vs)
{
    UNROLL
    for (int r = 0; r < R; r++) {
        float *sr = s + r * s_stride + j;
        const __m256 s0 = _mm256_mul_ps(acc[r][0], vs), s1 = _mm256_mul_ps(acc[r][1], vs);
        const int keep = n + r - j;
        if (keep >= 16) {
            _mm256_storeu_ps(sr, s0), _mm256_storeu_ps(sr + 8, s1);
        } else if (keep > 0) {
            float t[16];
            _mm256_storeu_ps(t, s0), _mm256_storeu_ps(t + 8, s1);
            for (int jj = 0; jj < keep; jj++) sr[jj] = t[jj];
        }
    }
}

/* Rows r0..r0+R-1 of attn_scores_t: row r has n + r scores. Blocks of 16
 * keys up to the last row's count are computed for all R rows (the last
 * block with masked loads) and each row stores its own keys. */
static inline __attribute__((always_inline)) void
scores_t_rows(const int R, float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
              const float *kt, ptrdiff_t kt_stride, int n, int dim, float scale)
{
    const __m256 vs = _mm256_set1_ps(scale);
    const __m256i none = _mm256_setzero_si256();
    const int nmax = n + R - 1;
    __m256 acc[TILE_ROWS][2];
    int j = 0;
    for (; j + 16 <= nmax; j += 16) {
        scores_t_tile(R, false, none, none, acc, q, q_stride, kt + j, kt_stride, dim);
        scores_t_store(R, acc, s, s_stride, n, j, vs);
    }
    if (j < nmax) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nmax - j), lane);
        const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nmax - j - 8), lane);
        scores_t_tile(R, true, m0, m1, acc, q, q_stride, kt + j, kt_stride, dim);
        scores_t_store(R, acc, s, s_stride, n, j, vs);
    }
}

void ngpt_f32_attn_scores_t__avx2(float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
                                  int rows, const float *kt, ptrdiff_t kt_stride, int n, int dim,
                                  float scale)
{
    int r = 0;
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS)
        scores_t_rows(TILE_ROWS, s + r * s_stride, s_stride, q + r * q_stride, q_stride, kt,
                      kt_stride, n + r, dim, scale);
    const int left = rows - r;
    float *sr = s + r * s_stride;
    const float *qr = q + r * q_stride;
    if (left == 3) scores_t_rows(3, sr, s_stride, qr, q_stride, kt, kt_stride, n + r, dim, scale);
    if (left == 2) scores_t_rows(2, sr, s_stride, qr, q_stride, kt, kt_stride, n + r, dim, scale);
    if (left == 1) scores_t_rows(1, sr, s_stride, qr, q_stride, kt, kt_stride, n + r, dim, scale);
}

/* Columns d..d+8*V-1 (V = 1 or 2 vectors) of R rows of attn_wsum: the keys
 * j < n run for every row, then (step 1) key n + t for the rows after t. */
static inline __attribute__((always_inline)) void
wsum_rows(const int R, const int V, float *o, ptrdiff_t o_stride, const float *p,
          ptrdiff_t p_stride, const float *v, ptrdiff_t v_stride, int n, int step)
{
    __m256 acc[TILE_ROWS][2];
    UNROLL
    for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int j = 0; j < n; j++) {
        const float *vj = v + j * v_stride;
        __m256 vv[2];
        UNROLL
        for (int c = 0; c < V; c++) vv[c] = _mm256_loadu_ps(vj + 8 * c);
        UNROLL
        for (int r = 0; r < R; r++) {
            const __m256 pj = _mm256_broadcast_ss(p + r * p_stride + j);
            UNROLL
            for (int c = 0; c < V; c++) acc[r][c] = _mm256_fmadd_ps(pj, vv[c], acc[r][c]);
        }
    }
    if (step)     /* causal rows: each next row's one more key */
        UNROLL
        for (int t = 0; t + 1 < R; t++) {
            const float *vj = v + (n + t) * v_stride;
            __m256 vv[2];
            UNROLL
            for (int c = 0; c < V; c++) vv[c] = _mm256_loadu_ps(vj + 8 * c);
            UNROLL
            for (int r = t + 1; r < R; r++) {
                const __m256 pj = _mm256_broadcast_ss(p + r * p_stride + n + t);
                UNROLL
                for (int c = 0; c < V; c++) acc[r][c] = _mm256_fmadd_ps(pj, vv[c], acc[r][c]);
            }
        }
    UNROLL
    for (int r = 0; r < R; r++)
        UNROLL
        for (int c = 0; c < V; c++) _mm256_storeu_ps(o + r * o_stride + 8 * c, acc[r][c]);
}

static inline __attribute__((always_inline)) void
wsum_group(const int R, float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
           const float *v, ptrdiff_t v_stride, int n, int step, int dim)
{
    int d = 0;
    for (; d + 16 <= dim; d += 16)
        wsum_rows(R, 2, o + d, o_stride, p, p_stride, v + d, v_stride, n, step);
    for (; d + 8 <= dim; d += 8)
        wsum_rows(R, 1, o + d, o_stride, p, p_stride, v + d, v_stride, n, step);
    if (d < dim)
        ngpt_f32_attn_wsum_ref(o + d, o_stride, p, p_stride, R, v + d, v_stride, n, step, dim - d);
}

void ngpt_f32_attn_wsum__avx2(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                              int rows, const float *v, ptrdiff_t v_stride, int n, int step,
                              int dim)
{
    int r = 0;
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS)
        wsum_group(TILE_ROWS, o + r * o_stride, o_stride, p + r * p_stride, p_stride, v, v_stride,
                   n + step * r, step, dim);
    const int left = rows - r, nr = n + step * r;
    float *orow = o + r * o_stride;
    const float *prow = p + r * p_stride;
    if (left == 3) wsum_group(3, orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim);
    if (left == 2) wsum_group(2, orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim);
    if (left == 1) wsum_group(1, orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim);
}

/* Columns d..d+8*V-1 of the outputs, R rows: each out_j is loaded once, takes
 * the fma of every row that sees key j, in row order, and is stored. */
static inline __attribute__((always_inline)) void
outer_rows(const int R, const int V, float *out, ptrdiff_t out_stride, const float *w,
           ptrdiff_t w_stride, const float *x, ptrdiff_t x_stride, int n)
{
    __m256 xr[TILE_ROWS][2];
    UNROLL
    for (int r = 0; r < R; r++)
        UNROLL
        for (int c = 0; c < V; c++) xr[r][c] = _mm256_loadu_ps(x + r * x_stride + 8 * c);
    for (int j = 0; j < n + R - 1; j++) {
        float *oj = out + j * out_stride;
        const int first = j < n ? 0 : j - n + 1;     /* rows r see keys j < n + r */
        __m256 acc[2];
        UNROLL
        for (int c = 0; c < V; c++) acc[c] = _mm256_loadu_ps(oj + 8 * c);
        UNROLL
        for (int r = 0; r < R; r++) {
            if (r < first) continue;
            const __m256 wj = _mm256_broadcast_ss(w + r * w_stride + j);
            UNROLL
            for (int c = 0; c < V; c++) acc[c] = _mm256_fmadd_ps(wj, xr[r][c], acc[c]);
        }
        UNROLL
        for (int c = 0; c < V; c++) _mm256_storeu_ps(oj + 8 * c, acc[c]);
    }
}

static inline __attribute__((always_inline)) void
outer_group(const int R, float *out, ptrdiff_t out_stride, const float *w, ptrdiff_t w_stride,
            const float *x, ptrdiff_t x_stride, int n, int dim)
{
    int d = 0;
    for (; d + 16 <= dim; d += 16) outer_rows(R, 2, out + d, out_stride, w, w_stride, x + d, x_stride, n);
    for (; d + 8 <= dim; d += 8) outer_rows(R, 1, out + d, out_stride, w, w_stride, x + d, x_stride, n);
    if (d < dim)
        ngpt_f32_outer_acc_ref(out + d, out_stride, w, w_stride, x + d, x_stride, R, n, dim - d);
}

void ngpt_f32_outer_acc__avx2(float *out, ptrdiff_t out_stride, const float *w, ptrdiff_t w_stride,
                              const float *x, ptrdiff_t x_stride, int rows, int n, int dim)
{
    int r = 0;
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS)
        outer_group(TILE_ROWS, out, out_stride, w + r * w_stride, w_stride, x + r * x_stride,
                    x_stride, n + r, dim);
    const int left = rows - r;
    const float *wr = w + r * w_stride, *xr = x + r * x_stride;
    if (left == 3) outer_group(3, out, out_stride, wr, w_stride, xr, x_stride, n + r, dim);
    if (left == 2) outer_group(2, out, out_stride, wr, w_stride, xr, x_stride, n + r, dim);
    if (left == 1) outer_group(1, out, out_stride, wr, w_stride, xr, x_stride, n + r, dim);
}
