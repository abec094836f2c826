/* q8_run.h — quantize_q8's loop that the ISAs share (arch/<isa>/q8.c
 * includes it; everything here is static): a row's groups, the last one
 * zero-padded, and the groups that quantize to zero. The ISA supplies one
 * group's quantization. gemm_q8's walk over the panels is panel_walk.h. */
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

#endif
