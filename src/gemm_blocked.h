/* gemm_blocked.h — the cache-blocked gemm driver that the ISA kernels share
 * (arch/<isa>/gemm.c): blocking over n, k and m, packing of A and B into the
 * caller's workspace, edge tiles. The ISA supplies only the register tile.
 *
 * Bits: the tile continues each output's chain from the float it left in
 * the previous k block (C itself, or the workspace when accumulating), so
 * every output is the reference's single chain over k in increasing order;
 * bias and the old C are added by the tile of the last k block only. */
#ifndef NGPT_GEMM_BLOCKED_H
#define NGPT_GEMM_BLOCKED_H

#include "gemm.h"

/* Where a tile's chains come from and go. Row r, column jj of each is at
 * ptr[r*rs + jj] (jj < NR, r < MR). */
typedef struct ngpt_gemm_tile_io {
    const float *cin;           /* chains so far, or NULL: start at +0.0f */
    ptrdiff_t cin_rs;
    float *cout;                /* the tile's result (may be cin) */
    ptrdiff_t cout_rs;
    const float *bias;          /* NR floats added after the chain, or NULL */
    const float *cadd;          /* the old C, added last (accumulate), or NULL */
    ptrdiff_t cadd_rs;
} ngpt_gemm_tile_io;

/* A full MR x NR tile over kc steps: A(r, kk) = a[r*a_rs + kk*a_cs],
 * B(kk, jj) = bp[kk*NR + jj]. Per output: acc = cin or +0.0f; kc fmas in
 * increasing kk; then acc = acc + bias[jj]; then cout = cadd + acc. */
typedef void (*ngpt_gemm_tile_fn)(int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                                  const float *bp, const ngpt_gemm_tile_io *io);

/* gemm (gemm.h) through `tile`. B is b (strided, packed into work per block)
 * or, when wp is set, already packed (gemm.h's layout; b ignored). work may
 * be NULL only with wp set, a_cs == 1 and no accumulate. */
void ngpt_gemm_blocked(ngpt_gemm_tile_fn tile, int m, int n, int k, const float *a,
                       ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs,
                       ptrdiff_t b_cs, const float *wp, const float *bias, float *c,
                       ptrdiff_t c_rs, bool accumulate, float *work);

/* ---- m <= 8 rows on packed weights (decode steps, beams): blocks of R rows
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

/* gemm_packed (gemm.h) through an ISA's pieces: m <= 8 streams the panels
 * in groups of 4 from L3/memory once, running every group of up to 4 rows
 * over a group while it is in L1/L2; larger m goes through ngpt_gemm_blocked with
 * A read in place. */
void ngpt_gemm_packed_run(ngpt_gemm_tile_fn tile, const ngpt_gemv_blocks *gemv, int m, int n,
                          int k, const float *a, ptrdiff_t a_rs, const float *wp,
                          const float *bias, float *c, ptrdiff_t c_rs);

#endif
