/* gemm.c — AVX2 matrix products, bit-identical to the reference: every
 * output is one fma chain over k in increasing order from +0.0f (one lane of
 * _mm256_fmadd_ps per k is exactly fmaf), then + bias, then added to the old
 * C when accumulating. Vectorised across 16 output columns (two __m256),
 * never across k.
 *
 *  - gemm, and gemm_packed for m > 8: the shared cache-blocked driver
 *    (arch/gemm_blocked.h) around a 6x16 register tile: 12 accumulators, two
 *    B vectors and one A broadcast = 15 of the 16 ymm registers; 12
 *    independent fma chains cover the 2 pipes x 4 cycles of fma latency.
 *  - gemm_packed for m <= 2 (decode steps): blocks of rows x panels with 8
 *    chains in flight that stream the packed panels once from L3/memory,
 *    with software prefetch of the next panels; 3 to 16 rows (short passes,
 *    beams, batches): blocks of up to 6 rows against one panel at a time,
 *    each panel streamed once for all of them (below).
 * arch/neon/gemm.c has the same shape with four float32x4_t per tile row. */
#include <immintrin.h>

#include "../gemm_blocked.h"
#include "../prefetch_ahead.h"
#include "kernels_avx2.h"


/* ---- the 6x16 tile of the blocked driver */

/* acc = cin or 0 for one row's two vectors */
#define TILE_INIT(r)                                                                     \
    __m256 c##r##0 = _mm256_setzero_ps(), c##r##1 = _mm256_setzero_ps();                 \
    if (io->cin) {                                                                       \
        c##r##0 = _mm256_loadu_ps(io->cin + (r) * io->cin_rs);                           \
        c##r##1 = _mm256_loadu_ps(io->cin + (r) * io->cin_rs + 8);                       \
    }
#define TILE_FMA(r)                                                                      \
    av = _mm256_broadcast_ss(a##r + o);                                                  \
    c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0), c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);
#define TILE_STORE(r) store_row(io, r, c##r##0, c##r##1)

/* Row r of a finished tile: + bias, then the old C + acc (the reference's order). */
static inline void store_row(const ngpt_gemm_tile_io *io, int r, __m256 lo, __m256 hi)
{
    if (io->bias) {
        lo = _mm256_add_ps(lo, _mm256_loadu_ps(io->bias));
        hi = _mm256_add_ps(hi, _mm256_loadu_ps(io->bias + 8));
    }
    if (io->cadd) {
        lo = _mm256_add_ps(_mm256_loadu_ps(io->cadd + r * io->cadd_rs), lo);
        hi = _mm256_add_ps(_mm256_loadu_ps(io->cadd + r * io->cadd_rs + 8), hi);
    }
    _mm256_storeu_ps(io->cout + r * io->cout_rs, lo);
    _mm256_storeu_ps(io->cout + r * io->cout_rs + 8, hi);
}

static void tile_6x16(int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                      const ngpt_gemm_tile_io *io)
{
    TILE_INIT(0) TILE_INIT(1) TILE_INIT(2) TILE_INIT(3) TILE_INIT(4) TILE_INIT(5)
    const float *a0 = a, *a1 = a + a_rs, *a2 = a + 2 * a_rs, *a3 = a + 3 * a_rs;
    const float *a4 = a + 4 * a_rs, *a5 = a + 5 * a_rs;
    ptrdiff_t o = 0;
    for (int kk = 0; kk < kc; kk++, bp += NR, o += a_cs) {
        const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        __m256 av;
        TILE_FMA(0) TILE_FMA(1) TILE_FMA(2) TILE_FMA(3) TILE_FMA(4) TILE_FMA(5)
    }
    TILE_STORE(0); TILE_STORE(1); TILE_STORE(2); TILE_STORE(3); TILE_STORE(4); TILE_STORE(5);
}

void ngpt_f32_gemm__avx2(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate, float *work)
{
    ngpt_gemm_blocked(tile_6x16, m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, NULL, bias, c, c_rs,
                      accumulate, work);
}

