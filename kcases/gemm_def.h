/* gemm_def.h — the matrix products' definition written out, which the
 * reference and every ISA must match bit for bit: one fmaf chain per output
 * over k in increasing order from +0.0f, then + bias, then the old C + that.
 * Shared by the gemm cases (kcases/gemm.c) and tests/test_gemm.c. */
#ifndef NGPT_GEMM_DEF_H
#define NGPT_GEMM_DEF_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

static inline void gemm_def(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                            const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                            float *c, ptrdiff_t c_rs, bool acc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int kk = 0; kk < k; kk++) s = fmaf(a[i * a_rs + kk * a_cs], b[kk * b_rs + j * b_cs], s);
            if (bias) s = s + bias[j];
            c[i * c_rs + j] = acc ? c[i * c_rs + j] + s : s;
        }
}

/* The packed layout (src/gemm.h) by its definition: W (n, k), row stride w_rs. */
static inline void pack_w_def(float *wp, const float *w, int n, int k, ptrdiff_t w_rs)
{
    const int np = (n + 15) / 16;
    for (int j = 0; j < np * 16; j++)
        for (int kk = 0; kk < k; kk++)
            wp[(size_t)(j / 16) * (size_t)k * 16 + (size_t)kk * 16 + j % 16] = j < n ? w[j * w_rs + kk] : 0.0f;
}

#endif
