/* reduce.c — the canonical 8-lane row sums every reduction is built on (sum,
 * sum of squares), and the column sums of bias gradients (one chain per
 * column over rows). */
#include <math.h>

#include "../kernels.h"

float ngpt_f32_rsum_ref(const float *x, size_t n)
{
    float p[NGPT_LANES] = {0};
    for (size_t i = 0; i < n; i++) p[i % NGPT_LANES] = p[i % NGPT_LANES] + x[i];
    return ngpt_lanes_combine(p);
}

float ngpt_f32_sumsq_ref(const float *x, size_t n)
{
    float p[NGPT_LANES] = {0};
    for (size_t i = 0; i < n; i++) p[i % NGPT_LANES] = fmaf(x[i], x[i], p[i % NGPT_LANES]);
    return ngpt_lanes_combine(p);
}

void ngpt_f32_colsum_acc_ref(float *db, const float *dy, size_t rows, int n)
{
    for (size_t r = 0; r < rows; r++)
        for (int j = 0; j < n; j++) db[j] = db[j] + dy[r * (size_t)n + j];
}
