/* gemm_blocked.h — the cache-blocked gemm driver that the ISA kernels share
 * (arch/<isa>/gemm.c includes it; everything here is static): blocking over
 * n, k and m, packing of A and B into the caller's workspace, edge tiles,
 * and the m <= 8 path over packed weights. The ISA supplies only the
 * register tile and the gemv blocks (arch/gemv.h).
 *
 * Bits: the tile continues each output's chain from the float it left in
 * the previous k block (C itself, or the workspace when accumulating), so
 * every output is the reference's single chain over k in increasing order;
 * bias and the old C are added by the tile of the last k block only.
 *
 * Loop nest (Goto/BLIS), block sizes in src/gemm.h:
 *   jc: NC columns        B block (KC x NC) packed once per (jc, row super-block, k block)
 *    is: MS rows          only when accumulating: the partial chains live in work
 *     kb: KC of k         chains continue across k blocks, in increasing k
 *      ic: MC rows        A block (MC x KC) packed, or read in place (rows of A contiguous)
 *       jr: NR, ir: MR    the ISA's register tile
 *
 * Without accumulate the chains wait in C itself between k blocks (C is an
 * output only), so the whole of m is one super-block.
 *
 * A is read in place when its rows are contiguous (x W^T, dY W): the tile
 * broadcasts from MR row pointers, and packing it (a transpose) cost more
 * than it saved. B is always packed (or given packed), so a micro-panel is
 * KC consecutive lines whatever B's strides, free of cache-set conflicts. */
#ifndef NGPT_GEMM_BLOCKED_H
#define NGPT_GEMM_BLOCKED_H

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

/* The ISA's register tile, which its gemm.c may define before including
 * this file: NGPT_TILE_MR rows (NGPT_GEMM_MR = 6 by default, AVX2's and
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

/* The operands of one call. */
typedef struct gemm_args {
    ngpt_gemm_tile_fn tile;
    int m, n, k;
    const float *a, *b, *wp, *bias;
    ptrdiff_t a_rs, a_cs, b_rs, b_cs, c_rs;
    float *c, *apack, *bpack, *part;
    bool accumulate, partials, a_in_place;
} gemm_args;

/* Where the chains of the tile at (i, j) come from and go in k block
 * (first, last) of the row super-block starting at `is`. */
static ngpt_gemm_tile_io tile_io(const gemm_args *g, int i, int j, int is, int jc, bool first,
                                 bool last)
{
    ngpt_gemm_tile_io io;
    float *ct = g->c + i * g->c_rs + j;
    if (g->partials) {      /* chains in work until the last block adds them to C */
        float *pt = g->part + (size_t)(i - is) * NC + (j - jc);
        io.cin = first ? NULL : pt, io.cin_rs = NC;
        io.cout = last ? ct : pt, io.cout_rs = last ? g->c_rs : NC;
        io.cadd = last ? ct : NULL;
    } else {                /* chains in C (with accumulate: a single k block) */
        io.cin = first ? NULL : ct, io.cin_rs = g->c_rs;
        io.cout = ct, io.cout_rs = g->c_rs;
        io.cadd = g->accumulate ? ct : NULL;
    }
    io.cadd_rs = g->c_rs;
    io.bias = last && g->bias ? g->bias + j : NULL;
    io.panels = 1, io.b_next = 0;
    return io;
}

/* All tiles of one (A block, B block) pair: for each B micro-panel (one or
 * two panels: in L1), every A micro-panel of the block (in L2). */
