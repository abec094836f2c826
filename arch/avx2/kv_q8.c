/* kv_q8.c — AVX2 kernels of the 8-bit KV cache (contracts in kernels.inc,
 * the reference in src/ref/kv_q8.c):
 *  - attn_scores_q8: a group's 32 int8 products are one vpmaddubsw of |q| by
 *    k with q's sign (vpsignb; each int16 the sum of two products of
 *    magnitude <= 127 * 127: at most 32258, no saturation) and one vpmaddwd
 *    by ones; the int32 sums are exact, so their order is free. 8 keys at a
 *    time: their 8 vectors of partial sums fold into one vector of 8 group
 *    sums (lane = key) by three rounds of vphaddd, and the float chain over
 *    the groups runs in those lanes, one fmadd per group: the reference's
 *    fmaf((float)isum, d_q[g] * d_k[g], acc) for each key (|isum| <= 516128
 *    converts exactly). The rows of a call take each block of 8 keys in turn,
 *    so a block is read from memory once for all of them.
 *  - attn_wsum_q8: a group of 32 outputs is four ymm of chains, for two rows
 *    at a time; position j's values are widened once for both and each row
 *    adds fmadd(p_r[j] * d_j[g], (float)q_j, acc) in increasing j, the
 *    factor one scalar product as in the reference.
 * The avx512 build runs these too. */
#include <math.h>
#include <string.h>

#include "kernels_avx2.h"

enum { G = NGPT_Q8_GROUP, KEYS = 8, WSUM_ROWS = 2 };

/* The loops over a tile's rows run a known few times: unrolled, the
 * accumulators stay in registers (not on the stack). */
#define UNROLL _Pragma("GCC unroll 4")

static inline int32_t hsum_epi32(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* The 16 int16 pair sums of a group of q (its magnitudes qa) and k, as 8 int32. */
static inline __m256i group_products(__m256i qa, __m256i qv, const int8_t *kg)
{
    const __m256i kv = _mm256_loadu_si256((const __m256i *)(const void *)kg);
    return _mm256_madd_epi16(_mm256_maddubs_epi16(qa, _mm256_sign_epi8(kv, qv)), _mm256_set1_epi16(1));
}

static inline float scale_at(const int8_t *row, int groups, int g)
{
    float d;
    memcpy(&d, (const unsigned char *)row + (size_t)groups * G + 4 * (size_t)g, sizeof d);
    return d;
}

/* One query's score against one key. */
static float score1(const int8_t *q, const int8_t *kj, int groups, float scale)
{
    float acc = 0.0f;
    for (int g = 0; g < groups; g++) {
        const __m256i qv = _mm256_loadu_si256((const __m256i *)(const void *)(q + g * G));
        const int32_t isum = hsum_epi32(group_products(_mm256_sign_epi8(qv, qv), qv, kj + g * G));
        acc = fmaf((float)isum, scale_at(q, groups, g) * scale_at(kj, groups, g), acc);
    }
    return acc * scale;
}

/* One query's scores against keys k_0..k_7 (lane = key). */
static void scores8(float *s, const int8_t *q, const int8_t *k, ptrdiff_t k_stride, int groups,
                    float scale)
{
    __m256 acc = _mm256_setzero_ps();
    for (int g = 0; g < groups; g++) {
        const __m256i qv = _mm256_loadu_si256((const __m256i *)(const void *)(q + g * G));
        const __m256i qa = _mm256_sign_epi8(qv, qv);
        __m256i m[KEYS];
        _Pragma("GCC unroll 8")
        for (int i = 0; i < KEYS; i++) m[i] = group_products(qa, qv, k + i * k_stride + g * G);
        /* lanes (k0 lo, k1 lo, k2 lo, k3 lo | k0 hi, ...), then the halves added */
        const __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(m[0], m[1]), _mm256_hadd_epi32(m[2], m[3]));
        const __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(m[4], m[5]), _mm256_hadd_epi32(m[6], m[7]));
        const __m256i isum = _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
                                              _mm256_permute2x128_si256(h0, h1, 0x31));
        const __m256 dk = _mm256_setr_ps(scale_at(k, groups, g), scale_at(k + k_stride, groups, g),
                                         scale_at(k + 2 * k_stride, groups, g),
                                         scale_at(k + 3 * k_stride, groups, g),
                                         scale_at(k + 4 * k_stride, groups, g),
                                         scale_at(k + 5 * k_stride, groups, g),
                                         scale_at(k + 6 * k_stride, groups, g),
                                         scale_at(k + 7 * k_stride, groups, g));
        const __m256 d = _mm256_mul_ps(_mm256_set1_ps(scale_at(q, groups, g)), dk);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), d, acc);
    }
    _mm256_storeu_ps(s, _mm256_mul_ps(acc, _mm256_set1_ps(scale)));
}

