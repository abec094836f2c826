/* elementwise.c — NEON add, RoPE (forward and backward), the attention
 * outer-product accumulation and bias column sums: per-element arithmetic
 * identical to the reference (mul and add separately where it has no fmaf,
 * vfmaq_f32 where it has fmaf). */
#include <math.h>
#include <arm_neon.h>

#include "kernels_neon.h"

void ngpt_f32_add__neon(float *y, const float *a, const float *b, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
    for (; i < n; i++) y[i] = a[i] + b[i];
}

/* Pairs (x_2i, x_2i+1) deinterleaved by vld2q: 4 pairs per step. */
static void rotate(float *x, int heads, int dim, const float *cos_t, const float *sin_t,
                   bool backward)
{
    const int half = dim / 2;
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * (size_t)dim;
        int i = 0;
        for (; i + 4 <= half; i += 4) {
            float32x4x2_t ab = vld2q_f32(v + 2 * i);
            const float32x4_t a = ab.val[0], b = ab.val[1];
            const float32x4_t c = vld1q_f32(cos_t + i), s = vld1q_f32(sin_t + i);
            if (!backward) {
                ab.val[0] = vsubq_f32(vmulq_f32(a, c), vmulq_f32(b, s));
                ab.val[1] = vaddq_f32(vmulq_f32(a, s), vmulq_f32(b, c));
            } else {
                ab.val[0] = vaddq_f32(vmulq_f32(a, c), vmulq_f32(b, s));
                ab.val[1] = vsubq_f32(vmulq_f32(b, c), vmulq_f32(a, s));
            }
            vst2q_f32(v + 2 * i, ab);
        }
        for (; i < half; i++) {
            const float a = v[2 * i], b = v[2 * i + 1], c = cos_t[i], s = sin_t[i];
            if (!backward) {
                v[2 * i] = a * c - b * s;
                v[2 * i + 1] = a * s + b * c;
            } else {
                v[2 * i] = a * c + b * s;
                v[2 * i + 1] = b * c - a * s;
            }
        }
    }
}

void ngpt_f32_rope__neon(float *x, int heads, int dim, const float *cos_t, const float *sin_t)
{
    rotate(x, heads, dim, cos_t, sin_t, false);
}

void ngpt_f32_rope_bwd__neon(float *g, int heads, int dim, const float *cos_t,
                             const float *sin_t)
{
    rotate(g, heads, dim, cos_t, sin_t, true);
}

void ngpt_f32_outer_acc__neon(float *out, ptrdiff_t out_stride, const float *w, const float *x,
                              int n, int dim)
{
    for (int j = 0; j < n; j++) {
        float *o = out + j * out_stride;
        const float wj = w[j];
        const float32x4_t wv = vdupq_n_f32(wj);
        int d = 0;
        for (; d + 4 <= dim; d += 4)
            vst1q_f32(o + d, vfmaq_f32(vld1q_f32(o + d), wv, vld1q_f32(x + d)));
        for (; d < dim; d++) o[d] = fmaf(wj, x[d], o[d]);
    }
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
