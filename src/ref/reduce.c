/* reduce.c — the canonical 8-lane row sum every reduction is built on. */
#include "../kernels.h"

float ngpt_f32_rsum_ref(const float *x, size_t n)
{
    float p[NGPT_LANES] = {0};
    for (size_t i = 0; i < n; i++) p[i % NGPT_LANES] = p[i % NGPT_LANES] + x[i];
    return ngpt_lanes_combine(p);
}
