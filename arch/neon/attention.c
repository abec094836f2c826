/* attention.c — NEON attention scores, weighted sum and the outer-product
 * accumulation of their backward, bit-identical to the reference: every
 * output is one fmaf chain in increasing index order, lanes hold different
 * outputs, leftovers run the reference.
 *  - scores: 4 keys side by side (lane = key); a 4x4 block of keys x dims is
 *    transposed in registers so each fma adds q[d] * k_j[d] to key j's chain,
 *    for up to 4 query rows (grouped-query heads) per transpose.
 *  - scores_t, wsum, outer_acc: register tiles of up to 4 query rows x 4*TV
 *    outputs (AArch64: 16, four vectors a row; ARMv7, 16 registers: 8, two
 *    vectors a row); the inputs of one step of the chains (TV vectors of kt,
 *    v, or of the rows of dK/dV) are loaded once for the 4 rows. Causality
 *    inside a tile: the keys every row sees run for all rows, the last few
 *    (one more per row) only for the rows that see them. Output tails of
 *    4 or more run one vector a row, the rest (< 4) the reference.
 * Same shape as arch/avx2/attention.c (8 lanes there, 16 outputs a row).
 * ARMv7: a tile (or a block of outputs) whose results flushed is
 * recomputed by the reference before any of it is stored (kernels_neon.h,
 * "the flush check"). */
#include <math.h>
#include <arm_neon.h>

#include "kernels_neon.h"

/* Scores of 4 keys at a time for up to SCORE_ROWS query rows: 4x4 blocks of
 * K (rows j, columns d) are transposed once so one vector holds k_j[d] for
 * the 4 keys, and each row's lanes get fmaf(q_r[d], k_j[d], acc) for d = 0,
 * 1, 2, ... */
enum { SCORE_ROWS = 4 };

static inline __attribute__((always_inline)) void
scores_rows(const int R, float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
            const float *k, ptrdiff_t k_stride, int n, int dim, float scale)
{
    int j = 0;
    const int d4 = dim - dim % 4;
    for (; j + 4 <= n; j += 4) {
        const float *k0 = k + j * k_stride, *k1 = k0 + k_stride, *k2 = k1 + k_stride,
                    *k3 = k2 + k_stride;
        float32x4_t acc[SCORE_ROWS];
        for (int r = 0; r < R; r++) acc[r] = vdupq_n_f32(0.0f);
        int d = 0;
        for (; d < d4; d += 4) {
            /* rows r0..r3 -> columns t0..t3 (t_x[l] = k_l[d+x]) */
            const float32x4x2_t p01 = vtrnq_f32(vld1q_f32(k0 + d), vld1q_f32(k1 + d));
            const float32x4x2_t p23 = vtrnq_f32(vld1q_f32(k2 + d), vld1q_f32(k3 + d));
            const float32x4_t t0 = vcombine_f32(vget_low_f32(p01.val[0]), vget_low_f32(p23.val[0]));
            const float32x4_t t1 = vcombine_f32(vget_low_f32(p01.val[1]), vget_low_f32(p23.val[1]));
            const float32x4_t t2 = vcombine_f32(vget_high_f32(p01.val[0]), vget_high_f32(p23.val[0]));
            const float32x4_t t3 = vcombine_f32(vget_high_f32(p01.val[1]), vget_high_f32(p23.val[1]));
            for (int r = 0; r < R; r++) {
                const float *qr = q + r * q_stride + d;
                acc[r] = vfmaq_f32(acc[r], vdupq_n_f32(qr[0]), t0);
                acc[r] = vfmaq_f32(acc[r], vdupq_n_f32(qr[1]), t1);
                acc[r] = vfmaq_f32(acc[r], vdupq_n_f32(qr[2]), t2);
                acc[r] = vfmaq_f32(acc[r], vdupq_n_f32(qr[3]), t3);
            }
        }
        for (; d < dim; d++) {
            float32x4_t t = vdupq_n_f32(k0[d]);
            t = vsetq_lane_f32(k1[d], t, 1);
            t = vsetq_lane_f32(k2[d], t, 2);
            t = vsetq_lane_f32(k3[d], t, 3);
            for (int r = 0; r < R; r++) acc[r] = vfmaq_f32(acc[r], vdupq_n_f32(q[r * q_stride + d]), t);
        }
        float32x4_t sj[SCORE_ROWS];
        for (int r = 0; r < R; r++) sj[r] = vmulq_f32(acc[r], vdupq_n_f32(scale));
        if (neon_flushed(sj[0], sj[R > 1 ? 1 : 0], sj[R > 2 ? 2 : 0], sj[R - 1])) {
            ngpt_f32_attn_scores_ref(s + j, s_stride, q, q_stride, R, k0, k_stride, 4, dim, scale);
            neon_flags_clear();
            continue;
        }
        for (int r = 0; r < R; r++) vst1q_f32(s + r * s_stride + j, sj[r]);
    }
    ngpt_f32_attn_scores_ref(s + j, s_stride, q, q_stride, R, k + j * k_stride, k_stride, n - j,
                             dim, scale);
}

