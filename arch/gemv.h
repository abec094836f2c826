/* gemv.h — the m <= 8 path of gemm_packed that the ISAs share
 * (arch/<isa>/gemm.c): its blocks and the driver that runs them
 * (ngpt_gemm_packed_run; larger m: gemm_blocked.h). R rows x P panels per
 * block, 1x4, 2x2, 1x1, 2x1, 3x1, 4x1 (8 chains cover 2 fma pipes x 4 cycles
 * of latency: one row needs four panels at once, four rows one); each panel
 * streams from its first line to its last while a prefetch runs PF lines
 * ahead in it and, past its end, on into the same panel of the next group
 * of P (the next panels). Only the block that streams a group from memory
 * prefetches (avail > 0).
 *
 * The ISA defines, before including this file, its vector type and pieces
 * (each a no-op unless R > r and P > p, for the block's constants R and P):
 *   GV_VEC              the vector type (AVX2 __m256, AVX-512 __m512, NEON float32x4_t)
 *   GV_ACC(r, p)        declares the zeroed accumulators s<r><p><h> of row r, panel p
 *   GV_LOAD(p)          declares w<p><h> and loads row kk of panel p into them
 *   GV_PREFETCH(p, off) prefetches w + p*ps + off
 *   GV_BROADCAST(x)     a vector of *x
 *   GV_FMA(r, p)        s<r><p><h> = fma(av, w<p><h>, s<r><p><h>)
 *   GV_STORE(r, p)      row r's 16 columns of panel p below n, + bias, into c */
#ifndef NGPT_ARCH_GEMV_H
#define NGPT_ARCH_GEMV_H

#include "gemm_blocked.h"

/* m <= 8 rows on packed weights (decode steps, beams): blocks of R rows
 * x P panels whose 2*R*P..4*R*P chains stay in registers, each panel
 * streamed once from first line to last. A block: rows a + r*a_rs (r < R),
 * P panels from w (k*NR floats apart), outputs c + r*c_rs + p*NR + jj for
 * p*NR + jj < n, + bias[p*NR + jj] (bias may be NULL). avail = floats from w
 * to the end of the packed weight: prefetches stay below it; 0 (the panels
 * are in cache already): no prefetch. */
typedef void (*ngpt_gemv_block_fn)(int k, const float *a, ptrdiff_t a_rs, const float *w,
                                   size_t avail, const float *bias, float *c, ptrdiff_t c_rs,
                                   int n);

/* An ISA's blocks for R = 1..4 rows: R x panels[R-1], and R x 1 for the
 * panels left over. */
typedef struct ngpt_gemv_blocks {
    int panels[4];
    ngpt_gemv_block_fn wide[4], one[4];
} ngpt_gemv_blocks;

enum { PF = 32 };

#define GV_ROW(r)                                                                        \
    if (R > r) {                                                                         \
        av = GV_BROADCAST(a + (r) * a_rs + kk);                                          \
        GV_FMA(r, 0) GV_FMA(r, 1) GV_FMA(r, 2) GV_FMA(r, 3)                              \
    }
/* One k step of every chain of the block, prefetching `ahead` floats past
 * each panel's start when pf. */
#define GV_STEP(pf, ahead)                                                               \
    {                                                                                    \
        GV_LOAD(0) GV_LOAD(1) GV_LOAD(2) GV_LOAD(3)                                      \
        if (pf) {                                                                        \
            GV_PREFETCH(0, ahead) GV_PREFETCH(1, ahead)                                  \
            GV_PREFETCH(2, ahead) GV_PREFETCH(3, ahead)                                  \
        }                                                                                \
        GV_VEC av;                                                                       \
        GV_ROW(0) GV_ROW(1) GV_ROW(2) GV_ROW(3)                                          \
    }

/* R rows (a, a_rs) x P panels (w, k*16 floats apart) into c (row stride
 * c_rs); n and bias count from the block's first column. */
