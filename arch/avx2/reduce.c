/* reduce.c — AVX2 canonical 8-lane sums (rsum, sumsq) and bias column sums,
 * bit-identical to the reference. Row sums: one __m256 accumulator is the
 * 8 virtual lanes, the tail goes to its lanes in scalar, then the reference
 * tree; same shape as arch/neon/reduce.c (two float32x4_t there). Column
 * sums add row after row into db, 8 columns a vector (NEON keeps 4 columns
 * in a register over all rows instead: the same chains). */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"

float ngpt_f32_rsum__avx2(const float *x, size_t n)
{
    __m256 acc = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) acc = _mm256_add_ps(acc, _mm256_loadu_ps(x + i));
    float p[NGPT_LANES];
    _mm256_storeu_ps(p, acc);
    for (; i < n; i++) p[i % NGPT_LANES] = p[i % NGPT_LANES] + x[i];
    return ngpt_lanes_combine(p);
}

float ngpt_f32_sumsq__avx2(const float *x, size_t n)
{
    __m256 acc = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        acc = _mm256_fmadd_ps(v, v, acc);
    }
    float p[NGPT_LANES];
    _mm256_storeu_ps(p, acc);
    for (; i < n; i++) p[i % NGPT_LANES] = fmaf(x[i], x[i], p[i % NGPT_LANES]);
    return ngpt_lanes_combine(p);
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
