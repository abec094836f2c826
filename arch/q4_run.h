/* q4_run.h — gemm_q4's walk over the panels, two rows at a time, shared by
 * the ISAs (arch/<isa>/q4.c includes it; everything here is static): q8's
 * walk (q8_run.h) over 4-bit panels. The ISA supplies the block of one or
 * two rows against one panel. */
#ifndef NGPT_ARCH_Q4_RUN_H
#define NGPT_ARCH_Q4_RUN_H

#include "kernels.h"

/* Rows i1 (1 or 2) quantized rows x0, x1 (scales s0, s1) against one panel,
 * every group; row r's outputs at c + r*c_rs, the first nvalid of 16 stored. */
typedef void (*q4_panel_fn)(int groups, const int8_t *x0, const float *s0, const int8_t *x1,
                            const float *s1, const uint8_t *panel, const float *bias, float *c,
                            ptrdiff_t c_rs, int nvalid);

/* Defines q4_panel_2 and q4_panel_1 from the ISA's block rows(R, groups,
 * x0, s0, x1, s1, panel, bias, c, c_rs, nvalid), R a constant. */
#define Q4_PANEL_FN(name, rows, R)                                                       \
    static void name(int groups, const int8_t *x0, const float *s0, const int8_t *x1,     \
                     const float *s1, const uint8_t *panel, const float *bias, float *c,  \
                     ptrdiff_t c_rs, int nvalid)                                         \
    {                                                                                    \
        rows(R, groups, x0, s0, x1, s1, panel, bias, c, c_rs, nvalid);                   \
    }
#define Q4_PANEL_FNS(rows) Q4_PANEL_FN(q4_panel_2, rows, 2) Q4_PANEL_FN(q4_panel_1, rows, 1)

static inline __attribute__((always_inline)) void
q4_gemm_run(q4_panel_fn two, q4_panel_fn one, int m, int n, int k, const int8_t *xq,
            ptrdiff_t xq_rs, const uint8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    for (int j0 = 0; j0 < n; j0 += NGPT_Q4_NR) {
        const uint8_t *panel = ngpt_q4_panel(wq, k, j0);
        const float *b = bias ? bias + j0 : NULL;
        int i = 0;
        for (; i + 2 <= m; i += 2) {
            const int8_t *x0 = xq + i * xq_rs, *x1 = x0 + xq_rs;
            two(groups, x0, ngpt_q8_row_scales(x0, k), x1, ngpt_q8_row_scales(x1, k), panel, b,
                c + i * c_rs + j0, c_rs, n - j0);
        }
        if (i < m) {
            const int8_t *x0 = xq + i * xq_rs;
            one(groups, x0, ngpt_q8_row_scales(x0, k), NULL, NULL, panel, b, c + i * c_rs + j0,
                c_rs, n - j0);
        }
    }
}

#endif
