/* gemv.h — the m <= 8 blocks of gemm_packed that the ISAs share
 * (arch/<isa>/gemm.c; driver: arch/gemm_blocked.h): R rows x P panels per
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
    GV_STORE(1, 0) GV_STORE(1, 1) GV_STORE(2, 0) GV_STORE(3, 0)
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

#endif
