/* layernorm.c — NEON LayerNorm forward and backward, bit-identical to the
 * reference: row sums in the canonical 8 lanes (two float32x4_t, the tail
 * added to its lanes in scalar), the per-element formulas with vfmaq_f32
 * exactly where the reference has fmaf; 1/sqrtf and the divides by c stay
 * scalar (once per row). Same shape as arch/avx2/layernorm.c (one __m256
 * there is two float32x4_t here); elementwise passes go 4 lanes a step. */
#include <math.h>
#include <arm_neon.h>

#include "kernels_neon.h"

void ngpt_f32_layernorm_fwd__neon(float *out, float *mean, float *rstd, const float *x,
                                  const float *w, const float *b, size_t rows, int c)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c;
        float *yr = out + r * (size_t)c;
        const float mu = ngpt_f32_rsum__neon(xr, (size_t)c) / (float)c;
        const float32x4_t muv = vdupq_n_f32(mu);
        float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
        int i = 0;
        for (; i + 8 <= c; i += 8) {
            const float32x4_t d0 = vsubq_f32(vld1q_f32(xr + i), muv);
            const float32x4_t d1 = vsubq_f32(vld1q_f32(xr + i + 4), muv);
            lo = vfmaq_f32(lo, d0, d0);
            hi = vfmaq_f32(hi, d1, d1);
        }
        float p[NGPT_LANES];
        vst1q_f32(p, lo);
        vst1q_f32(p + 4, hi);
        for (int l = 0; i < c; i++, l++) {
            const float d = xr[i] - mu;
            p[l] = fmaf(d, d, p[l]);
        }
        const float var = ngpt_lanes_combine(p) / (float)c;
        const float rs = 1.0f / sqrtf(var + 1e-5f);
        const float32x4_t rsv = vdupq_n_f32(rs);
        for (i = 0; i + 4 <= c; i += 4) {
            const float32x4_t xh = vmulq_f32(vsubq_f32(vld1q_f32(xr + i), muv), rsv);
            vst1q_f32(yr + i, vfmaq_f32(vld1q_f32(b + i), xh, vld1q_f32(w + i)));
        }
        for (; i < c; i++) yr[i] = fmaf((xr[i] - mu) * rs, w[i], b[i]);
        if (mean) mean[r] = mu;
        if (rstd) rstd[r] = rs;
    }
}

void ngpt_f32_layernorm_bwd__neon(float *dx, float *dw, float *db, const float *dy,
                                  const float *x, const float *mean, const float *rstd,
                                  const float *w, size_t rows, int c)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c, *dyr = dy + r * (size_t)c;
        float *dxr = dx + r * (size_t)c;
        const float mu = mean[r], rs = rstd[r];
        const float32x4_t muv = vdupq_n_f32(mu), rsv = vdupq_n_f32(rs);
        float32x4_t s1lo = vdupq_n_f32(0.0f), s1hi = s1lo, s2lo = s1lo, s2hi = s1lo;
        int i = 0;
        for (; i + 8 <= c; i += 8) {
            const float32x4_t xh0 = vmulq_f32(vsubq_f32(vld1q_f32(xr + i), muv), rsv);
            const float32x4_t xh1 = vmulq_f32(vsubq_f32(vld1q_f32(xr + i + 4), muv), rsv);
            const float32x4_t g0 = vmulq_f32(vld1q_f32(dyr + i), vld1q_f32(w + i));
            const float32x4_t g1 = vmulq_f32(vld1q_f32(dyr + i + 4), vld1q_f32(w + i + 4));
            s1lo = vaddq_f32(s1lo, g0);
            s1hi = vaddq_f32(s1hi, g1);
            s2lo = vfmaq_f32(s2lo, g0, xh0);
            s2hi = vfmaq_f32(s2hi, g1, xh1);
        }
        float l1[NGPT_LANES], l2[NGPT_LANES];
        vst1q_f32(l1, s1lo), vst1q_f32(l1 + 4, s1hi);
        vst1q_f32(l2, s2lo), vst1q_f32(l2 + 4, s2hi);
        for (int l = 0; i < c; i++, l++) {
            const float xhat = (xr[i] - mu) * rs, g = dyr[i] * w[i];
            l1[l] = l1[l] + g;
            l2[l] = fmaf(g, xhat, l2[l]);
        }
        const float m1 = ngpt_lanes_combine(l1) / (float)c;
        const float m2 = ngpt_lanes_combine(l2) / (float)c;
        const float32x4_t m1v = vdupq_n_f32(m1), m2v = vdupq_n_f32(m2);
        for (i = 0; i + 4 <= c; i += 4) {
            const float32x4_t xh = vmulq_f32(vsubq_f32(vld1q_f32(xr + i), muv), rsv);
            const float32x4_t d = vld1q_f32(dyr + i);
            const float32x4_t g = vmulq_f32(d, vld1q_f32(w + i));
            const float32x4_t in = vfmaq_f32(vsubq_f32(g, m1v), vnegq_f32(xh), m2v);
            vst1q_f32(dxr + i, vfmaq_f32(vld1q_f32(dxr + i), rsv, in));
            vst1q_f32(dw + i, vfmaq_f32(vld1q_f32(dw + i), d, xh));
            vst1q_f32(db + i, vaddq_f32(vld1q_f32(db + i), d));
        }
        for (; i < c; i++) {
            const float xhat = (xr[i] - mu) * rs, g = dyr[i] * w[i];
            dxr[i] = fmaf(rs, fmaf(-xhat, m2, g - m1), dxr[i]);
            dw[i] = fmaf(dyr[i], xhat, dw[i]);
            db[i] = db[i] + dyr[i];
        }
    }
}
