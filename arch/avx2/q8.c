/* q8.c — AVX2 8-bit kernels, bit-identical to the reference (src/ref/q8.c;
 * the rule and the layouts: src/q8.h).
 *
 *  - quantize_q8: a group of 32 floats is four __m256; the largest |x| is an
 *    integer max of the bits (as the reference compares them); x * (127/amax)
 *    is rounded by vcvtps2dq in the library's mode (round to nearest even,
 *    the reference's magic-constant rounding) and narrowed with saturating
 *    packs (never reached: |q| <= 127).
 *  - gemm_q8: one or two rows against one panel of 16 outputs at a time, all
 *    groups; 4 k of 8 outputs are one ymm of the panel. Each 4-byte quad of
 *    the row is broadcast, and vpmaddubsw multiplies |x| (unsigned) by w
 *    with x's sign (vpsignb): each int16 is the sum of two products of
 *    magnitude <= 127 * 127, at most 32258, so it cannot saturate;
 *    vpmaddwd by ones adds the two int16 of an output into its int32 lane.
 *    The group's int32 sums are exact, so their order is free; the float
 *    chain over the groups is the reference's: one _mm256_fmadd_ps per
 *    group and output, lane = output. The weights are prefetched, except
 *    a decode's one row on AMD (prefetch_few_rows). */
#include <string.h>

#include "../panel_walk.h"
#include "../q8_run.h"
#include "../prefetch_ahead.h"
#include "kernels_avx2.h"

enum { G = NGPT_Q8_GROUP, NR = NGPT_Q8_NR, QUADS = NGPT_Q8_QUADS, BLOCK = NGPT_Q8_BLOCK };

/* ---- quantize_q8 */

/* Largest of the 8 int32 lanes. */
static inline int32_t hmax_epi32(__m256i m)
{
    m = _mm256_max_epi32(m, _mm256_permute2x128_si256(m, m, 1));
    m = _mm256_max_epi32(m, _mm256_shuffle_epi32(m, 0x4e));
    m = _mm256_max_epi32(m, _mm256_shuffle_epi32(m, 0xb1));
    return _mm_cvtsi128_si32(_mm256_castsi256_si128(m));
}

/* One group of 32 floats (zero past the row's end): its 32 values, its scale. */
static inline float quantize_group(int8_t *q, const float *x)
{
    const __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8);
    const __m256 v2 = _mm256_loadu_ps(x + 16), v3 = _mm256_loadu_ps(x + 24);
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
    const __m256i a0 = _mm256_and_si256(_mm256_castps_si256(v0), abs_mask);
    const __m256i a1 = _mm256_and_si256(_mm256_castps_si256(v1), abs_mask);
    const __m256i a2 = _mm256_and_si256(_mm256_castps_si256(v2), abs_mask);
    const __m256i a3 = _mm256_and_si256(_mm256_castps_si256(v3), abs_mask);
    const uint32_t amax_bits = (uint32_t)hmax_epi32(
        _mm256_max_epi32(_mm256_max_epi32(a0, a1), _mm256_max_epi32(a2, a3)));
    float d, idf;
    if (!q8_group_scale(amax_bits, q, &d, &idf)) return d;
    const __m256 id = _mm256_set1_ps(idf);
    const __m256i r0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, id));
    const __m256i r1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, id));
    const __m256i r2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, id));
    const __m256i r3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, id));
    /* the packs work per 128-bit lane: dwords (4 values) come out as
     * r0a r1a r2a r3a | r0b r1b r2b r3b; put them back in order */
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(r0, r1), _mm256_packs_epi32(r2, r3));
    _mm256_storeu_si256((__m256i *)(void *)q,
                        _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    return d;
}

void ngpt_f32_quantize_q8__avx2(int8_t *xq, ptrdiff_t xq_rs, const float *x, ptrdiff_t x_rs, int m,
                                int k)
{
    q8_quantize_rows(quantize_group, xq, xq_rs, x, x_rs, m, k);
}

/* ---- gemm_q8 */

/* The int32 sums of 8 outputs (w: one ymm of the panel) with a row's
 * broadcast quad x (ax = |x|), added to acc. */
