/* softmax.c — reference softmax and cross-entropy of one row. exp and log
 * come from SLEEF's deterministic finz functions only. */
#include <math.h>
#include <sleef.h>

#include "../kernels.h"

static float row_max(const float *s, int n)
{
    float mx = s[0];
    for (int j = 1; j < n; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

static float exp_term(float d)
{
    return d < NGPT_EXP_CUTOFF ? 0.0f : Sleef_finz_expf1_u10purecfma(d);
}

void ngpt_f32_softmax_ref(float *p, const float *s, int n)
{
    float mx = row_max(s, n);
    float lanes[NGPT_LANES] = {0};
    for (int j = 0; j < n; j++) {
        float e = exp_term(s[j] - mx);
        p[j] = e;
        lanes[j % NGPT_LANES] = lanes[j % NGPT_LANES] + e;
    }
    float sum = ngpt_lanes_combine(lanes);
    for (int j = 0; j < n; j++) p[j] = p[j] / sum;
}

float ngpt_f32_xent_ref(const float *logits, int n, int target)
{
    float mx = row_max(logits, n);
    float lanes[NGPT_LANES] = {0};
    for (int j = 0; j < n; j++)
        lanes[j % NGPT_LANES] = lanes[j % NGPT_LANES] + exp_term(logits[j] - mx);
    return (mx + Sleef_finz_logf1_u10purecfma(ngpt_lanes_combine(lanes))) - logits[target];
}
