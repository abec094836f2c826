/* q4.c — the AVX-512 VNNI 4-bit product, bit-identical to the reference
 * (src/ref/q4.c; the rule and the layout: src/q4.h). Compiled only where
 * the build has AVX-512 VNNI (the list's VNNI flag; without it the AVX2
 * kernel runs, arch/avx2/q4.c). arch/avx512/q8.c has the same shape.
 *
 *  - gemm_q4: 64 bytes of the panel are quads h (low nibbles) and h + 4
 *    (high) of 16 outputs; the nibbles become unsigned u = q + 8 (0..15:
 *    xor 8, mask, shift), vpdpbusd's unsigned operand, and the row's
 *    broadcast quad is the signed one. A lane then holds sum(u x) =
 *    sum(q x) + 8 S, S the sum of the row's 32 values of the group: each
 *    group starts its lanes at -8 S, and every sum is exact (|sum| < 2^16;
 *    vpdpbusd wraps rather than saturates, never reached). With 3 rows or
 *    fewer, low and high nibbles go to two chains per row, added at the
 *    group's end (more in flight; more rows have enough); the float
 *    chain over the groups is the reference's: one fmadd per group and
 *    output, lane = output.
 *  - Rows go in blocks of up to 8 against one panel at a time, panel after
 *    panel, so the weights stream from their first byte to their last and
 *    an unpacked weight serves every row of the block. The weights are
 *    prefetched, except on AMD up to 4 rows (prefetch_few_rows). The
 *    block's -8 S are computed once for all the panels, for as many groups
 *    as a small stack array holds; a longer row runs its chain that many
 *    groups at a time, the partial sums kept in C (a float stored and
 *    loaded is the same float), the bias added after the last. */
#include <string.h>

#include "../prefetch_ahead.h"
#include "kernels_avx512.h"

#if defined(__AVX512VNNI__)

enum { G = NGPT_Q4_GROUP, NR = NGPT_Q4_NR, BLOCK = NGPT_Q4_BLOCK };
enum { ROWS = 8, CORR = 1024 };     /* rows of a block; int32 corrections (4 KiB) */

/* -8 times the sum of each group g0..g1-1 of a quantized row x. */
static void corrections(int32_t *corr, const int8_t *x, int g0, int g1)
{
    const __m256i ones = _mm256_set1_epi8(1);
    for (int g = g0; g < g1; g++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + (size_t)g * G));
        const __m256i s8 = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, v);
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
        corr[g - g0] = -8 * _mm_cvtsi128_si32(s);
    }
}

