/* softmax.h — the two steps softmax and cross-entropy share, written once:
 * the row max (the reference's `s > m ? s : m` from s[0], which fixes what a
 * NaN or a signed zero does) and the exp term with its cutoff. The ISA
 * kernels call these for their scalar tails. */
#ifndef NGPT_REF_SOFTMAX_H
#define NGPT_REF_SOFTMAX_H

#include <math.h>
#include <sleef.h>

#include "../kernels.h"

static inline float ngpt_row_max(const float *s, int n)
{
    float mx = s[0];
    for (int j = 1; j < n; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

/* exp(d), or exactly 0 below NGPT_EXP_CUTOFF (no subnormal term). */
static inline float ngpt_exp_term(float d)
{
    return d < NGPT_EXP_CUTOFF ? 0.0f : Sleef_finz_expf1_u10purecfma(d);
}

#endif
