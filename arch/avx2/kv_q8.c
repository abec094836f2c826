/* kv_q8.c — AVX2 kernels of the 8-bit KV cache (contracts in kernels.inc,
 * the reference in src/ref/kv_q8.c):
 *  - attn_scores_q8: a group's 32 int8 products are one vpmaddubsw of |q| by
 *    k with q's sign (vpsignb; each int16 the sum of two products of
 *    magnitude <= 127 * 127: at most 32258, no saturation) and one vpmaddwd
 *    by ones; the int32 sum is exact, so its order is free. The float chain
 *    over the groups is the reference's, one fmaf per group (a key's chain
 *    is sequential over its groups; keys are independent).
 *  - attn_wsum_q8: a group of 32 outputs is four ymm of chains; position j
 *    adds fmadd(p_j * d_j[g], (float)q_j, acc) in increasing j, the factor
 *    one scalar product as in the reference. The avx512 build runs these too. */
#include <math.h>
#include <string.h>

#include "kernels_avx2.h"

enum { G = NGPT_Q8_GROUP };

static inline int32_t hsum_epi32(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

void ngpt_f32_attn_scores_q8__avx2(float *s, const int8_t *q, const int8_t *k, ptrdiff_t k_stride,
                                   int n, int dim, float scale)
{
    const int groups = ngpt_q8_groups(dim);
    const float *dq = ngpt_q8_row_scales(q, dim);
    const __m256i ones = _mm256_set1_epi16(1);
    for (int j = 0; j < n; j++) {
        const int8_t *kj = k + j * k_stride;
        const float *dk = ngpt_q8_row_scales(kj, dim);
        float acc = 0.0f;
        for (int g = 0; g < groups; g++) {
            const __m256i qv = _mm256_loadu_si256((const __m256i *)(const void *)(q + g * G));
            const __m256i kv = _mm256_loadu_si256((const __m256i *)(const void *)(kj + g * G));
            const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(qv, qv),
                                                       _mm256_sign_epi8(kv, qv));
            const int32_t isum = hsum_epi32(_mm256_madd_epi16(pairs, ones));
            float d;
            memcpy(&d, &dk[g], sizeof d);
            acc = fmaf((float)isum, dq[g] * d, acc);
        }
        s[j] = acc * scale;
    }
}

static inline __m256 lanes8(const int8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)));
}

void ngpt_f32_attn_wsum_q8__avx2(float *o, const float *p, const int8_t *v, ptrdiff_t v_stride,
                                 int n, int dim)
{
    const int groups = ngpt_q8_groups(dim);
    for (int g = 0; g < groups; g++) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int j = 0; j < n; j++) {
            const int8_t *vj = v + j * v_stride;
            float d;
            memcpy(&d, (const unsigned char *)vj + (size_t)groups * G + 4 * (size_t)g, sizeof d);
            const __m256 f = _mm256_set1_ps(p[j] * d);
            const int8_t *x = vj + g * G;
            a0 = _mm256_fmadd_ps(f, lanes8(x), a0);
            a1 = _mm256_fmadd_ps(f, lanes8(x + 8), a1);
            a2 = _mm256_fmadd_ps(f, lanes8(x + 16), a2);
            a3 = _mm256_fmadd_ps(f, lanes8(x + 24), a3);
        }
        const int nd = dim - g * G < G ? dim - g * G : G;
        if (nd == G) {
            float *og = o + g * G;
            _mm256_storeu_ps(og, a0), _mm256_storeu_ps(og + 8, a1);
            _mm256_storeu_ps(og + 16, a2), _mm256_storeu_ps(og + 24, a3);
        } else {
            float t[G];
            _mm256_storeu_ps(t, a0), _mm256_storeu_ps(t + 8, a1);
            _mm256_storeu_ps(t + 16, a2), _mm256_storeu_ps(t + 24, a3);
            memcpy(o + g * G, t, (size_t)nd * sizeof(float));
        }
    }
}