/* ---- m <= 8 on packed panels: the blocks of arch/gemv.h with two __m256
 * per panel row. */
#define GV_VEC __m256
#define GV_ACC(r, p) __m256 s##r##p##0 = _mm256_setzero_ps(), s##r##p##1 = _mm256_setzero_ps();
#define GV_LOAD(p)                                                                       \
    __m256 w##p##0 = _mm256_setzero_ps(), w##p##1 = w##p##0;                             \
    if (P > p) {                                                                         \
        const float *wk = w + (p) * ps + (size_t)kk * NR;                                \
        w##p##0 = _mm256_loadu_ps(wk), w##p##1 = _mm256_loadu_ps(wk + 8);                \
    }
#define GV_PREFETCH(p, ahead)                                                            \
    if (P > p) _mm_prefetch((const char *)(w + (p) * ps + (ahead)), _MM_HINT_T0);
#define GV_BROADCAST(x) _mm256_broadcast_ss(x)
#define GV_FMA(r, p)                                                                     \
    if (R > r && P > p) {                                                                \
        s##r##p##0 = _mm256_fmadd_ps(av, w##p##0, s##r##p##0);                            \
        s##r##p##1 = _mm256_fmadd_ps(av, w##p##1, s##r##p##1);                            \
    }
#define GV_STORE(r, p)                                                                   \
    if (R > r && P > p)                                                                  \
        avx2_store16(c + (r) * c_rs + (p) * NR, s##r##p##0, s##r##p##1,                  \
                     bias ? bias + (p) * NR : NULL, n - (p) * NR);

#include "../gemv.h"

/* ---- pack_w: each panel's 16 rows of W turned into k rows of 16 floats,
 * four 4x4 blocks per 4 k (a copy, so the bits are W's; the reference packs
 * a last partial panel and the k % 4 tail). It repacks every weight when
 * generation starts, which a scalar element-by-element copy made cost as
 * much as a short prompt's prefill. */
void ngpt_f32_pack_w__avx2(float *wp, const float *w, int n, int k, ptrdiff_t w_rs)
{
    const int k4 = k - k % 4, nfull = n - n % NR;
    for (int j0 = 0; j0 < nfull; j0 += NR) {
        float *panel = wp + (size_t)(j0 / NR) * (size_t)k * NR;
        const float *rows = w + j0 * w_rs;
        for (int kk = 0; kk < k4; kk += 4)
            for (int g = 0; g < NR; g += 4) {
                const float *r = rows + g * w_rs + kk;
                __m128 c0 = _mm_loadu_ps(r), c1 = _mm_loadu_ps(r + w_rs);
                __m128 c2 = _mm_loadu_ps(r + 2 * w_rs), c3 = _mm_loadu_ps(r + 3 * w_rs);
                _MM_TRANSPOSE4_PS(c0, c1, c2, c3);
                float *d = panel + (size_t)kk * NR + g;
                _mm_storeu_ps(d, c0), _mm_storeu_ps(d + NR, c1);
                _mm_storeu_ps(d + 2 * NR, c2), _mm_storeu_ps(d + 3 * NR, c3);
            }
        for (int kk = k4; kk < k; kk++)
            for (int jj = 0; jj < NR; jj++) panel[(size_t)kk * NR + jj] = rows[jj * w_rs + kk];
    }
    if (nfull < n)
        ngpt_f32_pack_w_ref(wp + (size_t)(nfull / NR) * (size_t)k * NR, w + nfull * w_rs,
                            n - nfull, k, w_rs);
}

/* ---- 3 <= m <= 16 on packed panels (a short pass: a speculative check, a
 * short prompt, a batch): R <= 6 rows x one panel, 2R chains (12 accumulators, two
 * panel vectors and a broadcast: 15 of the 16 ymm), so each panel streams
 * once, first line to last, for every row of the pass, with the 8-bit
 * products' prefetch (prefetch_ahead.h: the panels are contiguous, so
 * ahead of one panel is the next). The gemv groups above take the rows
 * four at a time: a 5-position pass walked each group of panels twice,
 * streaming it with one panel's four rows and rereading it for the fifth;
 * 9 to 16 rows went through the blocked driver, whose panels stream
 * without a prefetch (Zen 4, GPT-2 124M's layer products at the memory
 * wall: 9 rows 70 ms there, 29 ms here). */
