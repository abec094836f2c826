/* q4.c — the AVX2 4-bit product, bit-identical to the reference
 * (src/ref/q4.c; the rule and the layout: src/q4.h).
 *
 *  - gemm_q4: one or two rows against one panel of 16 outputs at a time,
 *    every group; 64 bytes of the panel are two quads of 16 outputs (low
 *    nibbles quad h, high nibbles quad h + 4), one ymm per 8 outputs. The
 *    nibbles become unsigned u = q + 8 (0..15: xor 8, mask, shift), and
 *    vpmaddubsw multiplies u by the row's broadcast signed quad: each int16
 *    is the sum of two products of magnitude <= 15 * 127, and the group's
 *    8 quads add into the same int16 lanes, 16 products: at most 30480 in
 *    magnitude, no saturation and no wrap. vpmaddwd by ones adds an
 *    output's two int16 into its int32 lane, which is then sum(u x) =
 *    sum(q x) + 8 S, S the sum of the row's 32 values of the group;
 *    subtracting 8 S gives the exact int32 sum of the contract. Its order
 *    is free; the float chain over the groups is the reference's: one
 *    _mm256_fmadd_ps per group and output, lane = output.
 *  - A pass of several rows (a speculative check, a short prompt, decoding
 *    a batch) takes them in blocks of up to 8 against each panel: a group's
 *    nibbles are unpacked once, into 16 vectors on the stack, and every row
 *    of the block reads them there, so the unpacking is paid once per 8
 *    rows, not once per 2; the rows' float chains wait in 8 x 16 floats
 *    between groups (a float stored and loaded is the same float). One row
 *    (decode) keeps its unpacked vectors in registers (panel_rows) and
 *    its 8 S, computed once for all the panels, in an array (one_row),
 *    and does not prefetch the weights on AMD (prefetch_few_rows). */
#include <string.h>

#include "../panel_walk.h"
#include "../prefetch_ahead.h"
#include "kernels_avx2.h"

enum { G = NGPT_Q4_GROUP, NR = NGPT_Q4_NR, BLOCK = NGPT_Q4_BLOCK };

static inline __m256i quad_of(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
}

/* 8 S in every int32 lane, S the sum of the 32 int8 of a group. */
static inline __m256i eight_sum(const int8_t *xg)
{
    const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)xg);
    __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), x),
                                  _mm256_set1_epi16(1));
    s = _mm256_add_epi32(s, _mm256_permute2x128_si256(s, s, 1));
    s = _mm256_add_epi32(s, _mm256_shuffle_epi32(s, 0x4e));
    s = _mm256_add_epi32(s, _mm256_shuffle_epi32(s, 0xb1));
    return _mm256_slli_epi32(s, 3);
}

/* acc (int16) += u_lo * quad h + u_hi * quad h+4 of a row. */
static inline __m256i dot_pair(__m256i acc, __m256i lo, __m256i hi, __m256i xl, __m256i xh)
{
    return _mm256_add_epi16(acc, _mm256_add_epi16(_mm256_maddubs_epi16(lo, xl),
                                                  _mm256_maddubs_epi16(hi, xh)));
}

/* R = 1 or 2 rows (x0, x1 quantized rows; s0, s1 their scales) against one
 * panel, every group; row r's outputs at c + r*c_rs; the weights
 * prefetched or not (prefetch_few_rows). */
