/* update.c — AVX2 AdamW, the attention outer-product accumulation, bias
 * column sums and RoPE forward/backward, bit-identical to the reference:
 * elementwise, the same operations in the same order (fma only where the
 * reference has fmaf; RoPE without fma, operands in the reference's order). */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"

void ngpt_f32_adamw__avx2(float *p, const float *grad, float *m, float *v, size_t n,
                          const ngpt_adamw_coef *c)
{
    const __m256 gmul = _mm256_set1_ps(c->gmul), decay = _mm256_set1_ps(c->decay);
    const __m256 b1 = _mm256_set1_ps(c->beta1), omb1 = _mm256_set1_ps(c->one_minus_beta1);
    const __m256 b2 = _mm256_set1_ps(c->beta2), omb2 = _mm256_set1_ps(c->one_minus_beta2);
    const __m256 nstep = _mm256_set1_ps(-c->step_size), bc2 = _mm256_set1_ps(c->bc2_sqrt);
    const __m256 eps = _mm256_set1_ps(c->eps);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_mul_ps(_mm256_loadu_ps(grad + i), gmul);
        const __m256 w = _mm256_mul_ps(_mm256_loadu_ps(p + i), decay);
        const __m256 mi = _mm256_fmadd_ps(b1, _mm256_loadu_ps(m + i), _mm256_mul_ps(omb1, g));
        const __m256 vi = _mm256_fmadd_ps(b2, _mm256_loadu_ps(v + i), _mm256_mul_ps(_mm256_mul_ps(omb2, g), g));
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        const __m256 den = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vi), bc2), eps);
        _mm256_storeu_ps(p + i, _mm256_fmadd_ps(nstep, _mm256_div_ps(mi, den), w));
    }
    ngpt_f32_adamw_ref(p + i, grad + i, m + i, v + i, n - i, c);
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

void ngpt_f32_colsum_acc__avx2(float *db, const float *dy, size_t rows, int n)
{
    for (size_t r = 0; r < rows; r++) {
        const float *row = dy + r * (size_t)n;
        int j = 0;
        for (; j + 8 <= n; j += 8)
            _mm256_storeu_ps(db + j, _mm256_add_ps(_mm256_loadu_ps(db + j), _mm256_loadu_ps(row + j)));
        for (; j < n; j++) db[j] = db[j] + row[j];
    }
}

/* 4 table entries duplicated into (t0 t0 t1 t1 t2 t2 t3 t3). */
static inline __m256 dup4(const float *t)
{
    const __m256 v = _mm256_castps128_ps256(_mm_loadu_ps(t));
    return _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
}

/* v = (a0 b0 a1 b1 ...): vc = v*c, ws = swap(v)*s = (b0 s0, a0 s0, ...).
 * Forward: even a*c - b*s, odd a*s + b*c. Backward: even a*c + b*s,
 * odd b*c - a*s. */
static void rope_dir(float *x, int heads, int dim, const float *cos_t, const float *sin_t,
                     bool backward)
{
    const int half = dim / 2;
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * (size_t)dim;
        int i = 0;
        for (; i + 4 <= half; i += 4) {
            const __m256 xv = _mm256_loadu_ps(v + 2 * i);
            const __m256 vc = _mm256_mul_ps(xv, dup4(cos_t + i));
            const __m256 ws = _mm256_mul_ps(_mm256_permute_ps(xv, 0xB1), dup4(sin_t + i));
            __m256 even, odd;
            if (backward) {
                even = _mm256_add_ps(vc, ws);
                odd = _mm256_sub_ps(vc, ws);
            } else {
                even = _mm256_sub_ps(vc, ws);
                odd = _mm256_add_ps(ws, vc);
            }
            _mm256_storeu_ps(v + 2 * i, _mm256_blend_ps(even, odd, 0xAA));
        }
        for (; i < half; i++) {
            const float a = v[2 * i], b = v[2 * i + 1], c = cos_t[i], s = sin_t[i];
            if (backward) {
                v[2 * i] = a * c + b * s;
                v[2 * i + 1] = b * c - a * s;
            } else {
                v[2 * i] = a * c - b * s;
                v[2 * i + 1] = a * s + b * c;
            }
        }
    }
}

void ngpt_f32_rope__avx2(float *x, int heads, int dim, const float *cos_t, const float *sin_t)
{
    rope_dir(x, heads, dim, cos_t, sin_t, false);
}

void ngpt_f32_rope_bwd__avx2(float *g, int heads, int dim, const float *cos_t, const float *sin_t)
{
    rope_dir(g, heads, dim, cos_t, sin_t, true);
}