static inline __attribute__((always_inline)) void
gv_block(const int R, const int P, int k, const float *a, ptrdiff_t a_rs, const float *w,
         size_t avail, const float *bias, float *c, ptrdiff_t c_rs, int n)
{
    const size_t ps = (size_t)k * NGPT_GEMM_NR;
    GV_ACC(0, 0) GV_ACC(0, 1) GV_ACC(0, 2) GV_ACC(0, 3)     /* only R x P of them live */
    GV_ACC(1, 0) GV_ACC(1, 1) GV_ACC(1, 2) GV_ACC(1, 3)
    GV_ACC(2, 0) GV_ACC(2, 1) GV_ACC(2, 2) GV_ACC(2, 3)
    GV_ACC(3, 0) GV_ACC(3, 1) GV_ACC(3, 2) GV_ACC(3, 3)
    int kk = 0;
    if (avail && k >= PF) {     /* streaming from L3/memory: prefetch */
        for (; kk < k - PF; kk++) GV_STEP(1, (size_t)(kk + PF) * NGPT_GEMM_NR)      /* in each panel */
        if (avail >= 2 * (size_t)P * ps)                                             /* the next panels */
            for (; kk < k; kk++) GV_STEP(1, (size_t)P * ps + (size_t)(kk + PF - k) * NGPT_GEMM_NR)
    }
    for (; kk < k; kk++) GV_STEP(0, 0)
    GV_STORE(0, 0) GV_STORE(0, 1) GV_STORE(0, 2) GV_STORE(0, 3)
    GV_STORE(1, 0) GV_STORE(1, 1) GV_STORE(1, 2) GV_STORE(1, 3)
    GV_STORE(2, 0) GV_STORE(2, 1) GV_STORE(2, 2) GV_STORE(2, 3)
    GV_STORE(3, 0) GV_STORE(3, 1) GV_STORE(3, 2) GV_STORE(3, 3)
}

#define GV_FN(R, P)                                                                      \
    static void gv_##R##x##P(int k, const float *a, ptrdiff_t a_rs, const float *w,      \
                             size_t avail, const float *bias, float *c, ptrdiff_t c_rs, int n) \
    {                                                                                    \
        gv_block(R, P, k, a, a_rs, w, avail, bias, c, c_rs, n);                          \
    }

/* The blocks for ngpt_gemm_packed_run. An ISA with too few registers for
 * them defines GV_OWN_BLOCKS before including this file, then its own
 * blocks (GV_FN) and gemv_blocks. */
#ifndef GV_OWN_BLOCKS
GV_FN(1, 4) GV_FN(2, 2) GV_FN(1, 1) GV_FN(2, 1) GV_FN(3, 1) GV_FN(4, 1)
static const ngpt_gemv_blocks gemv_blocks = {
    {4, 2, 1, 1}, {gv_1x4, gv_2x2, gv_3x1, gv_4x1}, {gv_1x1, gv_2x1, gv_3x1, gv_4x1}};
#endif

/* The rows of m <= 8, 4 at a time, over one group of np <= 4 panels. */
static void gemv_group(const ngpt_gemv_blocks *g, int m, int np, int k, const float *a,
                       ptrdiff_t a_rs, const float *w, size_t avail, const float *bias, float *c,
                       ptrdiff_t c_rs, int n)
{
    const size_t ps = (size_t)k * NR;
    for (int i = 0; i < m;) {
        const int rows = m - i < 4 ? m - i : 4, wide = g->panels[rows - 1];
        const float *ai = a + i * a_rs;
        float *ci = c + i * c_rs;
        int p = 0;
        for (; p + wide <= np; p += wide)   /* the first rows stream (and prefetch), the rest reread */
            g->wide[rows - 1](k, ai, a_rs, w + p * ps, i ? 0 : avail - p * ps,
                              bias ? bias + p * NR : NULL, ci + p * NR, c_rs, n - p * NR);
        for (; p < np; p++)
            g->one[rows - 1](k, ai, a_rs, w + p * ps, i ? 0 : avail - p * ps,
                             bias ? bias + p * NR : NULL, ci + p * NR, c_rs, n - p * NR);
        i += rows;
    }
}

/* gemm_packed (gemm.h) through an ISA's pieces: m <= 8 streams the panels
 * in groups of 4 from L3/memory once, running every group of up to 4 rows
 * over a group while it is in L1/L2; larger m goes through ngpt_gemm_blocked with
 * A read in place. */

static void ngpt_gemm_packed_run(ngpt_gemm_tile_fn tile, const ngpt_gemv_blocks *gemv, int m,
                                 int n, int k, const float *a, ptrdiff_t a_rs, const float *wp,
                          const float *bias, float *c, ptrdiff_t c_rs)
{
    if (m <= 0 || n <= 0) return;
    if (m > 8) {
        ngpt_gemm_blocked(tile, m, n, k, a, a_rs, 1, NULL, 0, 0, wp, bias, c, c_rs, false, NULL);
        return;
    }
    const int npanels = (n + NR - 1) / NR;
    const size_t ps = (size_t)k * NR, total = (size_t)npanels * ps;
    for (int p0 = 0; p0 < npanels; p0 += 4) {
        const int np = npanels - p0 < 4 ? npanels - p0 : 4, j0 = p0 * NR;
        gemv_group(gemv, m, np, k, a, a_rs, wp + p0 * ps, total - p0 * ps,
                   bias ? bias + j0 : NULL, c + j0, c_rs, n - j0);
    }
}

#endif