void ngpt_f32_attn_scores__neon(float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
                                int rows, const float *k, ptrdiff_t k_stride, int n, int dim,
                                float scale)
{
    neon_flags_clear();
    int r = 0;
    for (; r + SCORE_ROWS <= rows; r += SCORE_ROWS)
        scores_rows(SCORE_ROWS, s + r * s_stride, s_stride, q + r * q_stride, q_stride, k, k_stride,
                    n, dim, scale);
    float *sr = s + r * s_stride;
    const float *qr = q + r * q_stride;
    if (rows - r == 3) scores_rows(3, sr, s_stride, qr, q_stride, k, k_stride, n, dim, scale);
    if (rows - r == 2) scores_rows(2, sr, s_stride, qr, q_stride, k, k_stride, n, dim, scale);
    if (rows - r == 1) scores_rows(1, sr, s_stride, qr, q_stride, k, k_stride, n, dim, scale);
}

enum { TILE_ROWS = 4 };
#if defined(__aarch64__)
enum { TV = 4 };        /* vectors a tile row: 16 accumulators + 4 inputs + the broadcasts */
#else
enum { TV = 2 };        /* ARMv7: 8 accumulators + 2 inputs + the broadcasts */
#endif

/* Whether any of the V (<= 4) results of one row flushed (ARMv7; false
 * on AArch64). */
#define ROW_FLUSHED(x, V)                                                                \
    neon_flushed((x)[0], (x)[(V) > 1 ? 1 : 0], (x)[(V) > 2 ? 2 : 0], (x)[(V) > 3 ? 3 : 0])

/* Whether any of the R x V results flushed: every row's are operands of the
 * flag reads, and no flag is cleared in between. */
#define TILE_FLUSHED(f, x, R, V)                                                         \
    {                                                                                    \
        f = false;                                                                       \
        UNROLL                                                                           \
        for (int r_ = 0; r_ < (R); r_++) f |= ROW_FLUSHED((x)[r_], V);                   \
    }

/* Scores of R (<= 4) rows against the 4V keys j0.. of kt (its columns). */
static inline __attribute__((always_inline)) void
scores_t_tile(const int R, const int V, float32x4_t acc[TILE_ROWS][TV], const float *q,
              ptrdiff_t q_stride, const float *kt, ptrdiff_t kt_stride, int dim)
{
    UNROLL
    for (int r = 0; r < R; r++)
        UNROLL
        for (int c = 0; c < V; c++) acc[r][c] = vdupq_n_f32(0.0f);
    for (int d = 0; d < dim; d++) {
        const float *k = kt + d * kt_stride;
        float32x4_t kv[TV];
        UNROLL
        for (int c = 0; c < V; c++) kv[c] = vld1q_f32(k + 4 * c);
        UNROLL
        for (int r = 0; r < R; r++) {
            const neon_bcast qd = neon_bcast_load(q + r * q_stride + d);
            UNROLL
            for (int c = 0; c < V; c++) acc[r][c] = neon_fma_bcast(acc[r][c], kv[c], qd);
        }
    }
}

/* The 4V scores from key j of R rows (rows r0..r0+R-1 of the call, row r
 * seeing n + r keys): computed for all R rows, each row stores its own. */
