/* elementwise.c — reference GELU (exact, erf), RoPE, dropout and add. */
#include <math.h>
#include <sleef.h>

#include "../kernels.h"
#include "../rng.h"

void ngpt_f32_gelu_fwd_ref(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = (0.5f * v) * (1.0f + Sleef_finz_erff1_u10purecfma(v * 0.70710678118654752f));
    }
}

void ngpt_f32_rope_ref(float *x, int heads, int dim, const float *cos_t, const float *sin_t)
{
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * (size_t)dim;
        for (int i = 0; i < dim / 2; i++) {
            float a = v[2 * i], b = v[2 * i + 1], c = cos_t[i], s = sin_t[i];
            v[2 * i] = a * c - b * s;
            v[2 * i + 1] = a * s + b * c;
        }
    }
}

void ngpt_f32_dropout_ref(float *y, const float *x, size_t n, uint64_t first,
                          const ngpt_dropout_key *key)
{
    const float scale = 1.0f / (1.0f - key->p);
    const uint32_t threshold = ngpt_dropout_threshold(key->p);
    uint32_t w[4];
    uint64_t cached = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t e = first + i;
        if (e / 4 != cached) {
            cached = e / 4;
            ngpt_rng_block(key->seed, key->site, key->step, cached, w);
        }
        y[i] = (w[e % 4] >> 8) >= threshold ? x[i] * scale : 0.0f;
    }
}

void ngpt_f32_add_ref(float *y, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}
