/* gelu.c — reference GELU (exact, erf form), GELU with its derivative from
 * one erf, the backward's product, the tanh form (gelu=tanh) with its
 * derivative from one tanh, and SwiGLU (mlp=swiglu) with its backward; erf,
 * exp and tanh from SLEEF's deterministic finz functions. */
#include <math.h>
#include <sleef.h>

#include "../kernels.h"

void ngpt_f32_gelu_fwd_ref(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = (0.5f * v) * (1.0f + Sleef_finz_erff1_u10purecfma(v * 0.70710678118654752f));
    }
}

void ngpt_f32_gelu_fwd_grad_ref(float *y, float *g, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        float e = Sleef_finz_erff1_u10purecfma(v * 0.70710678118654752f);
        float cdf = 0.5f * (1.0f + e);
        float pdf = Sleef_finz_expf1_u10purecfma((-0.5f * v) * v) * 0.39894228040143268f;
        y[i] = (0.5f * v) * (1.0f + e);
        g[i] = fmaf(v, pdf, cdf);
    }
}

void ngpt_f32_gelu_bwd_ref(float *dx, const float *g, const float *dy, size_t n)
{
    for (size_t i = 0; i < n; i++) dx[i] = dy[i] * g[i];
}

/* GELU's tanh form (gelu=tanh); tanh from SLEEF's deterministic finz. */
static const float TANH_K = 0.7978845608028654f, TANH_C = 0.044715f, TANH_3C = 0.134145f;

void ngpt_f32_gelu_tanh_fwd_ref(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        float t = Sleef_finz_tanhf1_u10purecfma(TANH_K * (v + TANH_C * ((v * v) * v)));
        y[i] = (0.5f * v) * (1.0f + t);
    }
}

void ngpt_f32_gelu_tanh_fwd_grad_ref(float *y, float *g, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        float t = Sleef_finz_tanhf1_u10purecfma(TANH_K * (v + TANH_C * ((v * v) * v)));
        float c = fminf(fmaxf(v, -10.0f), 10.0f);
        float du = TANH_K * fmaf(TANH_3C, c * c, 1.0f);
        y[i] = (0.5f * v) * (1.0f + t);
        g[i] = fmaf((0.5f * v) * fmaf(-t, t, 1.0f), du, 0.5f * (1.0f + t));
    }
}

/* SwiGLU (mlp=swiglu): SiLU(g) * u, SiLU from one finz exp. */
void ngpt_f32_swiglu_fwd_ref(float *h, const float *g, const float *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = g[i], e = Sleef_finz_expf1_u10purecfma(-v);
        h[i] = (v / (1.0f + e)) * u[i];
    }
}

void ngpt_f32_swiglu_bwd_ref(float *dg, float *du, const float *dh, const float *g,
                             const float *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = g[i], e = Sleef_finz_expf1_u10purecfma(-v);
        float den = 1.0f + e, s = v / den, sg = 1.0f / den;
        float ds = fmaf(s, 1.0f - sg, sg);
        du[i] = dh[i] * s;
        dg[i] = (dh[i] * u[i]) * ds;
    }
}
