/* layernorm.c — AVX2 LayerNorm and RMSNorm forward and backward, bit-identical to the
 * reference: row sums in the canonical 8 lanes (one __m256, the tail added
 * to its lanes in scalar), the same per-element operations (fma where the
 * reference has fmaf); 1/sqrtf and the divides by c stay scalar (once per
 * row). Same shape as arch/neon/layernorm.c: one __m256 here is two
 * float32x4_t there. */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"

void ngpt_f32_layernorm_fwd__avx2(float *out, float *mean, float *rstd, const float *x,
                                  const float *w, const float *b, size_t rows, int c, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c;
        float *yr = out + r * (size_t)c;
        const float mu = ngpt_f32_rsum__avx2(xr, (size_t)c) / (float)c;
        const __m256 vmu = _mm256_set1_ps(mu);
        __m256 acc = _mm256_setzero_ps();
        int i = 0;
        for (; i + 8 <= c; i += 8) {
            const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(xr + i), vmu);
            acc = _mm256_fmadd_ps(d, d, acc);
        }
        float p[NGPT_LANES];
        _mm256_storeu_ps(p, acc);
        for (; i < c; i++) {
            const float d = xr[i] - mu;
            p[i % NGPT_LANES] = fmaf(d, d, p[i % NGPT_LANES]);
        }
        const float var = ngpt_lanes_combine(p) / (float)c;
        const float rs = 1.0f / sqrtf(var + eps);
        const __m256 vrs = _mm256_set1_ps(rs);
        for (i = 0; i + 8 <= c; i += 8) {
            const __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vmu), vrs);
            _mm256_storeu_ps(yr + i, _mm256_fmadd_ps(xh, _mm256_loadu_ps(w + i), _mm256_loadu_ps(b + i)));
        }
        for (; i < c; i++) yr[i] = fmaf((xr[i] - mu) * rs, w[i], b[i]);
        if (mean) mean[r] = mu;
        if (rstd) rstd[r] = rs;
    }
}

void ngpt_f32_layernorm_bwd__avx2(float *dx, const float *dy, const float *x, const float *mean,
                                  const float *rstd, const float *w, size_t rows, int c)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c, *dyr = dy + r * (size_t)c;
        float *dxr = dx + r * (size_t)c;
        const float mu = mean[r], rs = rstd[r];
        const __m256 vmu = _mm256_set1_ps(mu), vrs = _mm256_set1_ps(rs);
        __m256 a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps();
        int i = 0;
        for (; i + 8 <= c; i += 8) {
            const __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vmu), vrs);
            const __m256 g = _mm256_mul_ps(_mm256_loadu_ps(dyr + i), _mm256_loadu_ps(w + i));
            a1 = _mm256_add_ps(a1, g);
            a2 = _mm256_fmadd_ps(g, xh, a2);
        }
        float l1[NGPT_LANES], l2[NGPT_LANES];
        _mm256_storeu_ps(l1, a1);
        _mm256_storeu_ps(l2, a2);
        for (; i < c; i++) {
            const float xhat = (xr[i] - mu) * rs, g = dyr[i] * w[i];
            l1[i % NGPT_LANES] = l1[i % NGPT_LANES] + g;
            l2[i % NGPT_LANES] = fmaf(g, xhat, l2[i % NGPT_LANES]);
        }
        const float m1 = ngpt_lanes_combine(l1) / (float)c;
        const float m2 = ngpt_lanes_combine(l2) / (float)c;
        const __m256 vm1 = _mm256_set1_ps(m1), vm2 = _mm256_set1_ps(m2);
        for (i = 0; i + 8 <= c; i += 8) {
            const __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vmu), vrs);
            const __m256 g = _mm256_mul_ps(_mm256_loadu_ps(dyr + i), _mm256_loadu_ps(w + i));
            const __m256 inner = _mm256_fmadd_ps(_mm256_xor_ps(xh, sign), vm2, _mm256_sub_ps(g, vm1));
            _mm256_storeu_ps(dxr + i, _mm256_fmadd_ps(vrs, inner, _mm256_loadu_ps(dxr + i)));
        }
        for (; i < c; i++) {
            const float xhat = (xr[i] - mu) * rs, g = dyr[i] * w[i];
            dxr[i] = fmaf(rs, fmaf(-xhat, m2, g - m1), dxr[i]);
        }
    }
}

/* 16 columns at a time (one 64-byte line of a row) keep their dw and db
 * chains in registers over every row; then 8; the tail in scalar. */
