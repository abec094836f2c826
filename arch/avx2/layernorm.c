/* layernorm.c — AVX2 LayerNorm forward and backward, bit-identical to the
 * reference: row sums in the canonical 8 lanes (one __m256, the tail added
 * to its lanes in scalar), the same per-element operations (fma where the
 * reference has fmaf); 1/sqrtf and the divides by c stay scalar (once per
 * row). Same shape as arch/neon/layernorm.c: one __m256 here is two
 * float32x4_t there. */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"

void ngpt_f32_layernorm_fwd__avx2(float *out, float *mean, float *rstd, const float *x,
                                  const float *w, const float *b, size_t rows, int c)
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
        const float rs = 1.0f / sqrtf(var + 1e-5f);
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

void ngpt_f32_layernorm_bwd__avx2(float *dx, float *dw, float *db, const float *dy,
                                  const float *x, const float *mean, const float *rstd,
                                  const float *w, size_t rows, int c)
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
            const __m256 dyv = _mm256_loadu_ps(dyr + i);
            const __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vmu), vrs);
            const __m256 g = _mm256_mul_ps(dyv, _mm256_loadu_ps(w + i));
            const __m256 inner = _mm256_fmadd_ps(_mm256_xor_ps(xh, sign), vm2, _mm256_sub_ps(g, vm1));
            _mm256_storeu_ps(dxr + i, _mm256_fmadd_ps(vrs, inner, _mm256_loadu_ps(dxr + i)));
            _mm256_storeu_ps(dw + i, _mm256_fmadd_ps(dyv, xh, _mm256_loadu_ps(dw + i)));
            _mm256_storeu_ps(db + i, _mm256_add_ps(_mm256_loadu_ps(db + i), dyv));
        }
        for (; i < c; i++) {
            const float xhat = (xr[i] - mu) * rs, g = dyr[i] * w[i];
            dxr[i] = fmaf(rs, fmaf(-xhat, m2, g - m1), dxr[i]);
            dw[i] = fmaf(dyr[i], xhat, dw[i]);
            db[i] = db[i] + dyr[i];
        }
    }
}
