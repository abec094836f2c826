/* gelu.c — AVX2 GELU forward and backward, exact and tanh forms,
 * bit-identical to the reference: the same operations per element in the
 * same order, erf/exp/tanh from SLEEF's deterministic vector finz functions
 * (the bits of the scalar finz ones the reference calls); the tail (< 8
 * elements) runs the reference. Same shape as arch/neon/gelu.c, 8 lanes
 * where that has 4. */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>

#include "kernels_avx2.h"

void ngpt_f32_gelu_fwd__avx2(float *y, const float *x, size_t n)
{
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    const __m256 rsqrt2 = _mm256_set1_ps(0.70710678118654752f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 e = Sleef_finz_erff8_u10avx2(_mm256_mul_ps(v, rsqrt2));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, e)));
    }
    ngpt_f32_gelu_fwd_ref(y + i, x + i, n - i);
}

void ngpt_f32_gelu_fwd_grad__avx2(float *y, float *g, const float *x, size_t n)
{
    const __m256 half = _mm256_set1_ps(0.5f), mhalf = _mm256_set1_ps(-0.5f);
    const __m256 one = _mm256_set1_ps(1.0f), rsqrt2 = _mm256_set1_ps(0.70710678118654752f);
    const __m256 rsqrt2pi = _mm256_set1_ps(0.39894228040143268f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 e1 = _mm256_add_ps(one, Sleef_finz_erff8_u10avx2(_mm256_mul_ps(v, rsqrt2)));
        __m256 cdf = _mm256_mul_ps(half, e1);
        __m256 pdf = _mm256_mul_ps(Sleef_finz_expf8_u10avx2(_mm256_mul_ps(_mm256_mul_ps(mhalf, v), v)), rsqrt2pi);
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(half, v), e1));
        _mm256_storeu_ps(g + i, _mm256_fmadd_ps(v, pdf, cdf));
    }
    ngpt_f32_gelu_fwd_grad_ref(y + i, g + i, x + i, n - i);
}

void ngpt_f32_gelu_bwd__avx2(float *dx, const float *g, const float *dy, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dx + i, _mm256_mul_ps(_mm256_loadu_ps(dy + i), _mm256_loadu_ps(g + i)));
    ngpt_f32_gelu_bwd_ref(dx + i, g + i, dy + i, n - i);
}

/* The tanh form (gelu=tanh), 8 lanes; tanh from SLEEF's finz vector tanh. */
static inline __m256 tanh_of(__m256 v)
{
    const __m256 k = _mm256_set1_ps(0.7978845608028654f), c = _mm256_set1_ps(0.044715f);
    const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    return Sleef_finz_tanhf8_u10avx2(_mm256_mul_ps(k, _mm256_add_ps(v, _mm256_mul_ps(c, cube))));
}

void ngpt_f32_gelu_tanh_fwd__avx2(float *y, const float *x, size_t n)
{
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 t = tanh_of(v);
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, t)));
    }
    ngpt_f32_gelu_tanh_fwd_ref(y + i, x + i, n - i);
}

void ngpt_f32_gelu_tanh_fwd_grad__avx2(float *y, float *g, const float *x, size_t n)
{
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    const __m256 k = _mm256_set1_ps(0.7978845608028654f), c3 = _mm256_set1_ps(0.134145f);
    const __m256 lo = _mm256_set1_ps(-10.0f), hi = _mm256_set1_ps(10.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 t = tanh_of(v);
        const __m256 cl = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
        const __m256 du = _mm256_mul_ps(k, _mm256_fmadd_ps(c3, _mm256_mul_ps(cl, cl), one));
        const __m256 hv = _mm256_mul_ps(half, v), t1 = _mm256_add_ps(one, t);
        const __m256 sech2 = _mm256_fnmadd_ps(t, t, one);
        _mm256_storeu_ps(y + i, _mm256_mul_ps(hv, t1));
        _mm256_storeu_ps(g + i, _mm256_fmadd_ps(_mm256_mul_ps(hv, sech2), du, _mm256_mul_ps(half, t1)));
    }
    ngpt_f32_gelu_tanh_fwd_grad_ref(y + i, g + i, x + i, n - i);
}

/* SwiGLU (mlp=swiglu), 8 lanes: SLEEF's finz vector exp, then the
 * reference's divides and products. */
void ngpt_f32_swiglu_fwd__avx2(float *h, const float *g, const float *u, size_t n)
{
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(g + i);
        const __m256 e = Sleef_finz_expf8_u10avx2(_mm256_xor_ps(v, sign));
        const __m256 s = _mm256_div_ps(v, _mm256_add_ps(one, e));
        _mm256_storeu_ps(h + i, _mm256_mul_ps(s, _mm256_loadu_ps(u + i)));
    }
    ngpt_f32_swiglu_fwd_ref(h + i, g + i, u + i, n - i);
}

void ngpt_f32_swiglu_bwd__avx2(float *dg, float *du, const float *dh, const float *g,
                               const float *u, size_t n)
{
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(g + i), d = _mm256_loadu_ps(dh + i);
        const __m256 den = _mm256_add_ps(one, Sleef_finz_expf8_u10avx2(_mm256_xor_ps(v, sign)));
        const __m256 s = _mm256_div_ps(v, den), sg = _mm256_div_ps(one, den);
        const __m256 ds = _mm256_fmadd_ps(s, _mm256_sub_ps(one, sg), sg);
        _mm256_storeu_ps(du + i, _mm256_mul_ps(d, s));
        _mm256_storeu_ps(dg + i, _mm256_mul_ps(_mm256_mul_ps(d, _mm256_loadu_ps(u + i)), ds));
    }
    ngpt_f32_swiglu_bwd_ref(dg + i, du + i, dh + i, g + i, u + i, n - i);
}
