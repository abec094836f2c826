/* kernels_avx2.h — what the AVX2+FMA kernels (x86-64, -mavx2 -mfma) share:
 * their prototypes and the helpers more than one op file uses. Each kernel
 * matches its reference in src/ref/ bit for bit (contract: src/kernels.inc). */
#ifndef NGPT_KERNELS_AVX2_H
#define NGPT_KERNELS_AVX2_H

#include <immintrin.h>
#include <sleef.h>

#include "kernels.h"
#include "ref/softmax.h"

/* The prototypes of the kernels the list's avx2 column marks SIMD. */
#define NGPT_KERNEL(kernel, op, ret, params, avx2_flag, ...) \
    NGPT_ISA_PROTO(kernel, avx2, avx2_flag, ret, params)
#include "kernels.inc"

/* ---- the products (gemm.c, q8.c) ---- */

/* 16 outputs of one row, lo then hi, into c: the first n of them (all 16
 * when n >= 16), each + bias[j] when bias is set. */
static inline void avx2_store16(float *c, __m256 lo, __m256 hi, const float *bias, int n)
{
    if (n >= 16) {
        if (bias) {
            lo = _mm256_add_ps(lo, _mm256_loadu_ps(bias));
            hi = _mm256_add_ps(hi, _mm256_loadu_ps(bias + 8));
        }
        _mm256_storeu_ps(c, lo);
        _mm256_storeu_ps(c + 8, hi);
        return;
    }
    float t[16];
    _mm256_storeu_ps(t, lo);
    _mm256_storeu_ps(t + 8, hi);
    for (int jj = 0; jj < n; jj++) c[jj] = bias ? t[jj] + bias[jj] : t[jj];
}

/* ---- softmax and cross-entropy (softmax.c, cross_entropy.c) ---- */

/* The row max per lane with the reference's `s > m ? s : m` from s[0]; it
 * can differ from the reference only in the sign of a zero max, which
 * changes no result (s - (+0) == s - (-0) except for s = ±0, where exp gives
 * 1 either way; and ±0 + log(sum >= 1) is the same). */
static inline float avx2_row_max(const float *s, int n)
{
    __m256 m = _mm256_set1_ps(s[0]);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 v = _mm256_loadu_ps(s + j);
        m = _mm256_blendv_ps(m, v, _mm256_cmp_ps(v, m, _CMP_GT_OQ));
    }
    float p[8];
    _mm256_storeu_ps(p, m);
    float mx = p[0];
    for (int l = 1; l < 8; l++) mx = p[l] > mx ? p[l] : mx;
    for (; j < n; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

/* ngpt_exp_term of 8 lanes: SLEEF's vector finz exp (the bits of the scalar
 * one), the cutoff applied by a mask. */
static inline __m256 avx2_exp_term(__m256 d)
{
    const __m256 e = Sleef_finz_expf8_u10avx2(d);
    return _mm256_andnot_ps(_mm256_cmp_ps(d, _mm256_set1_ps(NGPT_EXP_CUTOFF), _CMP_LT_OQ), e);
}

/* e_j = exp term of s_j - max into out (may alias s; NULL: not stored);
 * returns their canonical sum. */
static inline float avx2_exp_row(float *out, const float *s, int n, float mx)
{
    const __m256 vm = _mm256_set1_ps(mx);
    __m256 acc = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 e = avx2_exp_term(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
        if (out) _mm256_storeu_ps(out + j, e);
        acc = _mm256_add_ps(acc, e);
    }
    float p[NGPT_LANES];
    _mm256_storeu_ps(p, acc);
    for (; j < n; j++) {
        const float e = ngpt_exp_term(s[j] - mx);
        if (out) out[j] = e;
        p[j % NGPT_LANES] = p[j % NGPT_LANES] + e;
    }
    return ngpt_lanes_combine(p);
}

#endif
