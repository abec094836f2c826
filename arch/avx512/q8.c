/* q8.c — AVX-512 VNNI 8-bit products, bit-identical to the reference
 * (src/ref/q8.c; the rule and the layouts: src/q8.h). Compiled only where
 * the build has AVX-512 VNNI (-mavx512vnni: the Makefile adds it when the
 * build machine has it); without it the list's VNNI flag runs the AVX2
 * kernel (arch/avx2/q8.c), which has the same walk over the panels.
 *
 *  - gemm_q8: four k of 16 outputs are one zmm of the panel, and one
 *    vpdpbusd adds the four products of each output into its int32 lane,
 *    exactly (it wraps rather than saturates, and no sum comes near 2^31).
 *    Its first operand is unsigned: the weights are, as w ^ 0x80 = w + 128
 *    (1..255, q is never -128); the row's quad is the signed one, broadcast
 *    from memory. So each lane holds sum((w + 128) x) = sum(w x) + 128 S,
 *    S the sum of the row's 32 values of the group: the lane starts the
 *    group at -128 S (|sum| <= 32 * 255 * 127). The group's int32 sums are
 *    exact, so their order is free; the float chain over the groups is the
 *    reference's: one _mm512_fmadd_ps per group and output, lane = output.
 *    Rows go in blocks of up to 8 against one panel at a time (a row or two
 *    against 4 or 2 panels, so 4 or more chains are in flight); a loaded
 *    weight quad serves every row of the block. The block's -128 S are
 *    computed once for every panel, for up to CHUNK groups at a time (a
 *    small stack array): a longer row runs its chain CHUNK groups at a time,
 *    the partial sums kept in C (a float stored and loaded is the same
 *    float), the bias added after the last. */
#include <string.h>

#include "kernels_avx512.h"

#if defined(__AVX512VNNI__)

enum { G = NGPT_Q8_GROUP, NR = NGPT_Q8_NR, QUADS = NGPT_Q8_QUADS, BLOCK = NGPT_Q8_BLOCK };
enum { ROWS = 8, CHUNK = 64 };      /* rows of a block; groups of its corrections (2 KiB) */

/* -128 times the sum of each group g0..g1-1 of a quantized row x. */
static void corrections(int32_t *corr, const int8_t *x, int g0, int g1)
{
    const __m256i ones = _mm256_set1_epi8(1);
    for (int g = g0; g < g1; g++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + (size_t)g * G));
        const __m256i s8 = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, v);
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
        corr[g - g0] = -128 * _mm_cvtsi128_si32(s);
    }
}

/* A row's quad broadcast to every lane. */
static inline __m512i quad_of(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm512_set1_epi32(v);
}