void ngpt_f32_layernorm_bwd_wb__avx2(float *dw, float *db, const float *dy, const float *x,
                                     ptrdiff_t ld, const float *mean, const float *rstd,
                                     size_t rows, int n)
{
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 w0 = _mm256_loadu_ps(dw + i), w1 = _mm256_loadu_ps(dw + i + 8);
        __m256 b0 = _mm256_loadu_ps(db + i), b1 = _mm256_loadu_ps(db + i + 8);
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + (ptrdiff_t)r * ld + i, *dyr = dy + (ptrdiff_t)r * ld + i;
            const __m256 vmu = _mm256_set1_ps(mean[r]), vrs = _mm256_set1_ps(rstd[r]);
            const __m256 d0 = _mm256_loadu_ps(dyr), d1 = _mm256_loadu_ps(dyr + 8);
            w0 = _mm256_fmadd_ps(d0, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr), vmu), vrs), w0);
            w1 = _mm256_fmadd_ps(d1, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + 8), vmu), vrs), w1);
            b0 = _mm256_add_ps(b0, d0);
            b1 = _mm256_add_ps(b1, d1);
        }
        _mm256_storeu_ps(dw + i, w0), _mm256_storeu_ps(dw + i + 8, w1);
        _mm256_storeu_ps(db + i, b0), _mm256_storeu_ps(db + i + 8, b1);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 w0 = _mm256_loadu_ps(dw + i), b0 = _mm256_loadu_ps(db + i);
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + (ptrdiff_t)r * ld + i, *dyr = dy + (ptrdiff_t)r * ld + i;
            const __m256 vmu = _mm256_set1_ps(mean[r]), vrs = _mm256_set1_ps(rstd[r]);
            const __m256 d0 = _mm256_loadu_ps(dyr);
            w0 = _mm256_fmadd_ps(d0, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr), vmu), vrs), w0);
            b0 = _mm256_add_ps(b0, d0);
        }
        _mm256_storeu_ps(dw + i, w0), _mm256_storeu_ps(db + i, b0);
    }
    if (i < n) ngpt_f32_layernorm_bwd_wb_ref(dw + i, db + i, dy + i, x + i, ld, mean, rstd, rows, n - i);
}

/* RMSNorm: the sum of squares is sumsq's 8 lanes; the rest elementwise. */
void ngpt_f32_rmsnorm_fwd__avx2(float *out, float *rstd, const float *x, const float *w,
                                size_t rows, int c, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c;
        float *yr = out + r * (size_t)c;
        const float rs = 1.0f / sqrtf(ngpt_f32_sumsq__avx2(xr, (size_t)c) / (float)c + eps);
        const __m256 vrs = _mm256_set1_ps(rs);
        int i = 0;
        for (; i + 8 <= c; i += 8)
            _mm256_storeu_ps(yr + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + i), vrs),
                                                   _mm256_loadu_ps(w + i)));
        for (; i < c; i++) yr[i] = (xr[i] * rs) * w[i];
        if (rstd) rstd[r] = rs;
    }
}

void ngpt_f32_rmsnorm_bwd__avx2(float *dx, const float *dy, const float *x, const float *rstd,
                                const float *w, size_t rows, int c)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c, *dyr = dy + r * (size_t)c;
        float *dxr = dx + r * (size_t)c;
        const float rs = rstd[r];
        const __m256 vrs = _mm256_set1_ps(rs);
        __m256 acc = _mm256_setzero_ps();
        int i = 0;
        for (; i + 8 <= c; i += 8) {
            const __m256 xh = _mm256_mul_ps(_mm256_loadu_ps(xr + i), vrs);
            const __m256 g = _mm256_mul_ps(_mm256_loadu_ps(dyr + i), _mm256_loadu_ps(w + i));
            acc = _mm256_fmadd_ps(g, xh, acc);
        }
        float l[NGPT_LANES];
        _mm256_storeu_ps(l, acc);
        for (; i < c; i++) l[i % NGPT_LANES] = fmaf(dyr[i] * w[i], xr[i] * rs, l[i % NGPT_LANES]);
        const float m = ngpt_lanes_combine(l) / (float)c;
        const __m256 vm = _mm256_set1_ps(m);
        for (i = 0; i + 8 <= c; i += 8) {
            const __m256 xh = _mm256_mul_ps(_mm256_loadu_ps(xr + i), vrs);
            const __m256 g = _mm256_mul_ps(_mm256_loadu_ps(dyr + i), _mm256_loadu_ps(w + i));
            const __m256 inner = _mm256_fmadd_ps(_mm256_xor_ps(xh, sign), vm, g);
            _mm256_storeu_ps(dxr + i, _mm256_fmadd_ps(vrs, inner, _mm256_loadu_ps(dxr + i)));
        }
        for (; i < c; i++) dxr[i] = fmaf(rs, fmaf(-(xr[i] * rs), m, dyr[i] * w[i]), dxr[i]);
    }
}

/* 16 columns at a time keep their dw chains in registers over every row,
 * then 8; the tail in scalar (as layernorm_bwd_wb). */
void ngpt_f32_rmsnorm_bwd_w__avx2(float *dw, const float *dy, const float *x, ptrdiff_t ld,
                                  const float *rstd, size_t rows, int n)
{
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 w0 = _mm256_loadu_ps(dw + i), w1 = _mm256_loadu_ps(dw + i + 8);
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + (ptrdiff_t)r * ld + i, *dyr = dy + (ptrdiff_t)r * ld + i;
            const __m256 vrs = _mm256_set1_ps(rstd[r]);
            w0 = _mm256_fmadd_ps(_mm256_loadu_ps(dyr), _mm256_mul_ps(_mm256_loadu_ps(xr), vrs), w0);
            w1 = _mm256_fmadd_ps(_mm256_loadu_ps(dyr + 8), _mm256_mul_ps(_mm256_loadu_ps(xr + 8), vrs), w1);
        }
        _mm256_storeu_ps(dw + i, w0), _mm256_storeu_ps(dw + i + 8, w1);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 w0 = _mm256_loadu_ps(dw + i);
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + (ptrdiff_t)r * ld + i, *dyr = dy + (ptrdiff_t)r * ld + i;
            w0 = _mm256_fmadd_ps(_mm256_loadu_ps(dyr),
                                 _mm256_mul_ps(_mm256_loadu_ps(xr), _mm256_set1_ps(rstd[r])), w0);
        }
        _mm256_storeu_ps(dw + i, w0);
    }
    if (i < n) ngpt_f32_rmsnorm_bwd_w_ref(dw + i, dy + i, x + i, ld, rstd, rows, n - i);
}
