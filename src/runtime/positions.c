/* positions.c — the position tables (positions.h). */
#include <math.h>
#include <sleef.h>

#include "runtime/config.h"
#include "runtime/positions.h"

/* The inverse frequency of pair i of dim: theta^(-2i/dim) by SLEEF's
 * double pow, then rope_scaling=llama3's rescaling (ngpt.h: Hugging Face's
 * _compute_llama3_parameters, in double: only correctly rounded +, -, *, /
 * after the pow, so every build computes the same bits). */
static double inv_frequency(const ngpt_config *cfg, int i, double dim)
{
    const double inv = Sleef_finz_powd1_u10purecfma((double)cfg->rope_theta, -(2.0 * i) / dim);
    if (cfg->rope_scaling != NGPT_ROPE_SCALING_LLAMA3) return inv;
    const double factor = (double)cfg->rope_factor, orig = (double)cfg->rope_original_context;
    const double low = (double)cfg->rope_low_freq_factor, high = (double)cfg->rope_high_freq_factor;
    const double low_wavelen = orig / low, high_wavelen = orig / high;
    const double pi = 3.141592653589793;        /* math.pi, the double nearest pi */
    const double wavelen = 2.0 * pi / inv;
    if (wavelen < high_wavelen) return inv;             /* high frequencies: kept */
    if (wavelen > low_wavelen) return inv / factor;     /* low ones: divided by factor */
    const double s = (orig / wavelen - low) / (high - low);     /* in between: smoothed */
    return (1.0 - s) * inv / factor + s * inv;
}

/* sin and cos of pos * inv_frequency(i) for pairs i and positions 0..T-1,
 * element (pos, i) at pos * row + i * step: the inverse frequency in
 * double, the angle rounded to float, then sin/cos in float like the
 * original's float32 cache. */
static void angle_table(const ngpt_config *cfg, int pairs, double dim, float *sin_t, float *cos_t,
                        size_t row, size_t step)
{
    for (int i = 0; i < pairs; i++) {
        double inv_freq = inv_frequency(cfg, i, dim);
        for (int pos = 0; pos < cfg->context_len; pos++) {
            float angle = (float)((double)pos * inv_freq);
            Sleef_float_2 sc = Sleef_finz_sincosf1_u10purecfma(angle);
            cos_t[(size_t)pos * row + (size_t)i * step] = sc.y;
            sin_t[(size_t)pos * row + (size_t)i * step] = sc.x;
        }
    }
}

void ngpt_rope_tables(const ngpt_config *cfg, float *cos_t, float *sin_t)
{
    const int half = ngpt_cfg_head_dim(cfg) / 2;
    angle_table(cfg, half, (double)(2 * half), sin_t, cos_t, (size_t)half, 1);
}

void ngpt_rope_local_tables(const ngpt_config *cfg, float *cos_t, float *sin_t)
{
    ngpt_config local = *cfg;
    local.rope_theta = ngpt_cfg_rope_local_theta(cfg);
    local.rope_scaling = NGPT_ROPE_SCALING_NONE;
    ngpt_rope_tables(&local, cos_t, sin_t);
}

void ngpt_sinusoid_table(const ngpt_config *cfg, float *pe)
{
    const int half = cfg->d_model / 2;
    angle_table(cfg, half, (double)cfg->d_model, pe, pe + 1, (size_t)cfg->d_model, 2);
}
