/* cross_entropy.c — reference cross-entropy of one row of logits against its
 * target, and its backward. exp and log come from SLEEF's deterministic finz
 * functions only. */
#include "softmax.h"

float ngpt_f32_xent_ref(const float *logits, int n, int target)
{
    const float mx = ngpt_row_max(logits, n);
    const float sum = ngpt_exp_row(NULL, logits, n, mx);
    return (mx + Sleef_finz_logf1_u10purecfma(sum)) - logits[target];
}

void ngpt_f32_xent_bwd_ref(float *dlogits, const float *logits, int n, int target, float scale)
{
    const float sum = ngpt_exp_row(dlogits, logits, n, ngpt_row_max(logits, n));
    for (int j = 0; j < n; j++)
        dlogits[j] = (dlogits[j] / sum - (j == target ? 1.0f : 0.0f)) * scale;
}
