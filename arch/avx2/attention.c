/* attention.c — AVX2 attention scores, weighted sum and the outer-product
 * accumulation of their backward, bit-identical to the reference: every
 * output is one fma chain in increasing index order, lanes hold different
 * outputs, leftovers run the reference.
 *  - scores: 8 keys side by side (lane = key); an 8x8 block of keys x dims is
 *    transposed in registers so each fma adds q[d] * k_j[d] to key j's chain;
 *    two such groups at a time (two chains in flight), and a last partial
 *    group whose spare lanes recompute a real key and are not stored.
 *  - scores_t, wsum, outer_acc: register tiles of up to 4 query rows x 16
 *    outputs (two vectors a row, 8 chains in flight); the inputs of one step
 *    of the chains (2 vectors of kt, v, or of the rows of dK/dV) are loaded
 *    once for the 4 rows. Causality inside a tile: the keys every row sees
 *    run for all rows, the last few (one more per row) only for the rows
 *    that see them. Column tails (< 8) run the reference.
 * Same shape as arch/neon/attention.c, which has 4 lanes where this has 8
 * (4x4 transposes) and runs the multi-row kernels one row at a time. */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"

/* r[i] = row i (8 floats) -> r[d] = column d. */
static inline void transpose8(__m256 r[8])
{
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* Chains of G groups of 8 keys at once (G independent fma chains hide the
 * fma latency); rows[g*8 + jj] is key jj of group g. Returns the G vectors
 * of finished chains (scaled) through out. */
static inline __attribute__((always_inline)) void
scores_groups(const int G, __m256 *out, const float *const *rows, const float *q, int dim,
              __m256 vs)
{
    const int d8 = dim - dim % 8;
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int d = 0; d < d8; d += 8) {
        __m256 r[2][8];
        for (int g = 0; g < G; g++) {
            for (int jj = 0; jj < 8; jj++) r[g][jj] = _mm256_loadu_ps(rows[g * 8 + jj] + d);
            transpose8(r[g]);
        }
        for (int dd = 0; dd < 8; dd++) {
            const __m256 qd = _mm256_set1_ps(q[d + dd]);
            for (int g = 0; g < G; g++) acc[g] = _mm256_fmadd_ps(qd, r[g][dd], acc[g]);
        }
    }
    for (int d = d8; d < dim; d++) {
        const __m256 qd = _mm256_set1_ps(q[d]);
        for (int g = 0; g < G; g++) {
            const float *const *k = rows + g * 8;
            __m256 col = _mm256_setr_ps(k[0][d], k[1][d], k[2][d], k[3][d], k[4][d], k[5][d],
                                        k[6][d], k[7][d]);
            acc[g] = _mm256_fmadd_ps(qd, col, acc[g]);
        }
    }
    for (int g = 0; g < G; g++) out[g] = _mm256_mul_ps(acc[g], vs);
}

void ngpt_f32_attn_scores__avx2(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                                int n, int dim, float scale)
{
    const __m256 vs = _mm256_set1_ps(scale);
    const float *rows[16];
    __m256 out[2];
    int j = 0;
    for (; j + 16 <= n; j += 16) {     /* two groups of 8 keys: two chains in flight */
        for (int jj = 0; jj < 16; jj++) rows[jj] = k + (j + jj) * k_stride;
        scores_groups(2, out, rows, q, dim, vs);
        _mm256_storeu_ps(s + j, out[0]);
        _mm256_storeu_ps(s + j + 8, out[1]);
    }
    if (j < n) {                       /* 1..15 keys left: lanes past n repeat key j */
        const int left = n - j, G = left > 8 ? 2 : 1;
        for (int jj = 0; jj < 8 * G; jj++) rows[jj] = k + (j + (jj < left ? jj : 0)) * k_stride;
        if (G == 2) scores_groups(2, out, rows, q, dim, vs);
        else scores_groups(1, out, rows, q, dim, vs);
        float t[16];
        _mm256_storeu_ps(t, out[0]);
        if (G == 2) _mm256_storeu_ps(t + 8, out[1]);
        for (int jj = 0; jj < left; jj++) s[j + jj] = t[jj];
    }
}

enum { TILE_ROWS = 4 };

/* The loops over a tile's rows and vectors run a known few times: unrolled,
 * the tile stays in registers. */
#define UNROLL _Pragma("GCC unroll 4")

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
 * j < n run for every row, then key n + t for the rows after t. */
static inline __attribute__((always_inline)) void
wsum_rows(const int R, const int V, float *o, ptrdiff_t o_stride, const float *p,
          ptrdiff_t p_stride, const float *v, ptrdiff_t v_stride, int n)
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
           const float *v, ptrdiff_t v_stride, int n, int dim)
{
    int d = 0;
    for (; d + 16 <= dim; d += 16) wsum_rows(R, 2, o + d, o_stride, p, p_stride, v + d, v_stride, n);
    for (; d + 8 <= dim; d += 8) wsum_rows(R, 1, o + d, o_stride, p, p_stride, v + d, v_stride, n);
    if (d < dim) ngpt_f32_attn_wsum_ref(o + d, o_stride, p, p_stride, R, v + d, v_stride, n, dim - d);
}

void ngpt_f32_attn_wsum__avx2(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                              int rows, const float *v, ptrdiff_t v_stride, int n, int dim)
{
    int r = 0;
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS)
        wsum_group(TILE_ROWS, o + r * o_stride, o_stride, p + r * p_stride, p_stride, v, v_stride,
                   n + r, dim);
    const int left = rows - r;
    float *orow = o + r * o_stride;
    const float *prow = p + r * p_stride;
    if (left == 3) wsum_group(3, orow, o_stride, prow, p_stride, v, v_stride, n + r, dim);
    if (left == 2) wsum_group(2, orow, o_stride, prow, p_stride, v, v_stride, n + r, dim);
    if (left == 1) wsum_group(1, orow, o_stride, prow, p_stride, v, v_stride, n + r, dim);
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
