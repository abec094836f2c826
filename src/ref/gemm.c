/* gemm.c — reference matrix product (spec in kernels.h): each output is one
 * fmaf chain over k in increasing order from +0.0f, bias added after. */
#include <math.h>

#include "../kernels.h"

void ngpt_f32_gemm_ref(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                       const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                       float *c, ptrdiff_t c_rs, bool accumulate)
{
    for (int i = 0; i < m; i++) {
        const float *ai = a + i * a_rs;
        float *ci = c + i * c_rs;
        for (int j = 0; j < n; j++) {
            const float *bj = b + j * b_cs;
            float acc = 0.0f;
            for (int kk = 0; kk < k; kk++) acc = fmaf(ai[kk * a_cs], bj[kk * b_rs], acc);
            if (bias) acc = acc + bias[j];
            ci[j] = accumulate ? ci[j] + acc : acc;
        }
    }
}
