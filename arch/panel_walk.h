/* panel_walk.h — gemm_q8's and gemm_q4's walks over the panels, shared by
 * the ISAs (arch/<isa>/q8.c and q4.c include it; everything here is
 * static): panel_walk, two rows at a time, and panel_rows_walk, a pass's
 * rows in blocks of up to 8 against each panel (AVX2's and NEON's 4-bit
 * products). The ISA supplies the blocks of rows against one panel, every
 * group, for its layout (q8.h, q4.h); a walk knows a panel only as one
 * block of the layout's bytes a group, so one walk serves both layouts. An
 * ISA that wants another walk (another order) writes it beside its blocks,
 * as AVX-512's q8.c and q4.c do. */
#ifndef NGPT_ARCH_PANEL_WALK_H
#define NGPT_ARCH_PANEL_WALK_H

#include "kernels.h"

_Static_assert(NGPT_Q4_NR == NGPT_Q8_NR, "the walk steps both layouts' panels by 16 outputs");

/* Rows (1 or 2) quantized rows x0, x1 (scales s0, s1) against one panel,
 * every group; row r's outputs at c + r*c_rs, the first nvalid of 16 stored. */
typedef void (*panel_block_fn)(int groups, const int8_t *x0, const float *s0, const int8_t *x1,
                               const float *s1, const void *panel, const float *bias, float *c,
                               ptrdiff_t c_rs, int nvalid);

/* Defines panel_2 and panel_1, the panel_block_fn of two and one rows, from
 * the ISA's block rows(R, groups, x0, s0, x1, s1, panel, bias, c, c_rs,
 * nvalid), R a constant and panel its layout's pointer. */
#define PANEL_BLOCK_FN(name, rows, R)                                                    \
    static void name(int groups, const int8_t *x0, const float *s0, const int8_t *x1,     \
                     const float *s1, const void *panel, const float *bias, float *c,     \
                     ptrdiff_t c_rs, int nvalid)                                         \
    {                                                                                    \
        rows(R, groups, x0, s0, x1, s1, panel, bias, c, c_rs, nvalid);                   \
    }
#define PANEL_BLOCKS(rows) PANEL_BLOCK_FN(panel_2, rows, 2) PANEL_BLOCK_FN(panel_1, rows, 1)

/* C (m, n) = Xq (m, k) Wq^T [+ bias] (kernels.inc's gemm_q8 and gemm_q4)
 * on panels of blocks of block_bytes (NGPT_Q8_BLOCK, NGPT_Q4_BLOCK). */
static inline __attribute__((always_inline)) void
panel_walk(panel_block_fn two, panel_block_fn one, size_t block_bytes, int m, int n, int k,
           const int8_t *xq, ptrdiff_t xq_rs, const void *wq, const float *bias, float *c,
           ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    for (int j0 = 0; j0 < n; j0 += NGPT_Q8_NR) {
        const void *panel =
            (const uint8_t *)wq + (size_t)(j0 / NGPT_Q8_NR) * (size_t)groups * block_bytes;
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

/* ---- passes of several rows: blocks of rows against each panel */

/* R (2..8) quantized rows x (xs bytes apart) against one panel, every
 * group; row r's outputs at c + r*c_rs, the first nvalid of 16 stored. */
typedef void (*rows_block_fn)(int groups, int k, const int8_t *x, ptrdiff_t xs, const void *panel,
                              const float *bias, float *c, ptrdiff_t c_rs, int nvalid);

/* Defines rows_blocks[R], the rows_block_fn of R = 2..8 rows, from the
 * ISA's block rows(R, groups, k, x, xs, panel, bias, c, c_rs, nvalid). */
#define ROWS_BLOCK_FN(rows, R)                                                           \
    static void rows_block_##R(int groups, int k, const int8_t *x, ptrdiff_t xs,          \
                               const void *panel, const float *bias, float *c,            \
                               ptrdiff_t c_rs, int nvalid)                                \
    {                                                                                    \
        rows(R, groups, k, x, xs, panel, bias, c, c_rs, nvalid);                         \
    }
#define ROWS_BLOCKS(rows)                                                                \
    ROWS_BLOCK_FN(rows, 2) ROWS_BLOCK_FN(rows, 3) ROWS_BLOCK_FN(rows, 4)                 \
    ROWS_BLOCK_FN(rows, 5) ROWS_BLOCK_FN(rows, 6) ROWS_BLOCK_FN(rows, 7)                 \
    ROWS_BLOCK_FN(rows, 8)                                                               \
    static const rows_block_fn rows_blocks[9] = {NULL,           NULL,           rows_block_2,   \
                                                 rows_block_3,   rows_block_4,   rows_block_5,   \
                                                 rows_block_6,   rows_block_7,   rows_block_8};

/* C (m, n) = Xq (m, k) Wq^T [+ bias] for m > 1: panel after panel (each
 * stays in the caches for all its blocks), the rows in blocks of up to 8
 * (rows_blocks), a lone last row by one (a decode's block). */
static inline __attribute__((always_inline)) void
panel_rows_walk(const rows_block_fn *blocks, panel_block_fn one, size_t block_bytes, int m, int n,
                int k, const int8_t *xq, ptrdiff_t xq_rs, const void *wq, const float *bias,
                float *c, ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    for (int j0 = 0; j0 < n; j0 += NGPT_Q8_NR) {
        const void *panel =
            (const uint8_t *)wq + (size_t)(j0 / NGPT_Q8_NR) * (size_t)groups * block_bytes;
        const float *b = bias ? bias + j0 : NULL;
        for (int i = 0; i < m; i += 8) {
            const int R = m - i < 8 ? m - i : 8;
            const int8_t *x = xq + i * xq_rs;
            if (R == 1) one(groups, x, ngpt_q8_row_scales(x, k), NULL, NULL, panel, b,
                            c + i * c_rs + j0, c_rs, n - j0);
            else blocks[R](groups, k, x, xq_rs, panel, b, c + i * c_rs + j0, c_rs, n - j0);
        }
    }
}

#endif
