/* gemm.c — NEON matrix products, bit-identical to the reference: every
 * output is one fma chain over k in increasing order from +0.0f (one lane of
 * vfmaq_f32 per k is exactly fmaf), then + bias, then added to the old C when
 * accumulating. Vectorised across 16 output columns — two 8-lane groups of
 * two float32x4_t each, the AVX2 kernels' layout — never across k.
 *
 *  - gemm, and gemm_packed for m > 8: the shared cache-blocked driver
 *    (arch/gemm_blocked.h) around its 6x16 register tile. AArch64 (32
 *    registers) runs the tile in one sweep over k: 24 accumulators, four B
 *    vectors, A taken by lane. ARMv7 (16 registers, no fma by lane) runs it
 *    as two 6x8 halves, one sweep each: 12 accumulators, two B vectors, one
 *    A broadcast.
 *  - gemm_packed for m <= 8 (decode steps, beams): rows x panels blocks that
 *    stream the packed panels once, with prefetch of the next panels.
 * No k loop spills (make mca counts them). On ARMv7 a tile half whose chains
 * flushed is recomputed by tile_ref before it stores anything, a row whose
 * bias or old-C sums flushed before it is stored, and a gemm_packed call
 * whose gemv blocks flushed is recomputed by the reference (its C is an
 * output only) (kernels_neon.h, "the flush check"). */
#include <arm_neon.h>

#include "../gemm_blocked.h"
#include "kernels_neon.h"


/* ---- the 6x16 tile of the blocked driver */

/* Columns j0..j0+4V-1 of row r of a finished tile (V = 2 or 4 vectors):
 * + bias, then the old C + acc (the reference's order); false, storing
 * nothing, if those sums flushed (ARMv7). */
static inline __attribute__((always_inline)) bool
store_row(const ngpt_gemm_tile_io *io, int r, int j0, const int V, float32x4_t x0,
          float32x4_t x1, float32x4_t x2, float32x4_t x3)
{
    if (io->bias) {
        const float *b = io->bias + j0;
        x0 = vaddq_f32(x0, vld1q_f32(b)), x1 = vaddq_f32(x1, vld1q_f32(b + 4));
        if (V == 4) x2 = vaddq_f32(x2, vld1q_f32(b + 8)), x3 = vaddq_f32(x3, vld1q_f32(b + 12));
    }
    if (io->cadd) {
        const float *ca = io->cadd + r * io->cadd_rs + j0;
        x0 = vaddq_f32(vld1q_f32(ca), x0), x1 = vaddq_f32(vld1q_f32(ca + 4), x1);
        if (V == 4) x2 = vaddq_f32(vld1q_f32(ca + 8), x2), x3 = vaddq_f32(vld1q_f32(ca + 12), x3);
    }
    float *co = io->cout + r * io->cout_rs + j0;
    if (V == 2) {
        if (neon_flushed2(x0, x1)) return false;
        vst1q_f32(co, x0), vst1q_f32(co + 4, x1);
        return true;
    }
    if (neon_flushed(x0, x1, x2, x3)) return false;
    neon_store16(co, x0, x1, x2, x3);
    return true;
}

#if defined(__aarch64__)

/* AArch64 (32 q registers): the whole 6x16 tile in one sweep over k, 24
 * accumulators; 24 chains cover 2 fma pipes x 4 cycles of latency three
 * times over (and the M1's 4 pipes x 4 cycles). Every fma takes A by lane:
 * LLVM's model of the Apple cores issues those on 3 vector units and an fma
 * by vector on 2. */
#define TILE_INIT(r)                                                                     \
    float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0,       \
                c##r##3 = c##r##0;                                                       \
    if (io->cin) {                                                                       \
        const float *ci = io->cin + (r) * io->cin_rs;                                    \
        c##r##0 = vld1q_f32(ci), c##r##1 = vld1q_f32(ci + 4);                            \
        c##r##2 = vld1q_f32(ci + 8), c##r##3 = vld1q_f32(ci + 12);                       \
    }
#define TILE_FMA_LANE(r, fma_lane, av, lane)                                              \
    c##r##0 = fma_lane(c##r##0, b0, av, lane), c##r##1 = fma_lane(c##r##1, b1, av, lane); \
    c##r##2 = fma_lane(c##r##2, b2, av, lane), c##r##3 = fma_lane(c##r##3, b3, av, lane);
