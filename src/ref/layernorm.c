/* layernorm.c — reference LayerNorm forward (eps 1e-5, biased variance). */
#include <math.h>

#include "../kernels.h"

void ngpt_f32_layernorm_fwd_ref(float *out, float *mean, float *rstd, const float *x,
                                const float *w, const float *b, size_t rows, int c)
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
        float rs = 1.0f / sqrtf(var + 1e-5f);
        for (int i = 0; i < c; i++) yr[i] = fmaf((xr[i] - mu) * rs, w[i], b[i]);
        if (mean) mean[r] = mu;
        if (rstd) rstd[r] = rs;
    }
}
