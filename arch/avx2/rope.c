/* rope.c — AVX2 RoPE forward and backward (the transposed rotation),
 * bit-identical to the reference: the same products and sums per element
 * (no fma), operands in the reference's order; 4 pairs a vector, kept
 * interleaved (a swap within pairs, tables duplicated to both lanes of a
 * pair, even/odd results blended); the loop over heads and the pairs left
 * to the reference are arch/rope.h, shared with arch/neon/rope.c, which
 * deinterleaves the pairs with vld2q instead. */
#include <immintrin.h>

#include "kernels_avx2.h"
#include "../rope.h"

/* 4 table entries duplicated into (t0 t0 t1 t1 t2 t2 t3 t3). */
static inline __m256 dup4(const float *t)
{
    const __m256 v = _mm256_castps128_ps256(_mm_loadu_ps(t));
    return _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
}

/* v = (a0 b0 a1 b1 ...): vc = v*c, ws = swap(v)*s = (b0 s0, a0 s0, ...).
 * Forward: even a*c - b*s, odd a*s + b*c. Backward: even a*c + b*s,
 * odd b*c - a*s. */
static inline void rotate4(float *v, const float *c, const float *s, bool backward)
{
    const __m256 xv = _mm256_loadu_ps(v);
    const __m256 vc = _mm256_mul_ps(xv, dup4(c));
    const __m256 ws = _mm256_mul_ps(_mm256_permute_ps(xv, 0xB1), dup4(s));
    __m256 even, odd;
    if (backward) {
        even = _mm256_add_ps(vc, ws);
        odd = _mm256_sub_ps(vc, ws);
    } else {
        even = _mm256_sub_ps(vc, ws);
        odd = _mm256_add_ps(ws, vc);
    }
    _mm256_storeu_ps(v, _mm256_blend_ps(even, odd, 0xAA));
}

void ngpt_f32_rope__avx2(float *x, int heads, int dim, const float *cos_t, const float *sin_t)
{
    ngpt_rope_by4(x, heads, dim, cos_t, sin_t, false, rotate4);
}

void ngpt_f32_rope_bwd__avx2(float *g, int heads, int dim, const float *cos_t, const float *sin_t)
{
    ngpt_rope_by4(g, heads, dim, cos_t, sin_t, true, rotate4);
}

/* Halves (rope_pairs=halves): x_i and x_i+dim/2 are 8 consecutive floats
 * each, no shuffle; the pairs a head has left (dim/2 % 8) in scalar, the
 * reference's expressions. */
static void rope_halves(float *x, int heads, int dim, const float *cos_t, const float *sin_t,
                        bool backward)
{
    const int half = dim / 2;
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * (size_t)dim;
        int i = 0;
        for (; i + 8 <= half; i += 8) {
            const __m256 a = _mm256_loadu_ps(v + i), b = _mm256_loadu_ps(v + i + half);
            const __m256 c = _mm256_loadu_ps(cos_t + i), s = _mm256_loadu_ps(sin_t + i);
            if (backward) {
                _mm256_storeu_ps(v + i, _mm256_add_ps(_mm256_mul_ps(a, c), _mm256_mul_ps(b, s)));
                _mm256_storeu_ps(v + i + half, _mm256_sub_ps(_mm256_mul_ps(b, c), _mm256_mul_ps(a, s)));
            } else {
                _mm256_storeu_ps(v + i, _mm256_sub_ps(_mm256_mul_ps(a, c), _mm256_mul_ps(b, s)));
                _mm256_storeu_ps(v + i + half, _mm256_add_ps(_mm256_mul_ps(a, s), _mm256_mul_ps(b, c)));
            }
        }
        for (; i < half; i++) {
            const float a = v[i], b = v[i + half], c = cos_t[i], s = sin_t[i];
            v[i] = backward ? a * c + b * s : a * c - b * s;
            v[i + half] = backward ? b * c - a * s : a * s + b * c;
        }
    }
}

void ngpt_f32_rope_halves__avx2(float *x, int heads, int dim, const float *cos_t,
                                const float *sin_t)
{
    rope_halves(x, heads, dim, cos_t, sin_t, false);
}

void ngpt_f32_rope_halves_bwd__avx2(float *g, int heads, int dim, const float *cos_t,
                                    const float *sin_t)
{
    rope_halves(g, heads, dim, cos_t, sin_t, true);
}
