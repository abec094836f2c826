/* gelu.c — AVX-512 GELU forward and backward, exact and tanh forms (and SwiGLU),
 * bit-identical to the reference: the same operations per element in the
 * same order, erf/exp/tanh from SLEEF's deterministic vector finz functions
 * (the 16-lane avx512f ones: the bits of the scalar finz ones the reference
 * calls; checked over every float). A tail of fewer than 16 elements runs the same vector code
 * under a mask: lanes past n compute on zeros and are not stored. Same
 * shape as arch/avx2/gelu.c, 16 lanes where that has 8; erf is most of a
 * training step's GELU time, and SLEEF's 16-lane erf costs about half as
 * much per element as its 8-lane one on Zen 4. */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>

#include "kernels_avx512.h"

/* Lanes of a 16-float step at i below n. */
static inline __mmask16 lanes(size_t i, size_t n)
{
    return n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
}

void ngpt_f32_gelu_fwd__avx512(float *y, const float *x, size_t n)
{
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    const __m512 rsqrt2 = _mm512_set1_ps(0.70710678118654752f);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        const __m512 e = Sleef_finz_erff16_u10avx512f(_mm512_mul_ps(v, rsqrt2));
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, e)));
    }
}

void ngpt_f32_gelu_fwd_grad__avx512(float *y, float *g, const float *x, size_t n)
{
    const __m512 half = _mm512_set1_ps(0.5f), mhalf = _mm512_set1_ps(-0.5f);
    const __m512 one = _mm512_set1_ps(1.0f), rsqrt2 = _mm512_set1_ps(0.70710678118654752f);
    const __m512 rsqrt2pi = _mm512_set1_ps(0.39894228040143268f);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        const __m512 e1 = _mm512_add_ps(one, Sleef_finz_erff16_u10avx512f(_mm512_mul_ps(v, rsqrt2)));
        const __m512 cdf = _mm512_mul_ps(half, e1);
        const __m512 pdf = _mm512_mul_ps(
            Sleef_finz_expf16_u10avx512f(_mm512_mul_ps(_mm512_mul_ps(mhalf, v), v)), rsqrt2pi);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_mul_ps(half, v), e1));
        _mm512_mask_storeu_ps(g + i, m, _mm512_fmadd_ps(v, pdf, cdf));
    }
}

void ngpt_f32_gelu_bwd__avx512(float *dx, const float *g, const float *dy, size_t n)
{
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        _mm512_mask_storeu_ps(dx + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, dy + i),
                                                       _mm512_maskz_loadu_ps(m, g + i)));
    }
}

/* The tanh form (gelu=tanh), 16 lanes; tanh from SLEEF's finz vector tanh. */
static inline __m512 tanh_of(__m512 v)
{
    const __m512 k = _mm512_set1_ps(0.7978845608028654f), c = _mm512_set1_ps(0.044715f);
    const __m512 cube = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
    return Sleef_finz_tanhf16_u10avx512f(_mm512_mul_ps(k, _mm512_add_ps(v, _mm512_mul_ps(c, cube))));
}

void ngpt_f32_gelu_tanh_fwd__avx512(float *y, const float *x, size_t n)
{
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        const __m512 t = tanh_of(v);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, t)));
    }
}

void ngpt_f32_gelu_tanh_fwd_grad__avx512(float *y, float *g, const float *x, size_t n)
{
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    const __m512 k = _mm512_set1_ps(0.7978845608028654f), c3 = _mm512_set1_ps(0.134145f);
    const __m512 lo = _mm512_set1_ps(-10.0f), hi = _mm512_set1_ps(10.0f);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        const __m512 t = tanh_of(v);
        const __m512 cl = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
        const __m512 du = _mm512_mul_ps(k, _mm512_fmadd_ps(c3, _mm512_mul_ps(cl, cl), one));
        const __m512 hv = _mm512_mul_ps(half, v), t1 = _mm512_add_ps(one, t);
        const __m512 sech2 = _mm512_fnmadd_ps(t, t, one);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(hv, t1));
        _mm512_mask_storeu_ps(g + i, m, _mm512_fmadd_ps(_mm512_mul_ps(hv, sech2), du, _mm512_mul_ps(half, t1)));
    }
}

/* SwiGLU (mlp=swiglu), 16 lanes: SLEEF's 16-lane finz exp, then the
 * reference's divides and products; the tail under a mask like GELU's. */
void ngpt_f32_swiglu_fwd__avx512(float *h, const float *g, const float *u, size_t n)
{
    const __m512 one = _mm512_set1_ps(1.0f), sign = _mm512_set1_ps(-0.0f);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        const __m512 v = _mm512_maskz_loadu_ps(m, g + i);
        const __m512 e = Sleef_finz_expf16_u10avx512f(_mm512_xor_ps(v, sign));
        const __m512 s = _mm512_div_ps(v, _mm512_add_ps(one, e));
        _mm512_mask_storeu_ps(h + i, m, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(m, u + i)));
    }
}

void ngpt_f32_swiglu_bwd__avx512(float *dg, float *du, const float *dh, const float *g,
                                 const float *u, size_t n)
{
    const __m512 one = _mm512_set1_ps(1.0f), sign = _mm512_set1_ps(-0.0f);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes(i, n);
        const __m512 v = _mm512_maskz_loadu_ps(m, g + i), d = _mm512_maskz_loadu_ps(m, dh + i);
        const __m512 den = _mm512_add_ps(one, Sleef_finz_expf16_u10avx512f(_mm512_xor_ps(v, sign)));
        const __m512 s = _mm512_div_ps(v, den), sg = _mm512_div_ps(one, den);
        const __m512 ds = _mm512_fmadd_ps(s, _mm512_sub_ps(one, sg), sg);
        _mm512_mask_storeu_ps(du + i, m, _mm512_mul_ps(d, s));
        _mm512_mask_storeu_ps(dg + i, m,
                              _mm512_mul_ps(_mm512_mul_ps(d, _mm512_maskz_loadu_ps(m, u + i)), ds));
    }
}
