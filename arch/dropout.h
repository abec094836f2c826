/* dropout.h — what the x86 dropout kernels (arch/avx2/dropout.c,
 * arch/avx512/dropout.c) share around their vector Philox: the head up to
 * the first Philox block boundary, which runs the reference, and a tail
 * applied from the block words the vector code made, as the reference
 * applies them. */
#ifndef NGPT_ARCH_DROPOUT_H
#define NGPT_ARCH_DROPOUT_H

#include "kernels.h"
#include "base/rng.h"

/* Runs the elements before element first's next block boundary (all n when
 * p >= 1: no mask) through the reference; returns how many it ran. */
static inline size_t ngpt_dropout_head(float *y, const float *x, size_t n, uint64_t first,
                                       const ngpt_dropout_key *key)
{
    size_t i = (size_t)((4 - first % 4) % 4);
    if (i > n || ngpt_dropout_threshold(key->p) > (1u << 24)) i = n;
    ngpt_f32_dropout_ref(y, x, i, first, key);
    return i;
}

/* y[e] = (words[e] >> 8) >= threshold ? x[e] * scale : 0 for e < n: the
 * reference's rule on words the caller computed. */
static inline void ngpt_dropout_apply(float *y, const float *x, size_t n, const uint32_t *words,
                                      uint32_t threshold, float scale)
{
    for (size_t e = 0; e < n; e++) y[e] = (words[e] >> 8) >= threshold ? x[e] * scale : 0.0f;
}

#endif