static inline __attribute__((always_inline)) void
scores_t_block(const int R, const int V, float *s, ptrdiff_t s_stride, const float *q,
               ptrdiff_t q_stride, const float *kt, ptrdiff_t kt_stride, int n, int j, int dim,
               float scale)
{
    float32x4_t acc[TILE_ROWS][TV];
    scores_t_tile(R, V, acc, q, q_stride, kt + j, kt_stride, dim);
    UNROLL
    for (int r = 0; r < R; r++)
        UNROLL
        for (int c = 0; c < V; c++) acc[r][c] = vmulq_f32(acc[r][c], vdupq_n_f32(scale));
    bool flushed;
    TILE_FLUSHED(flushed, acc, R, V)
    if (flushed) {
        for (int r = 0; r < R; r++) {
            const int keep = n + r - j < 4 * V ? n + r - j : 4 * V;
            if (keep > 0)
                ngpt_f32_attn_scores_t_ref(s + r * s_stride + j, 0, q + r * q_stride, 0, 1, kt + j,
                                           kt_stride, keep, dim, scale);
        }
        neon_flags_clear();
        return;
    }
    UNROLL
    for (int r = 0; r < R; r++) {
        float *sr = s + r * s_stride + j;
        const int keep = n + r - j;
        if (keep >= 4 * V) {
            UNROLL
            for (int c = 0; c < V; c++) vst1q_f32(sr + 4 * c, acc[r][c]);
        } else if (keep > 0) {
            float t[4 * TV];
            UNROLL
            for (int c = 0; c < V; c++) vst1q_f32(t + 4 * c, acc[r][c]);
            for (int jj = 0; jj < keep; jj++) sr[jj] = t[jj];
        }
    }
}

/* Rows r0..r0+R-1 of attn_scores_t: row r has n + r scores. Blocks of 4V
 * keys up to the last row's count, then of 4, then the reference for the
 * last (< 4: no read past column n + R - 2 of kt). */
static inline __attribute__((always_inline)) void
scores_t_rows(const int R, float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
              const float *kt, ptrdiff_t kt_stride, int n, int dim, float scale)
{
    const int nmax = n + R - 1;
    int j = 0;
    for (; j + 4 * TV <= nmax; j += 4 * TV)
        scores_t_block(R, TV, s, s_stride, q, q_stride, kt, kt_stride, n, j, dim, scale);
    for (; j + 4 <= nmax; j += 4)
        scores_t_block(R, 1, s, s_stride, q, q_stride, kt, kt_stride, n, j, dim, scale);
    if (j < nmax)
        ngpt_f32_attn_scores_t_ref(s + j, s_stride, q, q_stride, R, kt + j, kt_stride, n - j, dim, scale);
}

/* One function per row count, each with the registers to itself (inlined
 * together they keep strides on the stack in the k loops). */
#define SCORES_T_FN(R)                                                                   \
    static __attribute__((noinline)) void scores_t_rows##R(                              \
        float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride, const float *kt, \
        ptrdiff_t kt_stride, int n, int dim, float scale)                                \
    {                                                                                    \
        scores_t_rows(R, s, s_stride, q, q_stride, kt, kt_stride, n, dim, scale);        \
    }
SCORES_T_FN(1) SCORES_T_FN(2) SCORES_T_FN(3) SCORES_T_FN(4)

void ngpt_f32_attn_scores_t__neon(float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
                                  int rows, const float *kt, ptrdiff_t kt_stride, int n, int dim,
                                  float scale)
{
    neon_flags_clear();
    int r = 0;
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS)
        scores_t_rows4(s + r * s_stride, s_stride, q + r * q_stride, q_stride, kt, kt_stride, n + r,
                       dim, scale);
    const int left = rows - r;
    float *sr = s + r * s_stride;
    const float *qr = q + r * q_stride;
    if (left == 3) scores_t_rows3(sr, s_stride, qr, q_stride, kt, kt_stride, n + r, dim, scale);
    if (left == 2) scores_t_rows2(sr, s_stride, qr, q_stride, kt, kt_stride, n + r, dim, scale);
    if (left == 1) scores_t_rows1(sr, s_stride, qr, q_stride, kt, kt_stride, n + r, dim, scale);
}

/* Columns d..d+4V-1 of R rows of attn_wsum: the keys j < n run for every
 * row, then (step 1) key n + t for the rows after t. */