/* Column vector j of step u of four: B's vector times each row's lane u. */
#define TILE_COL4(j, u)                                                                  \
    {                                                                                    \
        const float32x4_t bj = vld1q_f32(bp + 4 * (j));                                  \
        c0##j = vfmaq_laneq_f32(c0##j, bj, x0, u), c1##j = vfmaq_laneq_f32(c1##j, bj, x1, u); \
        c2##j = vfmaq_laneq_f32(c2##j, bj, x2, u), c3##j = vfmaq_laneq_f32(c3##j, bj, x3, u); \
        c4##j = vfmaq_laneq_f32(c4##j, bj, x4, u), c5##j = vfmaq_laneq_f32(c5##j, bj, x5, u); \
        NEON_ORDER();                                                                    \
    }
/* clang turns a broadcast load taken by lane into a broadcast load and fmas
 * by vector, which LLVM's model of the Apple cores issues on 2 units instead
 * of 3; hiding the broadcast keeps the lane form (gcc keeps it anyway and
 * schedules worse around the hidden value). */
#if defined(__clang__)
#define TILE_KEEP_LANE(v) __asm__("" : "+w"(v))
#else
#define TILE_KEEP_LANE(v) (void)0
#endif
#define TILE_STEP4(u)                                                                    \
    TILE_COL4(0, u) TILE_COL4(1, u) TILE_COL4(2, u) TILE_COL4(3, u) bp += NR;
#define TILE_ROW(r)                                                                      \
    av = vld1_dup_f32(a##r + kk * a_cs);                                                 \
    TILE_KEEP_LANE(av);                                                                  \
    TILE_FMA_LANE(r, vfmaq_lane_f32, av, 0)                                              \
    NEON_ORDER();
#define TILE_STORE(r)                                                                    \
    store_row(io, r, 0, 4, c##r##0, c##r##1, c##r##2, c##r##3);

static void tile_6x16(int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                      const ngpt_gemm_tile_io *io)
{
    TILE_INIT(0) TILE_INIT(1) TILE_INIT(2) TILE_INIT(3) TILE_INIT(4) TILE_INIT(5)
    if (a_rs == 1 && a_cs == MR) {
        /* A packed by the driver: the six values of step kk are one q and
         * one d load, and each fma takes its row's value as a lane: 24
         * accumulators + 4 B + 2 A = 30 registers */
        for (int kk = 0; kk < kc; kk++, bp += NR, a += MR) {
            const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);
            const float32x4_t b2 = vld1q_f32(bp + 8), b3 = vld1q_f32(bp + 12);
            const float32x4_t a03 = vld1q_f32(a);
            const float32x2_t a45 = vld1_f32(a + 4);
            TILE_FMA_LANE(0, vfmaq_laneq_f32, a03, 0) TILE_FMA_LANE(1, vfmaq_laneq_f32, a03, 1)
            TILE_FMA_LANE(2, vfmaq_laneq_f32, a03, 2) TILE_FMA_LANE(3, vfmaq_laneq_f32, a03, 3)
            TILE_FMA_LANE(4, vfmaq_lane_f32, a45, 0) TILE_FMA_LANE(5, vfmaq_lane_f32, a45, 1)
        }
    } else {
        /* A read in place (rows a_rs apart): one step a trip, row r's value
         * loaded to a lane and taken by lane (24 + 4 B + 1 A registers).
         * clang also holds four steps a trip without a spill, each row's
         * four values one load and the B vectors one at a time (24 + 6 A + 1
         * B): a third of the loads (llvm-mca: the M1 model's peak instead of
         * 80% of it); gcc spills that form (it broadcasts the lanes into
         * registers of their own), so it runs the one-step loop. */
        const float *a0 = a, *a1 = a + a_rs, *a2 = a + 2 * a_rs, *a3 = a + 3 * a_rs;
        const float *a4 = a + 4 * a_rs, *a5 = a + 5 * a_rs;
        int kk = 0;
#if defined(__clang__)
        if (a_cs == 1)
            for (; kk + 4 <= kc; kk += 4) {
                const float32x4_t x0 = vld1q_f32(a0 + kk), x1 = vld1q_f32(a1 + kk);
                const float32x4_t x2 = vld1q_f32(a2 + kk), x3 = vld1q_f32(a3 + kk);
                const float32x4_t x4 = vld1q_f32(a4 + kk), x5 = vld1q_f32(a5 + kk);
                TILE_STEP4(0) TILE_STEP4(1) TILE_STEP4(2) TILE_STEP4(3)
            }
#endif
        for (; kk < kc; kk++, bp += NR) {
            const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);
            const float32x4_t b2 = vld1q_f32(bp + 8), b3 = vld1q_f32(bp + 12);
            float32x2_t av;
            TILE_ROW(0) TILE_ROW(1) TILE_ROW(2) TILE_ROW(3) TILE_ROW(4) TILE_ROW(5)
        }
    }
    TILE_STORE(0) TILE_STORE(1) TILE_STORE(2) TILE_STORE(3) TILE_STORE(4) TILE_STORE(5)
}

