/* gemm_tile.h — the register tile of the blocked gemm (gemm_blocked.h,
 * which includes this file; everything here is static): its interface, what
 * an ISA's gemm.c supplies, and its size; the packing of A's and B's blocks
 * into the panels it reads (gemm.h's layout), and the edge tiles it runs on
 * copies past the edge of m or n. */
#ifndef NGPT_GEMM_TILE_H
#define NGPT_GEMM_TILE_H

#include <string.h>

#include "kernels.h"

/* Where a tile's chains come from and go. Row r, column jj of each is at
 * ptr[r*rs + jj] (jj < the tile's columns, r < MR). */
typedef struct ngpt_gemm_tile_io {
    const float *cin;           /* chains so far, or NULL: start at +0.0f */
    ptrdiff_t cin_rs;
    float *cout;                /* the tile's result (may be cin) */
    ptrdiff_t cout_rs;
    const float *bias;          /* a float per column added after the chain, or NULL */
    const float *cadd;          /* the old C, added last (accumulate), or NULL */
    ptrdiff_t cadd_rs;
    int panels;                 /* B panels (of NR columns) the tile covers: 1, or 2 for a
                                   tile two panels wide (NGPT_TILE_NR = 32) */
    ptrdiff_t b_next;           /* with 2 panels: floats from the first to the second */
} ngpt_gemm_tile_io;

/* A full tile over kc steps, MR rows x NR columns (or, for a tile two
 * panels wide, 2*NR when io->panels == 2): A(r, kk) = a[r*a_rs + kk*a_cs],
 * B(kk, jj) = bp[kk*NR + jj] for jj < NR, bp[b_next + kk*NR + jj - NR]
 * past it. Per output: acc = cin or +0.0f; kc fmas in increasing kk; then
 * acc = acc + bias[jj]; then cout = cadd + acc. */
typedef void (*ngpt_gemm_tile_fn)(int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                                  const float *bp, const ngpt_gemm_tile_io *io);

/* The ISA's register tile, which its gemm.c may define before including
 * gemm_blocked.h: NGPT_TILE_MR rows (NGPT_GEMM_MR = 6 by default, AVX2's and
 * NEON's) x NGPT_TILE_NR columns, one packed panel of 16 (NR, the default)
 * or two side by side (32). The packed layout is gemm.h's either way. MC
 * is a multiple of every MR in use. */
#ifndef NGPT_TILE_MR
#define NGPT_TILE_MR NGPT_GEMM_MR
#endif
#ifndef NGPT_TILE_NR
#define NGPT_TILE_NR NGPT_GEMM_NR
#endif

enum {
    MR = NGPT_TILE_MR, TN = NGPT_TILE_NR, NR = NGPT_GEMM_NR, KC = NGPT_GEMM_KC, MC = NGPT_GEMM_MC,
    NC = NGPT_GEMM_NC, MS = NGPT_GEMM_MS
};

static inline int min_int(int x, int y) { return x < y ? x : y; }
static inline int ceil_div(int x, int y) { return (x + y - 1) / y; }

/* The source rows of a block are prefetched this many rows ahead of the
 * copy (hints: no fault, no bit changes). The prefetch sits in the copy loop
 * itself: gcc deletes a loop that only prefetches. */
enum { PACK_AHEAD = 16 };

/* Packs src(l, kk) = src[l*ls + kk*ks], lanes l < lanes, kk < kc, into
 * panels of w lanes: dst[l/w][kk][l%w], zero padded to whole panels. B's
 * block: lanes are columns (w = NR); A's block: lanes are rows (w = MR). */
static inline __attribute__((always_inline)) void
pack_panels(float *dst, const float *src, ptrdiff_t ls, ptrdiff_t ks, int lanes, int kc,
            const int w)
{
    const int lfull = ls == 1 ? lanes - lanes % w : 0;
    const size_t pstride = (size_t)kc * w;
    /* lanes contiguous (B's rows: dY W, X of dW; A^T: dY of dW): each source
     * row once, in order, split into the panels' w floats */
    for (int kk = 0; kk < kc && lfull > 0; kk++) {
        const float *sk = src + kk * ks;
        const ptrdiff_t ahead = kk + PACK_AHEAD < kc ? PACK_AHEAD * ks : 0;
        float *d = dst + (size_t)kk * w;
        for (int l0 = 0; l0 < lfull; l0 += w, d += pstride) {
            __builtin_prefetch(sk + l0 + ahead);
            memcpy(d, sk + l0, (size_t)w * sizeof(float));
        }
    }
    /* the rest (a W layout, A's rows, a tail): lane by lane, each read along
     * k (a Linear's W row is contiguous along k) */
    for (int l0 = lfull; l0 < lanes; l0 += w) {
        const int nl = min_int(w, lanes - l0);
        float *d = dst + (size_t)(l0 / w) * pstride;
        const float *sl = src + l0 * ls;
        if (nl < w)
            for (int kk = 0; kk < kc; kk++) memset(d + kk * w + nl, 0, (size_t)(w - nl) * sizeof(float));
        for (int l = 0; l < nl; l++)
            for (int kk = 0; kk < kc; kk++) d[kk * w + l] = sl[l * ls + kk * ks];
    }
}

/* B(kk, j), kk < kc, j < nc -> dst[j/NR][kk][j%NR]. */
static void pack_b(float *dst, const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, int kc, int nc)
{
    pack_panels(dst, b, b_cs, b_rs, nc, kc, NR);
}

/* A(i, kk), i < mc, kk < kc -> dst[i/MR][kk][i%MR]. */
static void pack_a(float *dst, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, int mc, int kc)
{
    pack_panels(dst, a, a_rs, a_cs, mc, kc, MR);
}

/* Copies an mr x nr region (row stride rs) into rows of TN floats, zero elsewhere. */
static void tile_in(float *t, int rows, const float *src, ptrdiff_t rs, int mr, int nr)
{
    memset(t, 0, (size_t)rows * TN * sizeof(float));
    for (int r = 0; r < mr; r++) memcpy(t + r * TN, src + r * rs, (size_t)nr * sizeof(float));
}

/* A tile past the edge of m or n: the full tile runs on copies (padded rows
 * and columns compute values that are never stored). A has MR rows (a
 * block's last rows read in place come packed with zero rows: run_block). */
static void edge_tile(ngpt_gemm_tile_fn tile, int kc, const float *a, ptrdiff_t a_rs,
                      ptrdiff_t a_cs, const float *bp, const ngpt_gemm_tile_io *io, int mr,
                      int nr)
{
    _Alignas(64) float tin[MR * TN], tadd[MR * TN], tout[MR * TN], tbias[TN];
    ngpt_gemm_tile_io t = {NULL, TN, tout, TN, NULL, NULL, TN, io->panels, io->b_next};
    if (io->cin) tile_in(tin, MR, io->cin, io->cin_rs, mr, nr), t.cin = tin;
    if (io->cadd) tile_in(tadd, MR, io->cadd, io->cadd_rs, mr, nr), t.cadd = tadd;
    if (io->bias) tile_in(tbias, 1, io->bias, 0, 1, nr), t.bias = tbias;
    tile(kc, a, a_rs, a_cs, bp, &t);
    for (int r = 0; r < mr; r++)
        memcpy(io->cout + r * io->cout_rs, tout + r * TN, (size_t)nr * sizeof(float));
}

#endif
