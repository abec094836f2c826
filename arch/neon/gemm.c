/* gemm.c — NEON matrix products, bit-identical to the reference: every
 * output is one fma chain over k in increasing order from +0.0f (one lane of
 * vfmaq_f32 per k is exactly fmaf), then + bias, then added to the old C when
 * accumulating. Vectorised across 16 output columns — two 8-lane groups of
 * two float32x4_t each, the AVX2 kernels' layout — never across k.
 *
 *  - gemm, and gemm_packed for m > 8: the shared cache-blocked driver
 *    (arch/gemm_blocked.h) around a 6x16 register tile: 24 accumulators and
 *    four B vectors, A packed as two vectors taken by lane (30 of AArch64's
 *    32 registers) or, read in place, one ld1r broadcast per row; 24 chains
 *    cover 2 fma pipes x 4 cycles of latency three times over.
 *  - gemm_packed for m <= 8 (decode steps, beams): rows x panels blocks that
 *    stream the packed panels once, with prefetch of the next panels.
 * ARMv7 (16 q registers) compiles the same code with spills; it is used
 * only when asked for (table.c). */
#include <arm_neon.h>

#include "../gemm_blocked.h"
#include "kernels_neon.h"


/* ---- the 6x16 tile of the blocked driver */

#define TILE_INIT(r)                                                                     \
    float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0,       \
                c##r##3 = c##r##0;                                                       \
    if (io->cin) {                                                                       \
        const float *ci = io->cin + (r) * io->cin_rs;                                    \
        c##r##0 = vld1q_f32(ci), c##r##1 = vld1q_f32(ci + 4);                            \
        c##r##2 = vld1q_f32(ci + 8), c##r##3 = vld1q_f32(ci + 12);                       \
    }
#define TILE_FMA(r)                                                                      \
    av = vld1q_dup_f32(a##r + o);                                                        \
    c##r##0 = vfmaq_f32(c##r##0, av, b0), c##r##1 = vfmaq_f32(c##r##1, av, b1);          \
    c##r##2 = vfmaq_f32(c##r##2, av, b2), c##r##3 = vfmaq_f32(c##r##3, av, b3);
#define TILE_STORE(r) store_row(io, r, c##r##0, c##r##1, c##r##2, c##r##3)

/* Row r of a finished tile: + bias, then the old C + acc (the reference's order). */
static inline void store_row(const ngpt_gemm_tile_io *io, int r, float32x4_t x0, float32x4_t x1,
                             float32x4_t x2, float32x4_t x3)
{
    if (io->bias) {
        x0 = vaddq_f32(x0, vld1q_f32(io->bias)), x1 = vaddq_f32(x1, vld1q_f32(io->bias + 4));
        x2 = vaddq_f32(x2, vld1q_f32(io->bias + 8)), x3 = vaddq_f32(x3, vld1q_f32(io->bias + 12));
    }
    if (io->cadd) {
        const float *ca = io->cadd + r * io->cadd_rs;
        x0 = vaddq_f32(vld1q_f32(ca), x0), x1 = vaddq_f32(vld1q_f32(ca + 4), x1);
        x2 = vaddq_f32(vld1q_f32(ca + 8), x2), x3 = vaddq_f32(vld1q_f32(ca + 12), x3);
    }
    float *co = io->cout + r * io->cout_rs;
    vst1q_f32(co, x0), vst1q_f32(co + 4, x1), vst1q_f32(co + 8, x2), vst1q_f32(co + 12, x3);
}

/* A packed by the driver (a_rs = 1, a_cs = MR): the six values of step kk
 * are one q and one d load, and each fma takes its row's value as a lane,
 * so 24 accumulators + 4 B + 2 A = 30 registers. (AArch64: lane fmas by a
 * 128-bit vector.) */
#if defined(__aarch64__)
#define TILE_FMA_LANE(r, fma_lane, av, lane)                                              \
    c##r##0 = fma_lane(c##r##0, b0, av, lane), c##r##1 = fma_lane(c##r##1, b1, av, lane); \
    c##r##2 = fma_lane(c##r##2, b2, av, lane), c##r##3 = fma_lane(c##r##3, b3, av, lane);
#endif

static void tile_6x16(int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                      const ngpt_gemm_tile_io *io)
{
    TILE_INIT(0) TILE_INIT(1) TILE_INIT(2) TILE_INIT(3) TILE_INIT(4) TILE_INIT(5)
#if defined(__aarch64__)
    if (a_rs == 1 && a_cs == MR) {
        for (int kk = 0; kk < kc; kk++, bp += NR, a += MR) {
            const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);
            const float32x4_t b2 = vld1q_f32(bp + 8), b3 = vld1q_f32(bp + 12);
            const float32x4_t a03 = vld1q_f32(a);
            const float32x2_t a45 = vld1_f32(a + 4);
            TILE_FMA_LANE(0, vfmaq_laneq_f32, a03, 0) TILE_FMA_LANE(1, vfmaq_laneq_f32, a03, 1)
            TILE_FMA_LANE(2, vfmaq_laneq_f32, a03, 2) TILE_FMA_LANE(3, vfmaq_laneq_f32, a03, 3)
            TILE_FMA_LANE(4, vfmaq_lane_f32, a45, 0) TILE_FMA_LANE(5, vfmaq_lane_f32, a45, 1)
        }
        TILE_STORE(0); TILE_STORE(1); TILE_STORE(2); TILE_STORE(3); TILE_STORE(4); TILE_STORE(5);
        return;
    }
#endif
    const float *a0 = a, *a1 = a + a_rs, *a2 = a + 2 * a_rs, *a3 = a + 3 * a_rs;
    const float *a4 = a + 4 * a_rs, *a5 = a + 5 * a_rs;
    ptrdiff_t o = 0;
    for (int kk = 0; kk < kc; kk++, bp += NR, o += a_cs) {
        const float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);
        const float32x4_t b2 = vld1q_f32(bp + 8), b3 = vld1q_f32(bp + 12);
        float32x4_t av;
        TILE_FMA(0) TILE_FMA(1) TILE_FMA(2) TILE_FMA(3) TILE_FMA(4) TILE_FMA(5)
    }
    TILE_STORE(0); TILE_STORE(1); TILE_STORE(2); TILE_STORE(3); TILE_STORE(4); TILE_STORE(5);
}

