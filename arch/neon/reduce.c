/* reduce.c — NEON canonical 8-lane sums (rsum, sumsq) and bias column sums,
 * bit-identical to the reference. Row sums: lanes 0-3 and 4-7 are two
 * float32x4_t accumulators over 8-element blocks, the tail goes to its
 * lanes in scalar, then the reference tree; same shape as
 * arch/avx2/reduce.c (one __m256 there). Column sums keep 4 columns in a
 * register over all rows (AVX2 adds row after row into db: the same chains). */
#include <math.h>
#include <arm_neon.h>

#include "kernels_neon.h"


float ngpt_f32_rsum__neon(const float *x, size_t n)
{
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        lo = vaddq_f32(lo, vld1q_f32(x + i));
        hi = vaddq_f32(hi, vld1q_f32(x + i + 4));
    }
    float p[8];
    vst1q_f32(p, lo);
    vst1q_f32(p + 4, hi);
    for (size_t l = 0; i < n; i++, l++) p[l] = p[l] + x[i];
    return ngpt_lanes_combine(p);
}

float ngpt_f32_sumsq__neon(const float *x, size_t n)
{
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t a = vld1q_f32(x + i), b = vld1q_f32(x + i + 4);
        lo = vfmaq_f32(lo, a, a);
        hi = vfmaq_f32(hi, b, b);
    }
    float p[8];
    vst1q_f32(p, lo);
    vst1q_f32(p + 4, hi);
    for (size_t l = 0; i < n; i++, l++) p[l] = fmaf(x[i], x[i], p[l]);
    return ngpt_lanes_combine(p);
}

/* Rows in increasing order per column, as the reference; 4 columns a lane. */
void ngpt_f32_colsum_acc__neon(float *db, const float *dy, size_t rows, int n)
{
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        float32x4_t acc = vld1q_f32(db + j);
        for (size_t r = 0; r < rows; r++) acc = vaddq_f32(acc, vld1q_f32(dy + r * (size_t)n + j));
        vst1q_f32(db + j, acc);
    }
    for (; j < n; j++) {
        float acc = db[j];
        for (size_t r = 0; r < rows; r++) acc = acc + dy[r * (size_t)n + j];
        db[j] = acc;
    }
}