static void run_block(const gemm_args *g, const float *ablock, ptrdiff_t ars, ptrdiff_t acs,
                      ptrdiff_t atile, const float *bblock, size_t panel_stride, int ic, int mc,
                      int jc, int nc, int is, int kc, bool first, bool last)
{
    /* A read in place with fewer than MR rows left: those rows packed with
     * zero rows once for the block (not once per B panel: a prefill of 128
     * rows has 2 left in every product) */
    _Alignas(64) float apad[KC * MR];
    const int mfull = mc - mc % MR;
    if (g->a_in_place && mfull < mc) pack_a(apad, ablock + (mfull / MR) * atile, ars, acs, mc - mfull, kc);
    for (int jr = 0; jr < nc; jr += TN) {
        const float *bp = bblock + (size_t)(jr / NR) * panel_stride;
        const int nr = min_int(TN, nc - jr);
        for (int ir = 0; ir < mc; ir += MR) {
            const int mr = min_int(MR, mc - ir);
            const float *at = ablock + (ir / MR) * atile;
            ngpt_gemm_tile_io io = tile_io(g, ic + ir, jc + jr, is, jc, first, last);
            if (nr > NR) io.panels = 2, io.b_next = (ptrdiff_t)panel_stride;
            if (mr == MR && nr % NR == 0)
                g->tile(kc, at, ars, acs, bp, &io);
            else if (mr < MR && g->a_in_place)
                edge_tile(g->tile, kc, apad, 1, MR, bp, &io, mr, nr);
            else
                edge_tile(g->tile, kc, at, ars, acs, bp, &io, mr, nr);
        }
    }
}

/* Rows is..is+ms of columns jc..jc+nc, all k blocks. */
static void run_super_block(const gemm_args *g, int jc, int nc, int is, int ms)
{
    const int kblocks = g->k > 0 ? ceil_div(g->k, KC) : 1;
    for (int kb = 0; kb < kblocks; kb++) {
        const int pc = kb * KC, kc = min_int(KC, g->k - pc);
        const bool first = kb == 0, last = kb == kblocks - 1;
        const float *bblock;
        size_t panel_stride;
        if (g->wp) {
            bblock = g->wp + (size_t)(jc / NR) * (size_t)g->k * NR + (size_t)pc * NR;
            panel_stride = (size_t)g->k * NR;
        } else {
            pack_b(g->bpack, g->b + pc * g->b_rs + jc * g->b_cs, g->b_rs, g->b_cs, kc, nc);
            bblock = g->bpack;
            panel_stride = (size_t)kc * NR;
        }
        for (int ic = is; ic < is + ms; ic += MC) {
            const int mc = min_int(MC, is + ms - ic);
            const float *ablock;
            ptrdiff_t ars, acs, atile;   /* strides in the block, between row tiles */
            if (g->a_in_place) {
                ablock = g->a + ic * g->a_rs + pc, ars = g->a_rs, acs = 1, atile = MR * g->a_rs;
            } else {
                pack_a(g->apack, g->a + ic * g->a_rs + pc * g->a_cs, g->a_rs, g->a_cs, mc, kc);
                ablock = g->apack, ars = 1, acs = MR, atile = (ptrdiff_t)kc * MR;
            }
            run_block(g, ablock, ars, acs, atile, bblock, panel_stride, ic, mc, jc, nc, is, kc,
                      first, last);
        }
    }
}

/* gemm (gemm.h) through `tile`. B is b (strided, packed into work per block)
 * or, when wp is set, already packed (gemm.h's layout; b ignored). work may
 * be NULL only with wp set, a_cs == 1 and no accumulate. */
static void ngpt_gemm_blocked(ngpt_gemm_tile_fn tile, int m, int n, int k, const float *a,
                       ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs,
                       ptrdiff_t b_cs, const float *wp, const float *bias, float *c,
                       ptrdiff_t c_rs, bool accumulate, float *work)
{
    if (m <= 0 || n <= 0) return;
    const int kblocks = k > 0 ? ceil_div(k, KC) : 1;
    gemm_args g = {
        .tile = tile, .m = m, .n = n, .k = k, .a = a, .b = b, .wp = wp, .bias = bias,
        .a_rs = a_rs, .a_cs = a_cs, .b_rs = b_rs, .b_cs = b_cs, .c_rs = c_rs, .c = c,
        .accumulate = accumulate,
        .partials = accumulate && kblocks > 1,  /* C holds the addend meanwhile */
        .a_in_place = a_cs == 1,
    };
    if (work) {     /* packed A block | packed B block | partial chains */
        g.apack = work, g.bpack = work + MC * KC, g.part = work + MC * KC + KC * NC;
    }
    const int ms_step = g.partials ? MS : m;
    for (int jc = 0; jc < n; jc += NC)
        for (int is = 0; is < m; is += ms_step)
            run_super_block(&g, jc, min_int(NC, n - jc), is, min_int(ms_step, m - is));
}

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