#else

/* Rows r0..r1-1, columns j0..j1-1 of a tile by its contract
 * (gemm_blocked.h) in scalar, on ARMv7's VFP unit: acc = cin or +0.0f, kc
 * fmaf in increasing kk, + bias, then cadd + acc. For the part of a tile
 * that flushed, before that part is stored. */
static void tile_ref(int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                     const ngpt_gemm_tile_io *io, int r0, int r1, int j0, int j1)
{
    for (int r = r0; r < r1; r++)
        for (int jj = j0; jj < j1; jj++) {
            float acc = io->cin ? io->cin[r * io->cin_rs + jj] : 0.0f;
            for (int kk = 0; kk < kc; kk++) acc = fmaf(a[r * a_rs + kk * a_cs], bp[kk * NR + jj], acc);
            if (io->bias) acc = acc + io->bias[jj];
            io->cout[r * io->cout_rs + jj] = io->cadd ? io->cadd[r * io->cadd_rs + jj] + acc : acc;
        }
    neon_flags_clear();
}

/* ARMv7 (16 q registers, no fma by lane): the 6x16 tile is two 6x8 halves,
 * each its own sweep over k with 12 accumulators, the half's 2 B vectors and
 * one A broadcast (vld1 to all lanes): 15 registers. A half whose chains
 * flushed is recomputed by tile_ref before any of it is stored, a row whose
 * bias or old-C sums flushed before it is stored; the first half is stored
 * before the second starts, which reads and writes only its own columns (so
 * cout may be cin or cadd). */
#define HALF_INIT(r)                                                                     \
    float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0;                          \
    if (io->cin) {                                                                       \
        const float *ci = io->cin + (r) * io->cin_rs + j0;                               \
        c##r##0 = vld1q_f32(ci), c##r##1 = vld1q_f32(ci + 4);                            \
    }