static inline __attribute__((always_inline)) void
rows_of_panel(const int R, const bool prefetch, const int32_t *e8, int groups, const int8_t *x0,
              const float *s0, const int8_t *x1, const float *s1, const uint8_t *panel,
              const float *bias, float *c, ptrdiff_t c_rs, int nvalid)
{
    const __m256i ones = _mm256_set1_epi16(1), flip = _mm256_set1_epi8((char)0x88);
    const __m256i mask = _mm256_set1_epi8(0x0f);
    __m256 f00 = _mm256_setzero_ps(), f01 = f00, f10 = f00, f11 = f00;
    for (int g = 0; g < groups; g++) {
        const uint8_t *blk = panel + (size_t)g * BLOCK, *b = blk + NR * sizeof(float);
        const int8_t *xg0 = x0 + g * G, *xg1 = R > 1 ? x1 + g * G : NULL;
        __m256i i00 = _mm256_setzero_si256(), i01 = i00, i10 = i00, i11 = i00;
        for (int h = 0; h < 4; h++) {
            if (prefetch) prefetch_ahead(b + h * 64);   /* decoding waits on the weights */
            const __m256i v0 = _mm256_xor_si256(
                flip, _mm256_loadu_si256((const __m256i *)(const void *)(b + h * 64)));
            const __m256i v1 = _mm256_xor_si256(
                flip, _mm256_loadu_si256((const __m256i *)(const void *)(b + h * 64 + 32)));
            const __m256i lo0 = _mm256_and_si256(v0, mask);
            const __m256i hi0 = _mm256_and_si256(_mm256_srli_epi16(v0, 4), mask);
            const __m256i lo1 = _mm256_and_si256(v1, mask);
            const __m256i hi1 = _mm256_and_si256(_mm256_srli_epi16(v1, 4), mask);
            const __m256i a0 = quad_of(xg0 + 4 * h), b0 = quad_of(xg0 + 16 + 4 * h);
            i00 = dot_pair(i00, lo0, hi0, a0, b0);
            i01 = dot_pair(i01, lo1, hi1, a0, b0);
            if (R > 1) {
                const __m256i a1 = quad_of(xg1 + 4 * h), b1 = quad_of(xg1 + 16 + 4 * h);
                i10 = dot_pair(i10, lo0, hi0, a1, b1);
                i11 = dot_pair(i11, lo1, hi1, a1, b1);
            }
        }
        if (prefetch) prefetch_ahead(blk);
        const __m256 wd0 = _mm256_loadu_ps((const float *)(const void *)blk);
        const __m256 wd1 = _mm256_loadu_ps((const float *)(const void *)blk + 8);
        const __m256i e0 = e8 ? _mm256_set1_epi32(e8[g]) : eight_sum(xg0);
        const __m256 xd0 = _mm256_set1_ps(s0[g]);
        f00 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_madd_epi16(i00, ones), e0)),
                              _mm256_mul_ps(xd0, wd0), f00);
        f01 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_madd_epi16(i01, ones), e0)),
                              _mm256_mul_ps(xd0, wd1), f01);
        if (R > 1) {
            const __m256i e1 = eight_sum(xg1);
            const __m256 xd1 = _mm256_set1_ps(s1[g]);
            f10 = _mm256_fmadd_ps(
                _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_madd_epi16(i10, ones), e1)),
                _mm256_mul_ps(xd1, wd0), f10);
            f11 = _mm256_fmadd_ps(
                _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_madd_epi16(i11, ones), e1)),
                _mm256_mul_ps(xd1, wd1), f11);
        }
    }
    avx2_store16(c, f00, f01, bias, nvalid);
    if (R > 1) avx2_store16(c + c_rs, f10, f11, bias, nvalid);
}

static inline __attribute__((always_inline)) void
panel_rows(const int R, int groups, const int8_t *x0, const float *s0, const int8_t *x1,
           const float *s1, const uint8_t *panel, const float *bias, float *c, ptrdiff_t c_rs,
           int nvalid)
{
    rows_of_panel(R, true, NULL, groups, x0, s0, x1, s1, panel, bias, c, c_rs, nvalid);
}

PANEL_BLOCKS(panel_rows)

enum { E8 = 1024 };     /* a row's 8 S kept for every panel: k up to 32768 (4 KiB) */

/* Decoding's one row against every panel, its 8 S computed once (decode is
 * bound by the arithmetic on Zen 3 and 4: eight_sum per panel and group was
 * a tenth of the instructions); prefetched except on AMD (prefetch_few_rows). */
