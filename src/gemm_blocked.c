/* gemm_blocked.c — the cache-blocked gemm driver (gemm_blocked.h), shared by
 * the ISA kernels. Loop nest (Goto/BLIS), block sizes in gemm.h:
 *
 *   jc: NC columns        B block (KC x NC) packed once per (jc, row super-block, k block)
 *    is: MS rows          only when accumulating: the partial chains live in work
 *     kb: KC of k         chains continue across k blocks, in increasing k
 *      ic: MC rows        A block (MC x KC) packed, or read in place (rows of A contiguous)
 *       jr: NR, ir: MR    the ISA's register tile
 *
 * Without accumulate the chains wait in C itself between k blocks (C is an
 * output only), so the whole of m is one super-block. */
#include <string.h>

#include "gemm_blocked.h"

enum {
    MR = NGPT_GEMM_MR, NR = NGPT_GEMM_NR, KC = NGPT_GEMM_KC, MC = NGPT_GEMM_MC,
    NC = NGPT_GEMM_NC, MS = NGPT_GEMM_MS
};

static inline int min_int(int x, int y) { return x < y ? x : y; }

/* B(kk, j) for kk < kc, j < nc -> dst[j/NR][kk][j%NR], zero padded to NR. */
static void pack_b(float *dst, const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, int kc, int nc)
{
    for (int j0 = 0; j0 < nc; j0 += NR, dst += (size_t)kc * NR) {
        const int nj = min_int(NR, nc - j0);
        const float *bj = b + j0 * b_cs;
        if (b_cs == 1 && nj == NR) {            /* rows of B contiguous: line copies */
            for (int kk = 0; kk < kc; kk++) memcpy(dst + kk * NR, bj + kk * b_rs, NR * sizeof(float));
            continue;
        }
        if (nj < NR)
            for (int kk = 0; kk < kc; kk++) memset(dst + kk * NR + nj, 0, (size_t)(NR - nj) * sizeof(float));
        for (int jj = 0; jj < nj; jj++)         /* column by column: a W row is contiguous */
            for (int kk = 0; kk < kc; kk++) dst[kk * NR + jj] = bj[jj * b_cs + kk * b_rs];
    }
}

/* A(i, kk) for i < mc, kk < kc -> dst[i/MR][kk][i%MR], zero padded to MR. */
static void pack_a(float *dst, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, int mc, int kc)
{
    for (int i0 = 0; i0 < mc; i0 += MR, dst += (size_t)kc * MR) {
        const int mi = min_int(MR, mc - i0);
        const float *ai = a + i0 * a_rs;
        if (a_rs == 1 && mi == MR) {            /* the weight gradient's dy^T: MR floats per kk */
            for (int kk = 0; kk < kc; kk++) memcpy(dst + kk * MR, ai + kk * a_cs, MR * sizeof(float));
            continue;
        }
        if (mi < MR)
            for (int kk = 0; kk < kc; kk++) memset(dst + kk * MR + mi, 0, (size_t)(MR - mi) * sizeof(float));
        for (int r = 0; r < mi; r++)
            for (int kk = 0; kk < kc; kk++) dst[kk * MR + r] = ai[r * a_rs + kk * a_cs];
    }
}

/* Copies an mr x nr region (row stride rs) into rows of NR floats, zero elsewhere. */
static void tile_in(float *t, int rows, const float *src, ptrdiff_t rs, int mr, int nr)
{
    memset(t, 0, (size_t)rows * NR * sizeof(float));
    for (int r = 0; r < mr; r++) memcpy(t + r * NR, src + r * rs, (size_t)nr * sizeof(float));
}

/* A tile past the edge of m or n: the full tile runs on copies (padded rows
 * and columns compute values that are never stored). A read in place has
 * fewer than MR rows left: they are packed with zero rows. */
static void edge_tile(ngpt_gemm_tile_fn tile, int kc, const float *a, ptrdiff_t a_rs,
                      ptrdiff_t a_cs, bool a_in_place, const float *bp,
                      const ngpt_gemm_tile_io *io, int mr, int nr)
{
    _Alignas(64) float tin[MR * NR], tadd[MR * NR], tout[MR * NR], tbias[NR];
    _Alignas(64) float apad[KC * MR];
    ngpt_gemm_tile_io t = {NULL, NR, tout, NR, NULL, NULL, NR, NULL, 0};
    if (io->cin) tile_in(tin, MR, io->cin, io->cin_rs, mr, nr), t.cin = tin;
    if (io->cadd) tile_in(tadd, MR, io->cadd, io->cadd_rs, mr, nr), t.cadd = tadd;
    if (io->bias) tile_in(tbias, 1, io->bias, 0, 1, nr), t.bias = tbias;
    if (a_in_place && mr < MR) {
        pack_a(apad, a, a_rs, a_cs, mr, kc);
        a = apad, a_rs = 1, a_cs = MR;
    }
    tile(kc, a, a_rs, a_cs, bp, &t);
    for (int r = 0; r < mr; r++)
        memcpy(io->cout + r * io->cout_rs, tout + r * NR, (size_t)nr * sizeof(float));
}

