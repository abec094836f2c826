/* softmax_bwd.c — reference cross-entropy and softmax backward (spec in
 * kernels.h). exp comes from SLEEF's deterministic finz function only. */
#include <math.h>
#include <sleef.h>

#include "../kernels.h"

void ngpt_f32_xent_bwd_ref(float *dlogits, const float *logits, int n, int target, float scale)
{
    float mx = logits[0];
    for (int j = 1; j < n; j++) mx = logits[j] > mx ? logits[j] : mx;
    float lanes[NGPT_LANES] = {0};
    for (int j = 0; j < n; j++) {
        float d = logits[j] - mx;
        float e = d < NGPT_EXP_CUTOFF ? 0.0f : Sleef_finz_expf1_u10purecfma(d);
        dlogits[j] = e;
        lanes[j % NGPT_LANES] = lanes[j % NGPT_LANES] + e;
    }
    float sum = ngpt_lanes_combine(lanes);
    for (int j = 0; j < n; j++)
        dlogits[j] = (dlogits[j] / sum - (j == target ? 1.0f : 0.0f)) * scale;
}

void ngpt_f32_softmax_bwd_ref(float *ds, const float *p, const float *dp, int n, float scale)
{
    float lanes[NGPT_LANES] = {0};
    for (int j = 0; j < n; j++) lanes[j % NGPT_LANES] = fmaf(p[j], dp[j], lanes[j % NGPT_LANES]);
    float dot = ngpt_lanes_combine(lanes);
    for (int j = 0; j < n; j++) ds[j] = (p[j] * (dp[j] - dot)) * scale;
}
