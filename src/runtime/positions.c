/* positions.c — the position tables (positions.h). */
#include <math.h>
#include <sleef.h>

#include "runtime/config.h"
#include "runtime/positions.h"

/* sin and cos of pos * theta^(-2i/dim) for pairs i and positions 0..T-1,
 * element (pos, i) at pos * row + i * step: the inverse frequency in
 * double, the angle rounded to float, then sin/cos in float like the
 * original's float32 cache. */
static void angle_table(const ngpt_config *cfg, int pairs, double dim, float *sin_t, float *cos_t,
                        size_t row, size_t step)
{
    for (int i = 0; i < pairs; i++) {
        double inv_freq = Sleef_finz_powd1_u10purecfma((double)cfg->rope_theta, -(2.0 * i) / dim);
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

void ngpt_sinusoid_table(const ngpt_config *cfg, float *pe)
{
    const int half = cfg->d_model / 2;
    angle_table(cfg, half, (double)cfg->d_model, pe, pe + 1, (size_t)cfg->d_model, 2);
}