enum { PASS_ROWS = 6, PASS_MAX = 16 };

#define PASS_ROWS_X(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define PASS_ACC(r) __m256 s##r##0 = _mm256_setzero_ps(), s##r##1 = s##r##0;
#define PASS_FMA(r)                                                                      \
    if (R > r) {                                                                         \
        const __m256 av = _mm256_broadcast_ss(a + (r) * a_rs + kk);                      \
        s##r##0 = _mm256_fmadd_ps(av, w0, s##r##0), s##r##1 = _mm256_fmadd_ps(av, w1, s##r##1); \
    }
#define PASS_STORE(r) \
    if (R > r) avx2_store16(c + (r) * c_rs, s##r##0, s##r##1, bias, n);

static inline __attribute__((always_inline)) void
pass_block(const int R, int k, const float *a, ptrdiff_t a_rs, const float *w, const bool pf,
           const float *bias, float *c, ptrdiff_t c_rs, int n)
{
    PASS_ROWS_X(PASS_ACC)
    for (int kk = 0; kk < k; kk++, w += NR) {
        if (pf) prefetch_ahead(w);
        const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
        PASS_ROWS_X(PASS_FMA)
    }
    PASS_ROWS_X(PASS_STORE)
}

typedef void (*pass_fn)(int k, const float *a, ptrdiff_t a_rs, const float *w, const float *bias,
                        float *c, ptrdiff_t c_rs, int n);
#define PASS_FN(R, PF)                                                                   \
    static void pass_##R##_##PF(int k, const float *a, ptrdiff_t a_rs, const float *w,   \
                                const float *bias, float *c, ptrdiff_t c_rs, int n)      \
    {                                                                                    \
        pass_block(R, k, a, a_rs, w, PF, bias, c, c_rs, n);                              \
    }
PASS_FN(3, 0) PASS_FN(3, 1) PASS_FN(4, 0) PASS_FN(4, 1) PASS_FN(5, 0) PASS_FN(5, 1)
PASS_FN(6, 0) PASS_FN(6, 1)
static const pass_fn pass_of[2][PASS_ROWS + 1] = {
    {NULL, NULL, NULL, pass_3_0, pass_4_0, pass_5_0, pass_6_0},
    {NULL, NULL, NULL, pass_3_1, pass_4_1, pass_5_1, pass_6_1}};

/* m = 3..PASS_MAX rows: per panel blocks of 3 to 6 rows (m split as evenly
 * as it goes), the first streaming the panel, the others rereading it
 * from L2. */
static void pass_rows(int m, int n, int k, const float *a, ptrdiff_t a_rs, const float *wp,
                      const float *bias, float *c, ptrdiff_t c_rs)
{
    const int nb = (m + PASS_ROWS - 1) / PASS_ROWS;
    for (int j0 = 0; j0 < n; j0 += NR) {
        const float *w = wp + (size_t)(j0 / NR) * (size_t)k * NR, *b = bias ? bias + j0 : NULL;
        for (int q = 0, i = 0; q < nb; q++) {
            const int R = (m - i) / (nb - q);
            pass_of[q == 0][R](k, a + i * a_rs, a_rs, w, b, c + i * c_rs + j0, c_rs, n - j0);
            i += R;
        }
    }
}

void ngpt_f32_gemm_packed__avx2(int m, int n, int k, const float *a, ptrdiff_t a_rs,
                                const float *wp, const float *bias, float *c, ptrdiff_t c_rs)
{
    if (m >= 3 && m <= PASS_MAX && n > 0) {
        pass_rows(m, n, k, a, a_rs, wp, bias, c, c_rs);
        return;
    }
    ngpt_gemm_packed_run(tile_6x16, &gemv_blocks, m, n, k, a, a_rs, wp, bias, c, c_rs);
}
