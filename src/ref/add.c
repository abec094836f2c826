/* add.c — reference elementwise sum (the residual connections). */
#include "../kernels.h"

void ngpt_f32_add_ref(float *y, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}
