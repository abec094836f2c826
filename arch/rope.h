/* rope.h — the loop the ISAs' RoPE kernels share (arch/<isa>/rope.c): over
 * the heads, 4 pairs a step through the ISA's own rotate4, and the pairs a
 * head has left (dim/2 % 4) through the reference on a shorter vector. */
#ifndef NGPT_ARCH_ROPE_H
#define NGPT_ARCH_ROPE_H

#include "kernels.h"

/* Rotates pairs 0..3 of v by the tables c[0..3], s[0..3]. */
typedef void (*ngpt_rotate4_fn)(float *v, const float *c, const float *s, bool backward);

static inline void ngpt_rope_by4(float *x, int heads, int dim, const float *cos_t,
                                 const float *sin_t, bool backward, ngpt_rotate4_fn rotate4)
{
    const int half = dim / 2;
    for (int h = 0; h < heads; h++) {
        float *v = x + (size_t)h * (size_t)dim;
        int i = 0;
        for (; i + 4 <= half; i += 4) rotate4(v + 2 * i, cos_t + i, sin_t + i, backward);
        if (i == half) continue;
        if (backward)
            ngpt_f32_rope_bwd_ref(v + 2 * i, 1, 2 * (half - i), cos_t + i, sin_t + i);
        else
            ngpt_f32_rope_ref(v + 2 * i, 1, 2 * (half - i), cos_t + i, sin_t + i);
    }
}

#endif
