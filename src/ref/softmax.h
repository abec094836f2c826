/* softmax.h — the steps softmax and cross-entropy share, written once: the
 * row max (`s > m ? s : m` from s[0], which fixes what a NaN or a signed
 * zero does), the exp term with its cutoff, and the row of exp terms with
 * their canonical sum. The ISA kernels have their own exp row (one per
 * ISA header) and call ngpt_exp_term for its tail. */
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

/* e_j = ngpt_exp_term(s_j - mx) into out (may alias s; NULL: not stored);
 * returns their canonical 8-lane sum. */
static inline float ngpt_exp_row(float *out, const float *s, int n, float mx)
{
    float lanes[NGPT_LANES] = {0};
    for (int j = 0; j < n; j++) {
        const float e = ngpt_exp_term(s[j] - mx);
        if (out) out[j] = e;
        lanes[j % NGPT_LANES] = lanes[j % NGPT_LANES] + e;
    }
    return ngpt_lanes_combine(lanes);
}

#endif