static inline __attribute__((always_inline)) void
one_row(const bool prefetch, int n, int k, const int8_t *x, const uint8_t *wq, const float *bias,
        float *c)
{
    const int groups = ngpt_q8_groups(k);
    int32_t e8[E8];
    for (int g = 0; g < groups; g++) e8[g] = _mm256_cvtsi256_si32(eight_sum(x + g * G));
    for (int j0 = 0; j0 < n; j0 += NR)
        rows_of_panel(1, prefetch, e8, groups, x, ngpt_q8_row_scales(x, k), NULL, NULL, ngpt_q4_panel(wq, k, j0),
                      bias ? bias + j0 : NULL, c + j0, 0, n - j0);
}

enum { ROWS = 8 };      /* rows of a block */

/* R rows (x, xs bytes apart) against one panel, every group; row r's
 * outputs at c + r*c_rs, the first nvalid of 16 stored. */
static inline __attribute__((always_inline)) void
block_rows(const int R, int groups, int k, const int8_t *x, ptrdiff_t xs, const uint8_t *panel,
           const float *bias, float *c, ptrdiff_t c_rs, int nvalid)
{
    const __m256i ones = _mm256_set1_epi16(1), flip = _mm256_set1_epi8((char)0x88);
    const __m256i mask = _mm256_set1_epi8(0x0f);
    __m256 f[ROWS][2];
    for (int r = 0; r < R; r++) f[r][0] = f[r][1] = _mm256_setzero_ps();
    for (int g = 0; g < groups; g++) {
        const uint8_t *blk = panel + (size_t)g * BLOCK, *b = blk + NR * sizeof(float);
        __m256i u[4][4];    /* quad h: lo, hi of outputs 0..7, lo, hi of 8..15 */
        for (int h = 0; h < 4; h++) {
            prefetch_ahead(b + h * 64);
            const __m256i v0 = _mm256_xor_si256(
                flip, _mm256_loadu_si256((const __m256i *)(const void *)(b + h * 64)));
            const __m256i v1 = _mm256_xor_si256(
                flip, _mm256_loadu_si256((const __m256i *)(const void *)(b + h * 64 + 32)));
            u[h][0] = _mm256_and_si256(v0, mask);
            u[h][1] = _mm256_and_si256(_mm256_srli_epi16(v0, 4), mask);
            u[h][2] = _mm256_and_si256(v1, mask);
            u[h][3] = _mm256_and_si256(_mm256_srli_epi16(v1, 4), mask);
        }
        prefetch_ahead(blk);
        const __m256 wd0 = _mm256_loadu_ps((const float *)(const void *)blk);
        const __m256 wd1 = _mm256_loadu_ps((const float *)(const void *)blk + 8);
        for (int r = 0; r < R; r++) {
            const int8_t *xg = x + r * xs + g * G;
            __m256i i0 = _mm256_setzero_si256(), i1 = i0;
            for (int h = 0; h < 4; h++) {
                const __m256i a = quad_of(xg + 4 * h), bq = quad_of(xg + 16 + 4 * h);
                i0 = dot_pair(i0, u[h][0], u[h][1], a, bq);
                i1 = dot_pair(i1, u[h][2], u[h][3], a, bq);
            }
            const __m256i e = eight_sum(xg);
            const __m256 xd = _mm256_set1_ps(ngpt_q8_row_scales(x + r * xs, k)[g]);
            f[r][0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_madd_epi16(i0, ones), e)),
                                      _mm256_mul_ps(xd, wd0), f[r][0]);
            f[r][1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_madd_epi16(i1, ones), e)),
                                      _mm256_mul_ps(xd, wd1), f[r][1]);
        }
    }
    for (int r = 0; r < R; r++) avx2_store16(c + r * c_rs, f[r][0], f[r][1], bias, nvalid);
}

ROWS_BLOCKS(block_rows)

void ngpt_f32_gemm_q4__avx2(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs,
                            const uint8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    if (m == 1) {
        if (ngpt_q8_groups(k) > E8)
            panel_walk(panel_2, panel_1, BLOCK, m, n, k, xq, xq_rs, wq, bias, c, c_rs);
        else if (prefetch_few_rows()) one_row(true, n, k, xq, wq, bias, c);
        else one_row(false, n, k, xq, wq, bias, c);
        return;
    }
    panel_rows_walk(rows_blocks, panel_1, BLOCK, m, n, k, xq, xq_rs, wq, bias, c, c_rs);
}