void ngpt_f32_gemm__neon(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate, float *work)
{
    ngpt_gemm_blocked(tile_6x16, m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, NULL, bias, c, c_rs,
                      accumulate, work);
}

/* ---- m <= 8 on packed panels: the blocks of arch/gemv.h with four
 * float32x4_t per panel row (16 accumulators, the panel rows, an ld1r
 * broadcast). */
#define GV_VEC float32x4_t
#define GV_ACC(r, p)                                                                     \
    float32x4_t s##r##p##0 = vdupq_n_f32(0.0f), s##r##p##1 = s##r##p##0,                 \
                s##r##p##2 = s##r##p##0, s##r##p##3 = s##r##p##0;
#define GV_LOAD(p)                                                                       \
    float32x4_t w##p##0 = vdupq_n_f32(0.0f), w##p##1 = w##p##0, w##p##2 = w##p##0,       \
                w##p##3 = w##p##0;                                                       \
    if (P > p) {                                                                         \
        const float *wk = w + (p) * ps + (size_t)kk * NR;                                \
        w##p##0 = vld1q_f32(wk), w##p##1 = vld1q_f32(wk + 4);                            \
        w##p##2 = vld1q_f32(wk + 8), w##p##3 = vld1q_f32(wk + 12);                       \
    }
#define GV_PREFETCH(p, ahead)                                                            \
    if (P > p) __builtin_prefetch(w + (p) * ps + (ahead));
#define GV_BROADCAST(x) vld1q_dup_f32(x)
#define GV_FMA(r, p)                                                                     \
    if (R > r && P > p) {                                                                \
        s##r##p##0 = vfmaq_f32(s##r##p##0, av, w##p##0);                                 \
        s##r##p##1 = vfmaq_f32(s##r##p##1, av, w##p##1);                                 \
        s##r##p##2 = vfmaq_f32(s##r##p##2, av, w##p##2);                                 \
        s##r##p##3 = vfmaq_f32(s##r##p##3, av, w##p##3);                                 \
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

#include "../gemv.h"

void ngpt_f32_gemm_packed__neon(int m, int n, int k, const float *a, ptrdiff_t a_rs,
                                const float *wp, const float *bias, float *c, ptrdiff_t c_rs)
{
    ngpt_gemm_packed_run(tile_6x16, &gemv_blocks, m, n, k, a, a_rs, wp, bias, c, c_rs);
}
