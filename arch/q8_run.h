/* q8_run.h — the loops of the 8-bit kernels that the ISAs share
 * (arch/<isa>/q8.c includes it; everything here is static): a row's groups
 * for quantize_q8, the last one zero-padded, and gemm_q8's walk over the
 * panels, two rows at a time. The ISA supplies one group's quantization
 * and the block of one or two rows against one panel. */
#ifndef NGPT_ARCH_Q8_RUN_H
#define NGPT_ARCH_Q8_RUN_H

#include <string.h>

#include "kernels.h"

/* The scale of a group from the bits of its largest |x| (q8.h's rule):
 * false when the group quantizes to zero (Inf or NaN in it: *d the NaN
 * scale; a scale below the floor: *d = 0), its 32 values then zeroed; else
 * *d = amax / 127 and *id = 127 / amax, the factor of x. */
static inline bool q8_group_scale(uint32_t amax_bits, int8_t *q, float *d, float *id)
{
    if (amax_bits >= 0x7f800000u) {
        const uint32_t nan = 0x7fc00000u;
        memcpy(d, &nan, sizeof *d);
        memset(q, 0, NGPT_Q8_GROUP);
        return false;
    }
    float amax;
    memcpy(&amax, &amax_bits, sizeof amax);
    *d = amax / 127.0f;
    if (!(*d >= NGPT_Q8_MIN_SCALE)) {
        *d = 0.0f;
        memset(q, 0, NGPT_Q8_GROUP);
        return false;
    }
    *id = 127.0f / amax;
    return true;
}

/* Quantizes 32 floats (zero past the row's end) into q; returns the scale. */
typedef float (*q8_group_fn)(int8_t *q, const float *x);

/* Rows i1 (1 or 2) quantized rows x0, x1 (scales s0, s1) against one panel,
 * every group; row r's outputs at c + r*c_rs, the first nvalid of 16 stored. */
typedef void (*q8_panel_fn)(int groups, const int8_t *x0, const float *s0, const int8_t *x1,
                            const float *s1, const int8_t *panel, const float *bias, float *c,
                            ptrdiff_t c_rs, int nvalid);

static inline __attribute__((always_inline)) void
q8_quantize_rows(q8_group_fn group, int8_t *xq, ptrdiff_t xq_rs, const float *x, ptrdiff_t x_rs,
                 int m, int k)
{
    const int groups = ngpt_q8_groups(k), full = k / NGPT_Q8_GROUP;
    for (int i = 0; i < m; i++) {
        int8_t *row = xq + i * xq_rs;
        float *d = (float *)(void *)(row + (size_t)groups * NGPT_Q8_GROUP);
        const float *xi = x + i * x_rs;
        for (int g = 0; g < full; g++)
            d[g] = group(row + (size_t)g * NGPT_Q8_GROUP, xi + (size_t)g * NGPT_Q8_GROUP);
        if (full < groups) {    /* the last, shorter group, zero-padded */
            float t[NGPT_Q8_GROUP] = {0};
            memcpy(t, xi + (size_t)full * NGPT_Q8_GROUP,
                   (size_t)(k - full * NGPT_Q8_GROUP) * sizeof(float));
            d[full] = group(row + (size_t)full * NGPT_Q8_GROUP, t);
        }
    }
}

/* Defines panel_2 and panel_1, the q8_panel_fn of two and one rows, from
 * the ISA's block rows(R, groups, x0, s0, x1, s1, panel, bias, c, c_rs,
 * nvalid), R a constant. */
#define Q8_PANEL_FNS(rows)                                                               \
    static void panel_2(int groups, const int8_t *x0, const float *s0, const int8_t *x1,  \
                        const float *s1, const int8_t *panel, const float *bias, float *c, \
                        ptrdiff_t c_rs, int nvalid)                                      \
    {                                                                                    \
        rows(2, groups, x0, s0, x1, s1, panel, bias, c, c_rs, nvalid);                   \
    }                                                                                    \
    static void panel_1(int groups, const int8_t *x0, const float *s0, const int8_t *x1,  \
                        const float *s1, const int8_t *panel, const float *bias, float *c, \
                        ptrdiff_t c_rs, int nvalid)                                      \
    {                                                                                    \
        rows(1, groups, x0, s0, x1, s1, panel, bias, c, c_rs, nvalid);                   \
    }

static inline __attribute__((always_inline)) void
q8_gemm_run(q8_panel_fn two, q8_panel_fn one, int m, int n, int k, const int8_t *xq,
            ptrdiff_t xq_rs, const int8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    for (int j0 = 0; j0 < n; j0 += NGPT_Q8_NR) {
        const int8_t *panel = ngpt_q8_panel(wq, k, j0);
        const float *b = bias ? bias + j0 : NULL;
        int i = 0;
        for (; i + 2 <= m; i += 2) {
            const int8_t *x0 = xq + i * xq_rs, *x1 = x0 + xq_rs;
            two(groups, x0, ngpt_q8_row_scales(x0, k), x1, ngpt_q8_row_scales(x1, k), panel, b,
                c + i * c_rs + j0, c_rs, n - j0);
        }
        if (i < m) {
            const int8_t *x0 = xq + i * xq_rs;
            one(groups, x0, ngpt_q8_row_scales(x0, k), NULL, NULL, panel, b, c + i * c_rs + j0,
                c_rs, n - j0);
        }
    }
}

#endif
