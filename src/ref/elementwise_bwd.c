/* elementwise_bwd.c — reference GELU and RoPE backward, the attention
 * outer-product accumulation and bias column sums (spec in kernels.h). */
#include <math.h>
#include <sleef.h>

#include "../kernels.h"

void ngpt_f32_gelu_bwd_ref(float *dx, const float *x, const float *dy, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        float cdf = 0.5f * (1.0f + Sleef_finz_erff1_u10purecfma(v * 0.70710678118654752f));
        float pdf = Sleef_finz_expf1_u10purecfma((-0.5f * v) * v) * 0.39894228040143268f;
        dx[i] = dy[i] * fmaf(v, pdf, cdf);
    }
}

void ngpt_f32_rope_bwd_ref(float *g, int heads, int dim, const float *cos_t, const float *sin_t)
{
    for (int h = 0; h < heads; h++) {
        float *v = g + (size_t)h * (size_t)dim;
        for (int i = 0; i < dim / 2; i++) {
            float a = v[2 * i], b = v[2 * i + 1], c = cos_t[i], s = sin_t[i];
            v[2 * i] = a * c + b * s;
            v[2 * i + 1] = b * c - a * s;
        }
    }
}

void ngpt_f32_outer_acc_ref(float *out, ptrdiff_t out_stride, const float *w, const float *x,
                            int n, int dim)
{
    for (int j = 0; j < n; j++) {
        float *o = out + j * out_stride;
        for (int d = 0; d < dim; d++) o[d] = fmaf(w[j], x[d], o[d]);
    }
}

void ngpt_f32_colsum_acc_ref(float *db, const float *dy, size_t rows, int n)
{
    for (size_t r = 0; r < rows; r++)
        for (int j = 0; j < n; j++) db[j] = db[j] + dy[r * (size_t)n + j];
}