void ngpt_gemm_blocked(ngpt_gemm_tile_fn tile, int m, int n, int k, const float *a,
                       ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs,
                       ptrdiff_t b_cs, const float *wp, const float *bias, float *c,
                       ptrdiff_t c_rs, bool accumulate, float *work)
{
    if (m <= 0 || n <= 0) return;
    /* work: packed A block | packed B block | partial chains (none used: may be NULL) */
    float *apack = work, *bpack = work ? work + MC * KC : NULL;
    float *part = work ? work + MC * KC + KC * NC : NULL;
    const int kblocks = k > 0 ? (k + KC - 1) / KC : 1;
    const bool a_in_place = a_cs == 1;
    const bool partials = accumulate && kblocks > 1;   /* C holds the addend meanwhile */
    const int ms_step = partials ? MS : m;
    for (int jc = 0; jc < n; jc += NC) {
        const int nc = min_int(NC, n - jc);
        for (int is = 0; is < m; is += ms_step) {
            const int ms = min_int(ms_step, m - is);
            for (int kb = 0; kb < kblocks; kb++) {
                const int pc = kb * KC, kc = min_int(KC, k - pc);
                const bool first = kb == 0, last = kb == kblocks - 1;
                const float *bblock;
                size_t panel_stride;
                if (wp) {
                    bblock = wp + (size_t)(jc / NR) * (size_t)k * NR + (size_t)pc * NR;
                    panel_stride = (size_t)k * NR;
                } else {
                    pack_b(bpack, b + pc * b_rs + jc * b_cs, b_rs, b_cs, kc, nc);
                    bblock = bpack;
                    panel_stride = (size_t)kc * NR;
                }
                for (int ic = is; ic < is + ms; ic += MC) {
                    const int mc = min_int(MC, is + ms - ic);
                    const float *ablock;
                    ptrdiff_t ars, acs, atile;   /* strides in the block, between row tiles */
                    if (a_in_place) {
                        ablock = a + ic * a_rs + pc, ars = a_rs, acs = 1, atile = MR * a_rs;
                    } else {
                        pack_a(apack, a + ic * a_rs + pc * a_cs, a_rs, a_cs, mc, kc);
                        ablock = apack, ars = 1, acs = MR, atile = (ptrdiff_t)kc * MR;
                    }
                    for (int jr = 0; jr < nc; jr += NR) {
                        const float *bp = bblock + (size_t)(jr / NR) * panel_stride;
                        const int nr = min_int(NR, nc - jr), j = jc + jr;
                        for (int ir = 0; ir < mc; ir += MR) {
                            const int mr = min_int(MR, mc - ir), i = ic + ir;
                            const float *at = ablock + (ir / MR) * atile;
                            float *ct = c + i * c_rs + j;
                            float *pt = partials ? part + (size_t)(i - is) * NC + jr : NULL;
                            ngpt_gemm_tile_io io;
                            if (partials) {
                                io.cin = first ? NULL : pt, io.cin_rs = NC;
                                io.cout = last ? ct : pt, io.cout_rs = last ? c_rs : NC;
                                io.cadd = last ? ct : NULL;
                            } else {
                                io.cin = first ? NULL : ct, io.cin_rs = c_rs;
                                io.cout = ct, io.cout_rs = c_rs;
                                io.cadd = accumulate ? ct : NULL;   /* a single k block */
                            }
                            io.cadd_rs = c_rs;
                            io.bias = last && bias ? bias + j : NULL;
                            /* the tile below: its chains (C or work) and its C */
                            io.next = ir + MR < mc ? (io.cin ? io.cin : io.cout) : NULL;
                            io.next_rs = io.cin ? io.cin_rs : io.cout_rs;
                            if (io.next) io.next += MR * io.next_rs;
                            if (mr == MR && nr == NR)
                                tile(kc, at, ars, acs, bp, &io);
                            else
                                edge_tile(tile, kc, at, ars, acs, a_in_place, bp, &io, mr, nr);
                        }
                    }
                }
            }
        }
    }
}

/* The row groups of m <= 8 (4 + the rest) over one group of np <= 4 panels. */
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
        for (; p + wide <= np; p += wide)
            g->wide[rows - 1](k, ai, a_rs, w + p * ps, avail - p * ps, bias ? bias + p * NR : NULL,
                              ci + p * NR, c_rs, n - p * NR);
        for (; p < np; p++)
            g->one[rows - 1](k, ai, a_rs, w + p * ps, avail - p * ps, bias ? bias + p * NR : NULL,
                             ci + p * NR, c_rs, n - p * NR);
        i += rows;
    }
}

void ngpt_gemm_packed_run(ngpt_gemm_tile_fn tile, const ngpt_gemv_blocks *gemv, int m, int n,
                          int k, const float *a, ptrdiff_t a_rs, const float *wp,
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
