/* attention.c — AVX2 attention scores, weighted sum and the outer-product
 * accumulation of their backward, bit-identical to the reference: every
 * output is one fma chain in increasing index order, lanes hold different
 * outputs, leftovers run the reference.
 *  - scores: 8 keys side by side (lane = key); an 8x8 block of keys x dims is
 *    transposed in registers so each fma adds q[d] * k_j[d] to key j's chain.
 *  - wsum: 32 dims in four accumulators (lane = d), the chains run over keys j.
 *  - outer_acc: 8 dims a vector, one fma per element and call.
 * Same shape as arch/neon/attention.c, which has 4 lanes where this has 8
 * (4x4 transposes, 16 dims for wsum). */
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

void ngpt_f32_attn_scores__avx2(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                                int n, int dim, float scale)
{
    const int n8 = n - n % 8, d8 = dim - dim % 8;
    const __m256 vs = _mm256_set1_ps(scale);
    for (int j = 0; j < n8; j += 8) {
        const float *kj = k + j * k_stride;
        __m256 acc = _mm256_setzero_ps();
        for (int d = 0; d < d8; d += 8) {
            __m256 r[8];
            for (int jj = 0; jj < 8; jj++) r[jj] = _mm256_loadu_ps(kj + jj * k_stride + d);
            transpose8(r);
            for (int dd = 0; dd < 8; dd++)
                acc = _mm256_fmadd_ps(_mm256_set1_ps(q[d + dd]), r[dd], acc);
        }
        for (int d = d8; d < dim; d++) {
            const float *p = kj + d;
            __m256 col = _mm256_setr_ps(p[0], p[k_stride], p[2 * k_stride], p[3 * k_stride],
                                        p[4 * k_stride], p[5 * k_stride], p[6 * k_stride],
                                        p[7 * k_stride]);
            acc = _mm256_fmadd_ps(_mm256_set1_ps(q[d]), col, acc);
        }
        _mm256_storeu_ps(s + j, _mm256_mul_ps(acc, vs));
    }
    ngpt_f32_attn_scores_ref(s + n8, q, k + n8 * k_stride, k_stride, n - n8, dim, scale);
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
