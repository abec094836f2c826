/* kernels_avx512.h — what the AVX-512 kernels (x86-64, built with -mavx512f
 * -mavx512bw -mavx512vl -mavx512dq, and -mavx512vnni where the build
 * machine has it, besides the baseline -mfma) share: their
 * prototypes and the helpers more than one op file uses. Each kernel matches
 * its reference in src/ref/ bit for bit (contract: src/kernels.inc). The
 * build also links arch/avx2/ (compiled with -mavx2 only): a kernel the
 * list's avx512 column marks AVX2 runs its AVX2 form. Only a library whose
 * CPU check passed (src/base/cpu.c, at ngpt_context_init) reaches these. */
#ifndef NGPT_KERNELS_AVX512_H
#define NGPT_KERNELS_AVX512_H

#include <immintrin.h>
#include <sleef.h>

#include "kernels.h"
#include "ref/softmax.h"

/* The list's VNNI flag: this ISA's kernel where the build has AVX-512
 * VNNI, the AVX2 one where it does not. */
#if defined(__AVX512VNNI__)
#define NGPT_ISA_FN_VNNI NGPT_ISA_FN_SIMD
#define NGPT_ISA_PROTO_VNNI NGPT_ISA_PROTO_SIMD
#else
#define NGPT_ISA_FN_VNNI NGPT_ISA_FN_AVX2
#define NGPT_ISA_PROTO_VNNI NGPT_ISA_PROTO_AVX2
#endif

/* The prototypes of the kernels the list's avx512 column names: its own
 * (SIMD, VNNI with VNNI) and the AVX2 ones it borrows (AVX2, VNNI without). */
#define NGPT_KERNEL(kernel, op, ret, params, avx2_flag, neon_flag, avx512_flag, ...) \
    NGPT_ISA_PROTO(kernel, avx512, avx512_flag, ret, params)
#include "kernels.inc"

/* Lanes of a 16-float step at i below n. */
static inline __mmask16 avx512_lanes(size_t i, size_t n)
{
    return n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
}

/* Canonical 8-lane sums (kernels.h) over 16 values at a time: the two
 * 8-lane halves of a __m512 are consecutive groups of 8 elements, so they
 * are added to the one __m256 of lanes in turn, low half first: each lane
 * still adds its elements in increasing index order. */
static inline __m256 avx512_add_halves(__m256 acc, __m512 v)
{
    acc = _mm256_add_ps(acc, _mm512_castps512_ps256(v));
    return _mm256_add_ps(acc, _mm512_extractf32x8_ps(v, 1));
}

/* The same for lane = fmaf(a, b, lane). */
static inline __m256 avx512_fma_halves(__m256 acc, __m512 a, __m512 b)
{
    acc = _mm256_fmadd_ps(_mm512_castps512_ps256(a), _mm512_castps512_ps256(b), acc);
    return _mm256_fmadd_ps(_mm512_extractf32x8_ps(a, 1), _mm512_extractf32x8_ps(b, 1), acc);
}

/* ---- softmax and cross-entropy (softmax.c, cross_entropy.c) ---- */

/* The row max per lane with the reference's `s > m ? s : m` from s[0]; it
 * can differ from the reference only in the sign of a zero max, which
 * changes no result (arch/avx2/kernels_avx2.h says why). */
static inline float avx512_row_max(const float *s, int n)
{
    __m512 m = _mm512_set1_ps(s[0]);
    int j = 0;
    for (; j + 16 <= n; j += 16) {
        const __m512 v = _mm512_loadu_ps(s + j);
        m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, m, _CMP_GT_OQ), m, v);
    }
    float p[16];
    _mm512_storeu_ps(p, m);
    float mx = p[0];
    for (int l = 1; l < 16; l++) mx = p[l] > mx ? p[l] : mx;
    for (; j < n; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

/* ngpt_exp_term of 16 lanes: SLEEF's vector finz exp (the bits of the
 * scalar one), the cutoff applied by a mask. */
static inline __m512 avx512_exp_term(__m512 d)
{
    const __m512 e = Sleef_finz_expf16_u10avx512f(d);
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(d, _mm512_set1_ps(NGPT_EXP_CUTOFF), _CMP_NLT_UQ), e);
}

/* e_j = exp term of s_j - max into out (may alias s; NULL: not stored);
 * returns their canonical sum. The last step's lanes past n are +0.0f
 * terms, which leave a lane's sum of terms (>= +0) as it is. */
static inline float avx512_exp_row(float *out, const float *s, int n, float mx)
{
    const __m512 vm = _mm512_set1_ps(mx);
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < n; j += 16) {
        const __mmask16 k = avx512_lanes((size_t)j, (size_t)n);
        const __m512 e = _mm512_maskz_mov_ps(k, avx512_exp_term(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j), vm)));
        if (out) _mm512_mask_storeu_ps(out + j, k, e);
        acc = avx512_add_halves(acc, e);
    }
    float p[NGPT_LANES];
    _mm256_storeu_ps(p, acc);
    return ngpt_lanes_combine(p);
}

#endif
