/* gemm.c — reference matrix product (spec in kernels.h): each output is one
 * fmaf chain over k in increasing order from +0.0f, bias added after.
 * When B's rows are contiguous (b_cs == 1: the backward's dy W and dy^T x)
 * the loops run i, k, j over a block of accumulators so the inner loop
 * walks memory in order; every output keeps the same chain, so the bits do
 * not depend on which order is taken. Otherwise four outputs' chains run
 * side by side (independent, for instruction-level parallelism). */
#include <math.h>

#include "../kernels.h"

enum { JBLOCK = 256 };

static void gemm_ikj(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                     const float *b, ptrdiff_t b_rs, const float *bias, float *c, ptrdiff_t c_rs,
                     bool accumulate)
{
    float acc[JBLOCK];
    for (int i = 0; i < m; i++) {
        const float *ai = a + i * a_rs;
        float *ci = c + i * c_rs;
        for (int j0 = 0; j0 < n; j0 += JBLOCK) {
            const int nj = n - j0 < JBLOCK ? n - j0 : JBLOCK;
            for (int j = 0; j < nj; j++) acc[j] = 0.0f;
            for (int kk = 0; kk < k; kk++) {
                const float av = ai[kk * a_cs];
                const float *bk = b + kk * b_rs + j0;
                for (int j = 0; j < nj; j++) acc[j] = fmaf(av, bk[j], acc[j]);
            }
            for (int j = 0; j < nj; j++) {
                float v = acc[j];
                if (bias) v = v + bias[j0 + j];
                ci[j0 + j] = accumulate ? ci[j0 + j] + v : v;
            }
        }
    }
}

void ngpt_f32_gemm_ref(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                       const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                       float *c, ptrdiff_t c_rs, bool accumulate)
{
    if (b_cs == 1 && b_rs != 1) {
        gemm_ikj(m, n, k, a, a_rs, a_cs, b, b_rs, bias, c, c_rs, accumulate);
        return;
    }
    for (int i = 0; i < m; i++) {
        const float *ai = a + i * a_rs;
        float *ci = c + i * c_rs;
        int j = 0;
        for (; j + 4 <= n; j += 4) {    /* 4 independent chains side by side */
            const float *b0 = b + j * b_cs, *b1 = b0 + b_cs, *b2 = b1 + b_cs, *b3 = b2 + b_cs;
            float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
            for (int kk = 0; kk < k; kk++) {
                const float av = ai[kk * a_cs];
                s0 = fmaf(av, b0[kk * b_rs], s0);
                s1 = fmaf(av, b1[kk * b_rs], s1);
                s2 = fmaf(av, b2[kk * b_rs], s2);
                s3 = fmaf(av, b3[kk * b_rs], s3);
            }
            float s[4] = {s0, s1, s2, s3};
            for (int q = 0; q < 4; q++) {
                float v = s[q];
                if (bias) v = v + bias[j + q];
                ci[j + q] = accumulate ? ci[j + q] + v : v;
            }
        }
        for (; j < n; j++) {
            const float *bj = b + j * b_cs;
            float acc = 0.0f;
            for (int kk = 0; kk < k; kk++) acc = fmaf(ai[kk * a_cs], bj[kk * b_rs], acc);
            if (bias) acc = acc + bias[j];
            ci[j] = accumulate ? ci[j] + acc : acc;
        }
    }
}
