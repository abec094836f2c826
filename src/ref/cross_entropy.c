/* cross_entropy.c — reference cross-entropy of one row of logits against its
 * target, and its backward. exp and log come from SLEEF's deterministic finz
 * functions only. */
#include "softmax.h"

float ngpt_f32_xent_ref(const float *logits, int n, int target)
{
    float mx = ngpt_row_max(logits, n);
    float lanes[NGPT_LANES] = {0};
    for (int j = 0; j < n; j++)
        lanes[j % NGPT_LANES] = lanes[j % NGPT_LANES] + ngpt_exp_term(logits[j] - mx);
    return (mx + Sleef_finz_logf1_u10purecfma(ngpt_lanes_combine(lanes))) - logits[target];
}

void ngpt_f32_xent_bwd_ref(float *dlogits, const float *logits, int n, int target, float scale)
{
    float mx = ngpt_row_max(logits, n);
    float lanes[NGPT_LANES] = {0};
    for (int j = 0; j < n; j++) {
        float e = ngpt_exp_term(logits[j] - mx);
        dlogits[j] = e;
        lanes[j % NGPT_LANES] = lanes[j % NGPT_LANES] + e;
    }
    float sum = ngpt_lanes_combine(lanes);
    for (int j = 0; j < n; j++)
        dlogits[j] = (dlogits[j] / sum - (j == target ? 1.0f : 0.0f)) * scale;
}