static inline __attribute__((always_inline)) void
wsum_rows(const int R, const int V, float *o, ptrdiff_t o_stride, const float *p,
          ptrdiff_t p_stride, const float *v, ptrdiff_t v_stride, int n, int step)
{
    float32x4_t acc[TILE_ROWS][TV];
    UNROLL
    for (int r = 0; r < R; r++)
        UNROLL
        for (int c = 0; c < V; c++) acc[r][c] = vdupq_n_f32(0.0f);
    for (int j = 0; j < n; j++) {
        const float *vj = v + j * v_stride;
        float32x4_t vv[TV];
        UNROLL
        for (int c = 0; c < V; c++) vv[c] = vld1q_f32(vj + 4 * c);
        UNROLL
        for (int r = 0; r < R; r++) {
            const neon_bcast pj = neon_bcast_load(p + r * p_stride + j);
            UNROLL
            for (int c = 0; c < V; c++) acc[r][c] = neon_fma_bcast(acc[r][c], vv[c], pj);
        }
    }
    if (step)     /* causal rows: each next row's one more key */
        UNROLL
        for (int t = 0; t + 1 < R; t++) {
            const float *vj = v + (n + t) * v_stride;
            float32x4_t vv[TV];
            UNROLL
            for (int c = 0; c < V; c++) vv[c] = vld1q_f32(vj + 4 * c);
            UNROLL
            for (int r = t + 1; r < R; r++) {
                const neon_bcast pj = neon_bcast_load(p + r * p_stride + n + t);
                UNROLL
                for (int c = 0; c < V; c++) acc[r][c] = neon_fma_bcast(acc[r][c], vv[c], pj);
            }
        }
    bool flushed;
    TILE_FLUSHED(flushed, acc, R, V)
    if (flushed) {
        ngpt_f32_attn_wsum_ref(o, o_stride, p, p_stride, R, v, v_stride, n, step, 4 * V);
        neon_flags_clear();
        return;
    }
    UNROLL
    for (int r = 0; r < R; r++)
        UNROLL
        for (int c = 0; c < V; c++) vst1q_f32(o + r * o_stride + 4 * c, acc[r][c]);
}

#define WSUM_FN(R)                                                                       \
    static __attribute__((noinline)) void wsum_group##R(float *o, ptrdiff_t o_stride,     \
                                                         const float *p, ptrdiff_t p_stride, \
                                                         const float *v, ptrdiff_t v_stride, \
                                                         int n, int step, int dim)        \
    {                                                                                    \
        int d = 0;                                                                       \
        for (; d + 4 * TV <= dim; d += 4 * TV)                                           \
            wsum_rows(R, TV, o + d, o_stride, p, p_stride, v + d, v_stride, n, step);    \
        for (; d + 4 <= dim; d += 4)                                                     \
            wsum_rows(R, 1, o + d, o_stride, p, p_stride, v + d, v_stride, n, step);     \
        if (d < dim)                                                                     \
            ngpt_f32_attn_wsum_ref(o + d, o_stride, p, p_stride, R, v + d, v_stride, n, step, \
                                   dim - d);                                             \
    }
WSUM_FN(1) WSUM_FN(2) WSUM_FN(3) WSUM_FN(4)

void ngpt_f32_attn_wsum__neon(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                              int rows, const float *v, ptrdiff_t v_stride, int n, int step,
                              int dim)
{
    neon_flags_clear();
    int r = 0;
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS)
        wsum_group4(o + r * o_stride, o_stride, p + r * p_stride, p_stride, v, v_stride,
                    n + step * r, step, dim);
    const int left = rows - r, nr = n + step * r;
    float *orow = o + r * o_stride;
    const float *prow = p + r * p_stride;
    if (left == 3) wsum_group3(orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim);
    if (left == 2) wsum_group2(orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim);
    if (left == 1) wsum_group1(orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim);
}

/* out_j[d..d+cols) of rows first..R-1 in order, in scalar (ARMv7: a block
 * that flushed). */
static void outer_ref_j(float *oj, const float *w, ptrdiff_t w_stride, const float *x,
                        ptrdiff_t x_stride, int first, int R, int j, int cols)
{
    for (int r = first; r < R; r++)
        for (int dd = 0; dd < cols; dd++) oj[dd] = fmaf(w[r * w_stride + j], x[r * x_stride + dd], oj[dd]);
}

/* out_j[d..d+4V) += the fmas of rows r0..R-1 (those that see key j), in row
 * order: loaded once, stored once. wr[r] points at w_r[j]. */