/* The lanes of outputs below n (counted from the panel's first). */
static inline __mmask16 lanes(int n)
{
    return n >= NR ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

/* The accumulators of a block: row r (< R) against panel p (< P), for the
 * shapes used: R <= 8 with P = 1, R <= 4 with P = 2, R <= 2 with P = 4.
 * Q8_ROWS(X) is X(r, panels of row r). */
#define Q8_P4(X, r) X(r, 0) X(r, 1) X(r, 2) X(r, 3)
#define Q8_P2(X, r) X(r, 0) X(r, 1)
#define Q8_P1(X, r) X(r, 0)
#define Q8_ROWS(X)                                                                       \
    X(0, Q8_P4) X(1, Q8_P4) X(2, Q8_P2) X(3, Q8_P2) X(4, Q8_P1) X(5, Q8_P1) X(6, Q8_P1) X(7, Q8_P1)
#define Q8_PAIRS(X)                                                                      \
    Q8_P4(X, 0) Q8_P4(X, 1) Q8_P2(X, 2) Q8_P2(X, 3) Q8_P1(X, 4) Q8_P1(X, 5) Q8_P1(X, 6) Q8_P1(X, 7)
#define Q8_PANELS(X) X(0) X(1) X(2) X(3)
#define Q8_LIVE(r, p) (R > (r) && P > (p))

/* the chain of row r, panel p: from zero, or from C (a later chunk) */
#define Q8_FINIT(r, p)                                                                   \
    __m512 f##r##p = _mm512_setzero_ps();                                                \
    if (Q8_LIVE(r, p) && !first)                                                         \
        f##r##p = _mm512_maskz_loadu_ps(lanes(n - (p) * NR), c + (r) * c_rs + (p) * NR);
/* the group's int32 sums start at -128 S */
#define Q8_IINIT(r, p)                                                                   \
    __m512i i##r##p = Q8_LIVE(r, p) ? _mm512_set1_epi32(corr[r][g - g0]) : _mm512_setzero_si512();
/* quad s of panel p's group, as w + 128 */
#define Q8_W(p)                                                                          \
    __m512i w##p = _mm512_setzero_si512();                                               \
    if (P > (p))                                                                         \
        w##p = _mm512_xor_si512(bias80, _mm512_loadu_si512(blk + (p) * ps + NR * 4 + s * 64));
#define Q8_DOT(r, p)                                                                     \
    if (Q8_LIVE(r, p)) i##r##p = _mm512_dpbusd_epi32(i##r##p, w##p, xq);
#define Q8_DOT_ROW(r, PANELS)                                                            \
    if (R > (r)) {                                                                       \
        const __m512i xq = quad_of(x + (r) * xs + g * G + 4 * s);                        \
        PANELS(Q8_DOT, r)                                                                \
    }
/* quad s of the group: every row of the block against every panel */
#define Q8_QUAD(S)                                                                       \
    {                                                                                    \
        const int s = (S);                                                               \
        Q8_PANELS(Q8_W)                                                                  \
        Q8_ROWS(Q8_DOT_ROW)                                                              \
    }
#define Q8_QUADS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define Q8_WD(p)                                                                         \
    __m512 wd##p = _mm512_setzero_ps();                                                  \
    if (P > (p)) wd##p = _mm512_loadu_ps((const float *)(const void *)(blk + (p) * ps));
#define Q8_FMA(r, p)                                                                     \
    if (Q8_LIVE(r, p))                                                                   \
        f##r##p = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i##r##p), _mm512_mul_ps(xd, wd##p), f##r##p);
#define Q8_FMA_ROW(r, PANELS)                                                            \
    if (R > (r)) {                                                                       \
        const __m512 xd = _mm512_set1_ps(ngpt_q8_row_scales(x + (r) * xs, k)[g]);        \
        PANELS(Q8_FMA, r)                                                                \
    }
/* after the last chunk: + bias; the outputs below n */
#define Q8_STORE(r, p)                                                                   \
    if (Q8_LIVE(r, p)) {                                                                 \
        const __mmask16 keep = lanes(n - (p) * NR);                                      \
        if (last && bias)                                                                \
            f##r##p = _mm512_add_ps(f##r##p, _mm512_maskz_loadu_ps(keep, bias + (p) * NR)); \
        _mm512_mask_storeu_ps(c + (r) * c_rs + (p) * NR, keep, f##r##p);                 \
    }

/* R rows (x, xs bytes apart; corr their -128 S from group g0) against P
 * panels (panel: the first; ps bytes apart), groups g0..g1-1: outputs below
 * n (counted from the first panel's first) at c (rows c_rs apart). */
static inline __attribute__((always_inline)) void
q8_block(const int R, const int P, int k, int g0, int g1, bool first, bool last, const int8_t *x,
         ptrdiff_t xs, const int32_t (*corr)[CHUNK], const int8_t *panel, size_t ps,
         const float *bias, float *c, ptrdiff_t c_rs, int n)
{
    const __m512i bias80 = _mm512_set1_epi8((char)0x80);
    Q8_PAIRS(Q8_FINIT)
    for (int g = g0; g < g1; g++) {
        const int8_t *blk = panel + (size_t)g * BLOCK;
        Q8_PAIRS(Q8_IINIT)
        Q8_QUADS(Q8_QUAD)
        Q8_PANELS(Q8_WD)
        Q8_ROWS(Q8_FMA_ROW)
    }
    Q8_PAIRS(Q8_STORE)
}

/* R rows against every panel, P at a time while P are left, then one. */
static inline __attribute__((always_inline)) void
q8_rows(const int R, const int P, int n, int k, int g0, int g1, const int8_t *x, ptrdiff_t xs,
        const int32_t (*corr)[CHUNK], const int8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    const size_t ps = (size_t)ngpt_q8_groups(k) * BLOCK;
    const bool first = g0 == 0, last = g1 == ngpt_q8_groups(k);
    int j0 = 0;
    for (; j0 + P * NR <= n; j0 += P * NR)
        q8_block(R, P, k, g0, g1, first, last, x, xs, corr, wq + (size_t)(j0 / NR) * ps, ps,
                 bias ? bias + j0 : NULL, c + j0, c_rs, n - j0);
    for (; j0 < n; j0 += NR)
        q8_block(R, 1, k, g0, g1, first, last, x, xs, corr, wq + (size_t)(j0 / NR) * ps, ps,
                 bias ? bias + j0 : NULL, c + j0, c_rs, n - j0);
}

typedef void (*q8_rows_fn)(int n, int k, int g0, int g1, const int8_t *x, ptrdiff_t xs,
                           const int32_t (*corr)[CHUNK], const int8_t *wq, const float *bias,
                           float *c, ptrdiff_t c_rs);
#define Q8_ROWS_FN(R, P)                                                                 \
    static void rows_##R(int n, int k, int g0, int g1, const int8_t *x, ptrdiff_t xs,     \
                         const int32_t (*corr)[CHUNK], const int8_t *wq, const float *bias, \
                         float *c, ptrdiff_t c_rs)                                       \
    {                                                                                    \
        q8_rows(R, P, n, k, g0, g1, x, xs, corr, wq, bias, c, c_rs);                     \
    }
Q8_ROWS_FN(1, 4) Q8_ROWS_FN(2, 2) Q8_ROWS_FN(3, 2) Q8_ROWS_FN(4, 2)
Q8_ROWS_FN(5, 1) Q8_ROWS_FN(6, 1) Q8_ROWS_FN(7, 1) Q8_ROWS_FN(8, 1)
static const q8_rows_fn rows_of[ROWS + 1] = {NULL,   rows_1, rows_2, rows_3, rows_4,
                                            rows_5, rows_6, rows_7, rows_8};

void ngpt_f32_gemm_q8__avx512(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs,
                              const int8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    int32_t corr[ROWS][CHUNK];
    for (int i = 0; i < m; i += ROWS) {
        const int R = m - i < ROWS ? m - i : ROWS;
        const int8_t *x = xq + i * xq_rs;
        int g0 = 0;
        do {    /* once when k = 0: the chains are +0.0f */
            const int g1 = groups - g0 < CHUNK ? groups : g0 + CHUNK;
            for (int r = 0; r < R; r++) corrections(corr[r], x + r * xq_rs, g0, g1);
            rows_of[R](n, k, g0, g1, x, xq_rs, (const int32_t(*)[CHUNK])corr, wq, bias,
                       c + i * c_rs, c_rs);
            g0 = g1;
        } while (g0 < groups);
    }
}

#endif
