/* add.c — NEON elementwise sum: 4 lanes a step, the tail in scalar. Same
 * shape as arch/avx2/add.c. */
#include <arm_neon.h>

#include "kernels_neon.h"

void ngpt_f32_add__neon(float *y, const float *a, const float *b, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
    for (; i < n; i++) y[i] = a[i] + b[i];
}
