/* rope.c — AVX2 RoPE forward and backward (the transposed rotation),
 * bit-identical to the reference: the same products and sums per element
 * (no fma), operands in the reference's order. */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"

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