static inline __m256i dot_quad(__m256i acc, __m256i ax, __m256i x, __m256i w, __m256i ones)
{
    const __m256i pairs = _mm256_maddubs_epi16(ax, _mm256_sign_epi8(w, x));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
}

static inline __m256i quad_of(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
}

/* R = 1 or 2 rows (x0, x1 quantized rows; s0, s1 their scales) against one
 * panel, every group; row r's outputs at c + r*c_rs; the weights
 * prefetched or not (prefetch_few_rows). */
static inline __attribute__((always_inline)) void
rows_of_panel(const int R, const bool prefetch, int groups, const int8_t *x0, const float *s0,
              const int8_t *x1, const float *s1, const int8_t *panel, const float *bias, float *c,
              ptrdiff_t c_rs, int nvalid)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 f00 = _mm256_setzero_ps(), f01 = f00, f10 = f00, f11 = f00;
    for (int g = 0; g < groups; g++) {
        const int8_t *blk = panel + (size_t)g * BLOCK, *q = blk + NR * sizeof(float);
        __m256i i00 = _mm256_setzero_si256(), i01 = i00, i10 = i00, i11 = i00;
        for (int s = 0; s < QUADS; s++) {
            if (prefetch) prefetch_ahead(q + s * 64);   /* decoding waits on the weights */
            const __m256i w0 = _mm256_loadu_si256((const __m256i *)(const void *)(q + s * 64));
            const __m256i w1 = _mm256_loadu_si256((const __m256i *)(const void *)(q + s * 64 + 32));
            const __m256i a0 = quad_of(x0 + g * G + 4 * s), aa0 = _mm256_abs_epi8(a0);
            i00 = dot_quad(i00, aa0, a0, w0, ones);
            i01 = dot_quad(i01, aa0, a0, w1, ones);
            if (R > 1) {
                const __m256i a1 = quad_of(x1 + g * G + 4 * s), aa1 = _mm256_abs_epi8(a1);
                i10 = dot_quad(i10, aa1, a1, w0, ones);
                i11 = dot_quad(i11, aa1, a1, w1, ones);
            }
        }
        if (prefetch) prefetch_ahead(blk);
        const __m256 wd0 = _mm256_loadu_ps((const float *)(const void *)blk);
        const __m256 wd1 = _mm256_loadu_ps((const float *)(const void *)blk + 8);
        const __m256 xd0 = _mm256_set1_ps(s0[g]);
        f00 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i00), _mm256_mul_ps(xd0, wd0), f00);
        f01 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i01), _mm256_mul_ps(xd0, wd1), f01);
        if (R > 1) {
            const __m256 xd1 = _mm256_set1_ps(s1[g]);
            f10 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i10), _mm256_mul_ps(xd1, wd0), f10);
            f11 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i11), _mm256_mul_ps(xd1, wd1), f11);
        }
    }
    avx2_store16(c, f00, f01, bias, nvalid);
    if (R > 1) avx2_store16(c + c_rs, f10, f11, bias, nvalid);
}

static inline __attribute__((always_inline)) void
panel_rows(const int R, int groups, const int8_t *x0, const float *s0, const int8_t *x1,
           const float *s1, const int8_t *panel, const float *bias, float *c, ptrdiff_t c_rs,
           int nvalid)
{
    rows_of_panel(R, true, groups, x0, s0, x1, s1, panel, bias, c, c_rs, nvalid);
}

/* Decoding's one row on AMD: no prefetch (prefetch_few_rows) */
static void bare_row(int groups, const int8_t *x0, const float *s0, const int8_t *x1,
                     const float *s1, const void *panel, const float *bias, float *c,
                     ptrdiff_t c_rs, int nvalid)
{
    rows_of_panel(1, false, groups, x0, s0, x1, s1, panel, bias, c, c_rs, nvalid);
}

PANEL_BLOCKS(panel_rows)

void ngpt_f32_gemm_q8__avx2(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs,
                            const int8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    const panel_block_fn one = m == 1 && !prefetch_few_rows() ? bare_row : panel_1;
    panel_walk(panel_2, one, BLOCK, m, n, k, xq, xq_rs, wq, bias, c, c_rs);
}