static inline int32_t quad_of(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __mmask16 lanes(int n)
{
    return n >= NR ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

/* Groups g0..g1-1 of a chain (first: from +0.0f, else from C; last: the
 * bias follows), the rows' -8 S (row r's at corr + r * chunk, from g0). */
typedef struct q4_part {
    int k, g0, g1, chunk;
    bool first, last;
    const int32_t *corr;
} q4_part;

#define Q4_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define Q4_SPLIT (R <= 3)       /* low and high nibbles in two chains per row */
#define Q4_FINIT(r)                                                                      \
    __m512 f##r = _mm512_setzero_ps();                                                   \
    if (R > (r) && !pt->first) f##r = _mm512_maskz_loadu_ps(keep, c + (r) * c_rs);
#define Q4_IINIT(r)                                                                      \
    __m512i i##r = _mm512_setzero_si512(), j##r = i##r;                                  \
    if (R > (r)) i##r = _mm512_set1_epi32(pt->corr[(r) * pt->chunk + g - pt->g0]);
#define Q4_DOT(r)                                                                        \
    if (R > (r)) {                                                                       \
        const int8_t *xg = x + (r) * xs + g * G + 4 * h;                                 \
        i##r = _mm512_dpbusd_epi32(i##r, lo, _mm512_set1_epi32(quad_of(xg)));            \
        if (Q4_SPLIT) j##r = _mm512_dpbusd_epi32(j##r, hi, _mm512_set1_epi32(quad_of(xg + 16))); \
        else i##r = _mm512_dpbusd_epi32(i##r, hi, _mm512_set1_epi32(quad_of(xg + 16)));  \
    }
#define Q4_FMA(r)                                                                        \
    if (R > (r)) {                                                                       \
        const __m512 xd = _mm512_set1_ps(ngpt_q8_row_scales(x + (r) * xs, pt->k)[g]);    \
        if (Q4_SPLIT) i##r = _mm512_add_epi32(i##r, j##r);                               \
        f##r = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i##r),                                 \
                               _mm512_mul_ps(xd, wd), f##r);                             \
    }
#define Q4_STORE(r)                                                                      \
    if (R > (r)) {                                                                       \
        if (pt->last && bias) f##r = _mm512_add_ps(f##r, _mm512_maskz_loadu_ps(keep, bias)); \
        _mm512_mask_storeu_ps(c + (r) * c_rs, keep, f##r);                               \
    }

/* R rows (x, xs bytes apart) against one panel: its outputs below n at c
 * (rows c_rs apart), bias from the panel's first output. */
static inline __attribute__((always_inline)) void
q4_block(const int R, const bool prefetch, const q4_part *pt, const int8_t *x, ptrdiff_t xs, const uint8_t *panel,
         const float *bias, float *c, ptrdiff_t c_rs, int n)
{
    const __m512i flip = _mm512_set1_epi8((char)0x88), mask = _mm512_set1_epi8(0x0f);
    const __mmask16 keep = lanes(n);
    Q4_ROWS(Q4_FINIT)
    for (int g = pt->g0; g < pt->g1; g++) {
        const uint8_t *blk = panel + (size_t)g * BLOCK, *b = blk + NR * sizeof(float);
        Q4_ROWS(Q4_IINIT)
        for (int h = 0; h < 4; h++) {
            if (prefetch) prefetch_ahead(b + h * 64);   /* the loads wait on the weights (8 rows too) */
            const __m512i u = _mm512_xor_si512(flip, _mm512_loadu_si512(b + h * 64));
            const __m512i lo = _mm512_and_si512(u, mask);
            const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(u, 4), mask);
            Q4_ROWS(Q4_DOT)
        }
        if (prefetch) prefetch_ahead(blk);
        const __m512 wd = _mm512_loadu_ps((const float *)(const void *)blk);
        Q4_ROWS(Q4_FMA)
    }
    Q4_ROWS(Q4_STORE)
}

typedef void (*q4_rows_fn)(const q4_part *pt, int n, const int8_t *x, ptrdiff_t xs,
                           const uint8_t *wq, const float *bias, float *c, ptrdiff_t c_rs);
#define Q4_ROWS_FN(name, R, prefetch)                                                    \
    static void name(const q4_part *pt, int n, const int8_t *x, ptrdiff_t xs,             \
                     const uint8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)     \
    {                                                                                    \
        for (int j0 = 0; j0 < n; j0 += NR)                                               \
            q4_block(R, prefetch, pt, x, xs, ngpt_q4_panel(wq, pt->k, j0),                \
                     bias ? bias + j0 : NULL, c + j0, c_rs, n - j0);                     \
    }
Q4_ROWS_FN(rows_1, 1, true) Q4_ROWS_FN(rows_2, 2, true) Q4_ROWS_FN(rows_3, 3, true)
Q4_ROWS_FN(rows_4, 4, true) Q4_ROWS_FN(rows_5, 5, true) Q4_ROWS_FN(rows_6, 6, true)
Q4_ROWS_FN(rows_7, 7, true) Q4_ROWS_FN(rows_8, 8, true)
Q4_ROWS_FN(bare_1, 1, false) Q4_ROWS_FN(bare_2, 2, false) Q4_ROWS_FN(bare_3, 3, false)
Q4_ROWS_FN(bare_4, 4, false)
static const q4_rows_fn rows_of[ROWS + 1] = {NULL,   rows_1, rows_2, rows_3, rows_4,
                                            rows_5, rows_6, rows_7, rows_8};
/* AMD's: no prefetch up to 4 rows (prefetch_ahead.h's prefetch_few_rows) */
static const q4_rows_fn bare_rows_of[ROWS + 1] = {NULL,   bare_1, bare_2, bare_3, bare_4,
                                                 rows_5, rows_6, rows_7, rows_8};

void ngpt_f32_gemm_q4__avx512(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs,
                              const uint8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    const q4_rows_fn *const walk = prefetch_few_rows() ? rows_of : bare_rows_of;
    int32_t corr[CORR];
    for (int i = 0; i < m; i += ROWS) {
        const int R = m - i < ROWS ? m - i : ROWS;
        const int8_t *x = xq + i * xq_rs;
        q4_part pt = {k, 0, 0, CORR / R, true, false, corr};
        do {    /* once when k = 0: the chains are +0.0f */
            pt.g1 = groups - pt.g0 < pt.chunk ? groups : pt.g0 + pt.chunk;
            pt.last = pt.g1 == groups;
            for (int r = 0; r < R; r++) corrections(corr + r * pt.chunk, x + r * xq_rs, pt.g0, pt.g1);
            walk[R](&pt, n, x, xq_rs, wq, bias, c + i * c_rs, c_rs);
            pt.first = false, pt.g0 = pt.g1;
        } while (pt.g0 < groups);
    }
}

#endif
