/* softmax.c — reference softmax of one row and its backward. exp comes from
 * SLEEF's deterministic finz function only. */
#include "softmax.h"

void ngpt_f32_softmax_ref(float *p, const float *s, int n)
{
    const float sum = ngpt_exp_row(p, s, n, ngpt_row_max(s, n));
    for (int j = 0; j < n; j++) p[j] = p[j] / sum;
}

void ngpt_f32_softmax_bwd_ref(float *ds, const float *p, const float *dp, int n, float scale)
{
    float lanes[NGPT_LANES] = {0};
    for (int j = 0; j < n; j++) lanes[j % NGPT_LANES] = fmaf(p[j], dp[j], lanes[j % NGPT_LANES]);
    float dot = ngpt_lanes_combine(lanes);
    for (int j = 0; j < n; j++) ds[j] = (p[j] * (dp[j] - dot)) * scale;
}
