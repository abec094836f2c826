/* kernels_avx2.h — what the AVX2+FMA kernels (x86-64, -mavx2 -mfma) share:
 * their prototypes and the helpers more than one op file uses. Each kernel
 * matches its reference in src/ref/ bit for bit (contract: src/kernels.h). */
#ifndef NGPT_KERNELS_AVX2_H
#define NGPT_KERNELS_AVX2_H

#include <immintrin.h>
#include <sleef.h>

#include "kernels.h"
#include "ref/softmax.h"

void ngpt_f32_gemm__avx2(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate);
void ngpt_f32_attn_scores__avx2(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                                int n, int dim, float scale);
void ngpt_f32_attn_wsum__avx2(float *o, const float *p, const float *v, ptrdiff_t v_stride,
                              int n, int dim);
void ngpt_f32_gelu_fwd__avx2(float *y, const float *x, size_t n);
void ngpt_f32_gelu_bwd__avx2(float *dx, const float *x, const float *dy, size_t n);
void ngpt_f32_add__avx2(float *y, const float *a, const float *b, size_t n);
float ngpt_f32_rsum__avx2(const float *x, size_t n);
float ngpt_f32_sumsq__avx2(const float *x, size_t n);
void ngpt_f32_softmax__avx2(float *p, const float *s, int n);
float ngpt_f32_xent__avx2(const float *logits, int n, int target);
void ngpt_f32_xent_bwd__avx2(float *dlogits, const float *logits, int n, int target, float scale);
void ngpt_f32_softmax_bwd__avx2(float *ds, const float *p, const float *dp, int n, float scale);
void ngpt_f32_layernorm_fwd__avx2(float *out, float *mean, float *rstd, const float *x,
                                  const float *w, const float *b, size_t rows, int c);
void ngpt_f32_layernorm_bwd__avx2(float *dx, float *dw, float *db, const float *dy,
                                  const float *x, const float *mean, const float *rstd,
                                  const float *w, size_t rows, int c);
void ngpt_f32_adamw__avx2(float *p, const float *grad, float *m, float *v, size_t n,
                          const ngpt_adamw_coef *c);
void ngpt_f32_outer_acc__avx2(float *out, ptrdiff_t out_stride, const float *w, const float *x,
                              int n, int dim);
void ngpt_f32_colsum_acc__avx2(float *db, const float *dy, size_t rows, int n);
void ngpt_f32_rope__avx2(float *x, int heads, int dim, const float *cos_t, const float *sin_t);
void ngpt_f32_rope_bwd__avx2(float *g, int heads, int dim, const float *cos_t, const float *sin_t);
void ngpt_f32_dropout__avx2(float *y, const float *x, size_t n, uint64_t first,
                            const ngpt_dropout_key *key);

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
