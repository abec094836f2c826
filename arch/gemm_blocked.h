/* gemm_blocked.h — the cache-blocked gemm driver that the ISA kernels share
 * (arch/<isa>/gemm.c includes it; everything here is static): blocking over
 * n, k and m, each tile's chains in and out. The tile's interface, the
 * packing of A and B into the caller's workspace and the edge tiles:
 * gemm_tile.h; the m <= 8 path over packed weights: gemv.h. The ISA
 * supplies only the register tile and the gemv blocks.
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

#include "gemm_tile.h"

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

#endif
