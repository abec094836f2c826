/* layernorm.c — reference LayerNorm forward (biased variance) and backward,
 * and RMSNorm's (norm_type=rms); the backwards recompute xhat from the saved
 * mean/rstd exactly as the forwards computed it. */
#include <math.h>

#include "../kernels.h"

void ngpt_f32_layernorm_fwd_ref(float *out, float *mean, float *rstd, const float *x,
                                const float *w, const float *b, size_t rows, int c, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c;
        float *yr = out + r * (size_t)c;
        float mu = ngpt_f32_rsum_ref(xr, (size_t)c) / (float)c;
        float p[NGPT_LANES] = {0};
        for (int i = 0; i < c; i++) {
            float d = xr[i] - mu;
            p[i % NGPT_LANES] = fmaf(d, d, p[i % NGPT_LANES]);
        }
        float var = ngpt_lanes_combine(p) / (float)c;
        float rs = 1.0f / sqrtf(var + eps);
        for (int i = 0; i < c; i++) yr[i] = fmaf((xr[i] - mu) * rs, w[i], b[i]);
        if (mean) mean[r] = mu;
        if (rstd) rstd[r] = rs;
    }
}

void ngpt_f32_layernorm_bwd_ref(float *dx, const float *dy, const float *x, const float *mean,
                                const float *rstd, const float *w, size_t rows, int c)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c, *dyr = dy + r * (size_t)c;
        float *dxr = dx + r * (size_t)c;
        const float mu = mean[r], rs = rstd[r];
        float l1[NGPT_LANES] = {0}, l2[NGPT_LANES] = {0};
        for (int i = 0; i < c; i++) {
            float xhat = (xr[i] - mu) * rs, g = dyr[i] * w[i];
            l1[i % NGPT_LANES] = l1[i % NGPT_LANES] + g;
            l2[i % NGPT_LANES] = fmaf(g, xhat, l2[i % NGPT_LANES]);
        }
        const float m1 = ngpt_lanes_combine(l1) / (float)c;
        const float m2 = ngpt_lanes_combine(l2) / (float)c;
        for (int i = 0; i < c; i++) {
            float xhat = (xr[i] - mu) * rs, g = dyr[i] * w[i];
            dxr[i] = fmaf(rs, fmaf(-xhat, m2, g - m1), dxr[i]);
        }
    }
}

void ngpt_f32_layernorm_bwd_wb_ref(float *dw, float *db, const float *dy, const float *x,
                                   ptrdiff_t ld, const float *mean, const float *rstd,
                                   size_t rows, int n)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + (ptrdiff_t)r * ld, *dyr = dy + (ptrdiff_t)r * ld;
        for (int i = 0; i < n; i++) {
            float xhat = (xr[i] - mean[r]) * rstd[r];
            dw[i] = fmaf(dyr[i], xhat, dw[i]);
            db[i] = db[i] + dyr[i];
        }
    }
}

void ngpt_f32_rmsnorm_fwd_ref(float *out, float *rstd, const float *x, const float *w,
                              size_t rows, int c, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c;
        float *yr = out + r * (size_t)c;
        float rs = 1.0f / sqrtf(ngpt_f32_sumsq_ref(xr, (size_t)c) / (float)c + eps);
        for (int i = 0; i < c; i++) yr[i] = (xr[i] * rs) * w[i];
        if (rstd) rstd[r] = rs;
    }
}

void ngpt_f32_rmsnorm_bwd_ref(float *dx, const float *dy, const float *x, const float *rstd,
                              const float *w, size_t rows, int c)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c, *dyr = dy + r * (size_t)c;
        float *dxr = dx + r * (size_t)c;
        const float rs = rstd[r];
        float l[NGPT_LANES] = {0};
        for (int i = 0; i < c; i++) l[i % NGPT_LANES] = fmaf(dyr[i] * w[i], xr[i] * rs, l[i % NGPT_LANES]);
        const float m = ngpt_lanes_combine(l) / (float)c;
        for (int i = 0; i < c; i++) dxr[i] = fmaf(rs, fmaf(-(xr[i] * rs), m, dyr[i] * w[i]), dxr[i]);
    }
}

void ngpt_f32_rmsnorm_bwd_w_ref(float *dw, const float *dy, const float *x, ptrdiff_t ld,
                                const float *rstd, size_t rows, int n)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + (ptrdiff_t)r * ld, *dyr = dy + (ptrdiff_t)r * ld;
        for (int i = 0; i < n; i++) dw[i] = fmaf(dyr[i], xr[i] * rstd[r], dw[i]);
    }
}