static inline __attribute__((always_inline)) void
outer_key(const int R, const int V, const int r0, float *oj, float32x4_t xr[TILE_ROWS][TV],
          const float *const wr[TILE_ROWS], const float *w, ptrdiff_t w_stride, const float *x,
          ptrdiff_t x_stride, int j)
{
    float32x4_t acc[TV];
    UNROLL
    for (int c = 0; c < V; c++) acc[c] = vld1q_f32(oj + 4 * c);
    UNROLL
    for (int r = r0; r < R; r++) {
        const neon_bcast wj = neon_bcast_load(wr[r]);
        UNROLL
        for (int c = 0; c < V; c++) acc[c] = neon_fma_bcast(acc[c], xr[r][c], wj);
    }
    if (ROW_FLUSHED(acc, V)) {
        outer_ref_j(oj, w, w_stride, x, x_stride, r0, R, j, 4 * V);
        neon_flags_clear();
        return;
    }
    UNROLL
    for (int c = 0; c < V; c++) vst1q_f32(oj + 4 * c, acc[c]);
}

/* Columns d..d+4V-1 of the outputs, R rows: the keys j < n take every row,
 * then key n + t the rows after t. */
static inline __attribute__((always_inline)) void
outer_rows(const int R, const int V, float *out, ptrdiff_t out_stride, const float *w,
           ptrdiff_t w_stride, const float *x, ptrdiff_t x_stride, int n)
{
    float32x4_t xr[TILE_ROWS][TV];
    const float *wr[TILE_ROWS];
    UNROLL
    for (int r = 0; r < R; r++) {
        wr[r] = w + r * w_stride;
        UNROLL
        for (int c = 0; c < V; c++) xr[r][c] = vld1q_f32(x + r * x_stride + 4 * c);
    }
    float *oj = out;
    for (int j = 0; j < n; j++, oj += out_stride) {
        outer_key(R, V, 0, oj, xr, wr, w, w_stride, x, x_stride, j);
        UNROLL
        for (int r = 0; r < R; r++) wr[r]++;
    }
    UNROLL
    for (int t = 0; t + 1 < R; t++, oj += out_stride) {
        outer_key(R, V, t + 1, oj, xr, wr, w, w_stride, x, x_stride, n + t);
        UNROLL
        for (int r = 0; r < R; r++) wr[r]++;
    }
}

#define OUTER_FN(R)                                                                      \
    static __attribute__((noinline)) void outer_group##R(float *out, ptrdiff_t out_stride, \
                                                          const float *w, ptrdiff_t w_stride, \
                                                          const float *x, ptrdiff_t x_stride, \
                                                          int n, int dim)                 \
    {                                                                                    \
        int d = 0;                                                                       \
        for (; d + 4 * TV <= dim; d += 4 * TV)                                           \
            outer_rows(R, TV, out + d, out_stride, w, w_stride, x + d, x_stride, n);     \
        for (; d + 4 <= dim; d += 4)                                                     \
            outer_rows(R, 1, out + d, out_stride, w, w_stride, x + d, x_stride, n);      \
        if (d < dim)                                                                     \
            ngpt_f32_outer_acc_ref(out + d, out_stride, w, w_stride, x + d, x_stride, R, n, dim - d); \
    }
OUTER_FN(1) OUTER_FN(2) OUTER_FN(3) OUTER_FN(4)

void ngpt_f32_outer_acc__neon(float *out, ptrdiff_t out_stride, const float *w, ptrdiff_t w_stride,
                              const float *x, ptrdiff_t x_stride, int rows, int n, int dim)
{
    neon_flags_clear();
    int r = 0;
    for (; r + TILE_ROWS <= rows; r += TILE_ROWS)
        outer_group4(out, out_stride, w + r * w_stride, w_stride, x + r * x_stride, x_stride, n + r,
                     dim);
    const int left = rows - r;
    const float *wr = w + r * w_stride, *xr = x + r * x_stride;
    if (left == 3) outer_group3(out, out_stride, wr, w_stride, xr, x_stride, n + r, dim);
    if (left == 2) outer_group2(out, out_stride, wr, w_stride, xr, x_stride, n + r, dim);
    if (left == 1) outer_group1(out, out_stride, wr, w_stride, xr, x_stride, n + r, dim);
}