/* One step of the half, A read in place: row r's value broadcast by a load. */
#define HALF_FMA(r)                                                                      \
    av = vdupq_n_f32(a##r[kk * a_cs]);                                                   \
    c##r##0 = vfmaq_f32(c##r##0, av, b0), c##r##1 = vfmaq_f32(c##r##1, av, b1);          \
    NEON_ORDER();
/* A packed (a_rs = 1, a_cs = MR): rows r and r+1 of the step are one 64-bit
 * load, each broadcast from its lane (fewer micro-ops than two broadcast
 * loads). */
#define HALF_FMA_PAIR(r, s)                                                              \
    ap = vld1_f32(a + (r));                                                              \
    av = vdupq_lane_f32(ap, 0);                                                          \
    c##r##0 = vfmaq_f32(c##r##0, av, b0), c##r##1 = vfmaq_f32(c##r##1, av, b1);          \
    av = vdupq_lane_f32(ap, 1);                                                          \
    c##s##0 = vfmaq_f32(c##s##0, av, b0), c##s##1 = vfmaq_f32(c##s##1, av, b1);          \
    NEON_ORDER();
#define HALF_STORE(r)                                                                    \
    if (!store_row(io, r, j0, 2, c##r##0, c##r##1, c##r##0, c##r##1))                    \
        tile_ref(kc, a_tile, a_rs, a_cs, bp, io, r, r + 1, j0, j0 + 8);

static void tile_6x8(int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                     const ngpt_gemm_tile_io *io, int j0)
{
    const float *const a_tile = a;
    neon_flags_clear();
    HALF_INIT(0) HALF_INIT(1) HALF_INIT(2) HALF_INIT(3) HALF_INIT(4) HALF_INIT(5)
    const float *b = bp + j0;
    float32x4_t av;
    if (a_rs == 1 && a_cs == MR) {
        float32x2_t ap;
        for (int kk = 0; kk < kc; kk++, b += NR, a += MR) {
            const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
            HALF_FMA_PAIR(0, 1) HALF_FMA_PAIR(2, 3) HALF_FMA_PAIR(4, 5)
        }
    } else {
        const float *a0 = a, *a1 = a + a_rs, *a2 = a + 2 * a_rs, *a3 = a + 3 * a_rs;
        const float *a4 = a + 4 * a_rs, *a5 = a + 5 * a_rs;
        for (int kk = 0; kk < kc; kk++, b += NR) {
            const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
            HALF_FMA(0) HALF_FMA(1) HALF_FMA(2) HALF_FMA(3) HALF_FMA(4) HALF_FMA(5)
        }
    }
    if (neon_flushed(c00, c01, c10, c11) || neon_flushed(c20, c21, c30, c31) ||
        neon_flushed(c40, c41, c50, c51)) {
        tile_ref(kc, a_tile, a_rs, a_cs, bp, io, 0, MR, j0, j0 + 8);
        return;
    }
    HALF_STORE(0) HALF_STORE(1) HALF_STORE(2) HALF_STORE(3) HALF_STORE(4) HALF_STORE(5)
}

static void tile_6x16(int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                      const ngpt_gemm_tile_io *io)
{
    tile_6x8(kc, a, a_rs, a_cs, bp, io, 0);
    tile_6x8(kc, a, a_rs, a_cs, bp, io, 8);
}

#endif

void ngpt_f32_gemm__neon(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate, float *work)
{
    ngpt_gemm_blocked(tile_6x16, m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, NULL, bias, c, c_rs,
                      accumulate, work);
}

/* ---- m <= 8 on packed panels: the blocks of arch/gemv.h with four
 * float32x4_t per panel row, A's value of the step broadcast to a 64-bit
 * register and taken by lane. A block of one row loads each panel vector
 * where its fma takes it (kept for all four panels they and the 16
 * accumulators are 33 registers: spills); a block of several rows loads the
 * panel row once for them all (GV_KEEP). ARMv7 (16 registers) has blocks
 * of at most 12 accumulators: 1x2 for one row, 2x1 and 3x1, and four rows
 * as two 2x1 blocks over the same panel (the second reading it from cache);
 * its 3x1 block loads panel vectors where they are used too. */
#if defined(__aarch64__)
#define GV_KEEP (R > 1)
#define GV_VEC float32x2_t
#define GV_BROADCAST(x) vld1_dup_f32(x)
#define GV_FMA1(s, w) vfmaq_lane_f32(s, w, av, 0)
#else
#define GV_KEEP (R == 2)
#define GV_VEC float32x4_t
#define GV_BROADCAST(x) vld1q_dup_f32(x)
#define GV_FMA1(s, w) vfmaq_f32(s, av, w)
#endif
#define GV_ACC(r, p)                                                                     \
    float32x4_t s##r##p##0 = vdupq_n_f32(0.0f), s##r##p##1 = s##r##p##0,                 \
                s##r##p##2 = s##r##p##0, s##r##p##3 = s##r##p##0;
#define GV_LOAD(p)                                                                       \
    float32x4_t w##p##0 = vdupq_n_f32(0.0f), w##p##1 = w##p##0, w##p##2 = w##p##0,       \
                w##p##3 = w##p##0;                                                       \
    if (GV_KEEP && P > p) {                                                              \
        const float *wk = w + (p) * ps + (size_t)kk * NR;                                \
        w##p##0 = vld1q_f32(wk), w##p##1 = vld1q_f32(wk + 4);                            \
        w##p##2 = vld1q_f32(wk + 8), w##p##3 = vld1q_f32(wk + 12);                       \
    }
#define GV_PREFETCH(p, ahead)                                                            \
    if (P > p) __builtin_prefetch(w + (p) * ps + (ahead));
#define GV_FMA(r, p)                                                                     \
    if (R > r && P > p) {                                                                \
        float32x4_t x0 = w##p##0, x1 = w##p##1, x2 = w##p##2, x3 = w##p##3;              \
        if (!GV_KEEP) {                                                                  \
            const float *wk = w + (p) * ps + (size_t)kk * NR;                            \
            x0 = vld1q_f32(wk), x1 = vld1q_f32(wk + 4);                                  \
            x2 = vld1q_f32(wk + 8), x3 = vld1q_f32(wk + 12);                             \
        }                                                                                \
        s##r##p##0 = GV_FMA1(s##r##p##0, x0), s##r##p##1 = GV_FMA1(s##r##p##1, x1);      \
        s##r##p##2 = GV_FMA1(s##r##p##2, x2), s##r##p##3 = GV_FMA1(s##r##p##3, x3);      \
        if (!GV_KEEP) NEON_ORDER();                                                      \
    }
#define GV_STORE(r, p)                                                                   \
    if (R > r && P > p)                                                                  \
        gv_store(c + (r) * c_rs + (p) * NR, s##r##p##0, s##r##p##1, s##r##p##2, s##r##p##3, \
                 bias, (p) * NR, n);

/* Columns j0..j0+15 of one row (only those below n): + bias. */
static inline void gv_store(float *c, float32x4_t x0, float32x4_t x1, float32x4_t x2,
                            float32x4_t x3, const float *bias, int j0, int n)
{
    if (n - j0 >= NR) {
        if (bias) {
            const float *b = bias + j0;
            x0 = vaddq_f32(x0, vld1q_f32(b)), x1 = vaddq_f32(x1, vld1q_f32(b + 4));
            x2 = vaddq_f32(x2, vld1q_f32(b + 8)), x3 = vaddq_f32(x3, vld1q_f32(b + 12));
        }
        vst1q_f32(c, x0), vst1q_f32(c + 4, x1), vst1q_f32(c + 8, x2), vst1q_f32(c + 12, x3);
        return;
    }
    float t[NR];
    vst1q_f32(t, x0), vst1q_f32(t + 4, x1), vst1q_f32(t + 8, x2), vst1q_f32(t + 12, x3);
    for (int jj = 0; jj < n - j0; jj++) c[jj] = bias ? t[jj] + bias[j0 + jj] : t[jj];
}

#if defined(__aarch64__)
#include "../gemv.h"
#else
#define GV_OWN_BLOCKS
#include "../gemv.h"
GV_FN(1, 2) GV_FN(1, 1) GV_FN(2, 1) GV_FN(3, 1)

/* Four rows: rows 0-1 stream the panel, rows 2-3 read it again from cache. */
static void gv_4x1(int k, const float *a, ptrdiff_t a_rs, const float *w, size_t avail,
                   const float *bias, float *c, ptrdiff_t c_rs, int n)
{
    gv_2x1(k, a, a_rs, w, avail, bias, c, c_rs, n);
    gv_2x1(k, a + 2 * a_rs, a_rs, w, 0, bias, c + 2 * c_rs, c_rs, n);
}

static const ngpt_gemv_blocks gemv_blocks = {
    {2, 1, 1, 1}, {gv_1x2, gv_2x1, gv_3x1, gv_4x1}, {gv_1x1, gv_2x1, gv_3x1, gv_4x1}};
#endif

void ngpt_f32_gemm_packed__neon(int m, int n, int k, const float *a, ptrdiff_t a_rs,
                                const float *wp, const float *bias, float *c, ptrdiff_t c_rs)
{
    neon_flags_clear();
    ngpt_gemm_packed_run(tile_6x16, &gemv_blocks, m, n, k, a, a_rs, wp, bias, c, c_rs);
    if (neon_flags_set())   /* a gemv block flushed (tiles mend their own) */
        ngpt_f32_gemm_packed_ref(m, n, k, a, a_rs, wp, bias, c, c_rs);
}
