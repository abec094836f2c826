/* attention.c — AVX2 attention scores, weighted sum and the outer-product
 * accumulation of their backward, bit-identical to the reference: every
 * output is one fma chain in increasing index order, lanes hold different
 * outputs, leftovers run the reference.
 *  - scores: 8 keys side by side (lane = key); an 8x8 block of keys x dims is
 *    transposed in registers so each fma adds q[d] * k_j[d] to key j's chain;
 *    two such groups at a time (two chains in flight), and a last partial
 *    group whose spare lanes recompute a real key and are not stored.
 *  - wsum: 32 dims in four accumulators (lane = d), the chains run over keys j.
 *  - outer_acc: 8 dims a vector, one fma per element and call.
 * Same shape as arch/neon/attention.c, which has 4 lanes where this has 8
 * (4x4 transposes, 16 dims for wsum) and runs one group of keys at a time
 * with the reference for the last partial one. */
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

void ngpt_f32_attn_wsum__avx2(float *o, const float *p, const float *v, ptrdiff_t v_stride,
                              int n, int dim)
{
    int d = 0;
    for (; d + 32 <= dim; d += 32) {
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
        for (int j = 0; j < n; j++) {
            const float *vj = v + j * v_stride + d;
            const __m256 pj = _mm256_set1_ps(p[j]);
            a0 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj), a0);
            a1 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 8), a1);
            a2 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 16), a2);
            a3 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 24), a3);
        }
        _mm256_storeu_ps(o + d, a0), _mm256_storeu_ps(o + d + 8, a1);
        _mm256_storeu_ps(o + d + 16, a2), _mm256_storeu_ps(o + d + 24, a3);
    }
    for (; d + 8 <= dim; d += 8) {
        __m256 a0 = _mm256_setzero_ps();
        for (int j = 0; j < n; j++)
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), _mm256_loadu_ps(v + j * v_stride + d), a0);
        _mm256_storeu_ps(o + d, a0);
    }
    ngpt_f32_attn_wsum_ref(o + d, p, v + d, v_stride, n, dim - d);
}

void ngpt_f32_outer_acc__avx2(float *out, ptrdiff_t out_stride, const float *w, const float *x,
                              int n, int dim)
{
    for (int j = 0; j < n; j++) {
        float *o = out + j * out_stride;
        const __m256 wj = _mm256_set1_ps(w[j]);
        int d = 0;
        for (; d + 8 <= dim; d += 8)
            _mm256_storeu_ps(o + d, _mm256_fmadd_ps(wj, _mm256_loadu_ps(x + d), _mm256_loadu_ps(o + d)));
        for (; d < dim; d++) o[d] = fmaf(w[j], x[d], o[d]);
    }
}