void ngpt_f32_attn_scores_q8__avx2(float *s, ptrdiff_t s_stride, const int8_t *q, ptrdiff_t q_stride,
                                   int rows, const int8_t *k, ptrdiff_t k_stride, int n, int step,
                                   int dim, float scale)
{
    const int groups = ngpt_q8_groups(dim), nmax = n + step * (rows - 1);
    for (int j = 0; j < nmax; j += KEYS)
        for (int r = 0; r < rows; r++) {
            const int keep = n + step * r - j;   /* keys of this block row r sees */
            float *sr = s + r * s_stride + j;
            const int8_t *qr = q + r * q_stride, *kj = k + j * k_stride;
            if (keep >= KEYS) scores8(sr, qr, kj, k_stride, groups, scale);
            else
                for (int i = 0; i < keep; i++) sr[i] = score1(qr, kj + i * k_stride, groups, scale);
        }
}

static inline __m256 lanes8(const int8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)));
}

/* Adds position j of group g to the chains of rows first..R-1 (acc[r]). */
static inline __attribute__((always_inline)) void
wsum_step(const int R, int first, __m256 acc[WSUM_ROWS][4], const float *p, ptrdiff_t p_stride,
          const int8_t *vj, int j, int g, int groups)
{
    const float d = scale_at(vj, groups, g);
    const int8_t *x = vj + g * G;
    const __m256 x0 = lanes8(x), x1 = lanes8(x + 8), x2 = lanes8(x + 16), x3 = lanes8(x + 24);
    UNROLL
    for (int r = first; r < R; r++) {
        const __m256 f = _mm256_set1_ps(p[r * p_stride + j] * d);
        acc[r][0] = _mm256_fmadd_ps(f, x0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(f, x1, acc[r][1]);
        acc[r][2] = _mm256_fmadd_ps(f, x2, acc[r][2]);
        acc[r][3] = _mm256_fmadd_ps(f, x3, acc[r][3]);
    }
}

/* Group g of R (<= WSUM_ROWS) rows, row r seeing n + step*r positions: the
 * positions every row sees for all, then (step 1) position n + t for the
 * rows after t. */
static inline __attribute__((always_inline)) void
wsum_rows(const int R, float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
          const int8_t *v, ptrdiff_t v_stride, int n, int step, int dim, int g)
{
    const int groups = ngpt_q8_groups(dim);
    __m256 acc[WSUM_ROWS][4];
    UNROLL
    for (int r = 0; r < R; r++)
        UNROLL
        for (int c = 0; c < 4; c++) acc[r][c] = _mm256_setzero_ps();
    for (int j = 0; j < n; j++) wsum_step(R, 0, acc, p, p_stride, v + j * v_stride, j, g, groups);
    if (step)
        UNROLL
        for (int t = 0; t + 1 < R; t++)
            wsum_step(R, t + 1, acc, p, p_stride, v + (n + t) * v_stride, n + t, g, groups);
    const int nd = dim - g * G < G ? dim - g * G : G;
    UNROLL
    for (int r = 0; r < R; r++) {
        float *og = o + r * o_stride + g * G;
        float t[G];
        float *dst = nd == G ? og : t;
        for (int c = 0; c < 4; c++) _mm256_storeu_ps(dst + 8 * c, acc[r][c]);
        if (nd < G) memcpy(og, t, (size_t)nd * sizeof(float));
    }
}

void ngpt_f32_attn_wsum_q8__avx2(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                                 int rows, const int8_t *v, ptrdiff_t v_stride, int n, int step,
                                 int dim)
{
    const int groups = ngpt_q8_groups(dim);
    for (int r = 0; r < rows; r += WSUM_ROWS) {
        float *orow = o + r * o_stride;
        const float *prow = p + r * p_stride;
        const int nr = n + step * r;
        for (int g = 0; g < groups; g++) {
            if (rows - r >= 2) wsum_rows(2, orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim, g);
            else wsum_rows(1, orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim, g);
        }
    }
}
