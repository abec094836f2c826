/* q4.c — the NEON 4-bit product (AArch64, with or without the dot product
 * instructions, and ARMv7 NEON-VFPv4), bit-identical to the reference
 * (src/ref/q4.c; the rule and the layout: src/q4.h). arch/neon/q8.c has
 * the same shape.
 *
 *  - gemm_q4: one or two rows against one panel of 16 outputs, every group.
 *    16 bytes of the panel hold quads h (low nibbles) and h + 4 (high) of 4
 *    outputs; the nibbles become signed int8 by shifts (shl 4 then an
 *    arithmetic shr 4; an arithmetic shr 4), so the products are q8's with
 *    the row's first and second 16 values. With the dot product
 *    (__ARM_FEATURE_DOTPROD) one SDOT adds each 4-product sum into its
 *    output's int32 lane. Without it (ARMv8.0, ARMv7) SMULL/SMLAL multiply
 *    into int16 lanes: all 8 quads of the group add into the same lanes,
 *    16 products of magnitude <= 8 * 127, at most 16256: no overflow;
 *    SADDLP widens lane pairs into int32 and a pairwise add gives each
 *    output its lane. The int32 sums are exact, so their order is free;
 *    the float chain over the groups is the reference's: one vfmaq_f32 per
 *    group and output, no float of it subnormal (q4.h); on ARMv7 the bias
 *    is added on the VFP unit, as in q8.c, and the loops over the 4
 *    vectors of outputs are unrolled as there.
 *  - Several rows (m >= 2) take the panel after panel in blocks of up to 8
 *    rows: a group's nibbles are unpacked once, into 32 vectors on the
 *    stack, and every row of the block reads them there (the same products
 *    and sums as one row's), so a 5-position pass walks a panel once and
 *    unpacks it once, not three times. One row (decode) keeps its walk. */
#include "../panel_walk.h"
#include "kernels_neon.h"
#include "quad_mull.h"

enum { G = NGPT_Q4_GROUP, NR = NGPT_Q4_NR, BLOCK = NGPT_Q4_BLOCK };

/* 16 outputs of one row (those below nvalid): + bias. */
static inline void store16(float *c, const float32x4_t f[4], const float *bias, int nvalid)
{
    float t[NR];
    UNROLL
    for (int v = 0; v < 4; v++) vst1q_f32(t + 4 * v, f[v]);
#if defined(__aarch64__)
    if (nvalid >= NR) {
        UNROLL
        for (int v = 0; v < 4; v++)
            vst1q_f32(c + 4 * v, bias ? vaddq_f32(f[v], vld1q_f32(bias + 4 * v)) : f[v]);
        return;
    }
#endif
    /* ARMv7: the adds on the VFP unit (a subnormal sum must not flush) */
    const int nj = nvalid < NR ? nvalid : NR;
    for (int jj = 0; jj < nj; jj++) c[jj] = bias ? t[jj] + bias[jj] : t[jj];
}

/* The signed low and high nibbles of 16 bytes. */
static inline int8x16_t low_nibbles(int8x16_t v) { return vshrq_n_s8(vshlq_n_s8(v, 4), 4); }
static inline int8x16_t high_nibbles(int8x16_t v) { return vshrq_n_s8(v, 4); }

#if defined(__ARM_FEATURE_DOTPROD)
/* The int32 sums of one group for a row: 4 vectors of 4 outputs. */
static inline void group_sums(int32x4_t s[4], const int8_t *xg, const uint8_t *b)
{
    const int8x16_t x0 = vld1q_s8(xg), x1 = vld1q_s8(xg + 16);
    UNROLL
    for (int v = 0; v < 4; v++) s[v] = vdupq_n_s32(0);
#define DOT(h)                                                                           \
    UNROLL                                                                               \
    for (int v = 0; v < 4; v++) {                                                        \
        const int8x16_t w = vreinterpretq_s8_u8(vld1q_u8(b + (h) * 64 + 16 * v));         \
        s[v] = vdotq_laneq_s32(s[v], low_nibbles(w), x0, h);                              \
        s[v] = vdotq_laneq_s32(s[v], high_nibbles(w), x1, h);                             \
    }
    DOT(0) DOT(1) DOT(2) DOT(3)
#undef DOT
}
#else
/* The same with SMULL/SMLAL (quad_mull.h) into int16 lanes (o k01, o k23
 * per pair of bytes), widened by SADDLP and folded by a pairwise add. As
 * in q8.c, the loop over quads is the outer, rolled one and the one over
 * the 4 vectors the inner, unrolled one (q8.c's opening comment says why). */
static inline void group_sums(int32x4_t s[4], const int8_t *xg, const uint8_t *b)
{
    int16x8_t plo[4], phi[4];
    UNROLL
    for (int v = 0; v < 4; v++) plo[v] = phi[v] = vdupq_n_s16(0);
    for (int h = 0; h < 4; h++) {
        const neon_quad xl = neon_quad_load(xg + 4 * h), xh = neon_quad_load(xg + 16 + 4 * h);
        UNROLL
        for (int v = 0; v < 4; v++) {
            const int8x16_t w = vreinterpretq_s8_u8(vld1q_u8(b + h * 64 + 16 * v));
            const int8x16_t lo = low_nibbles(w), hi = high_nibbles(w);
            plo[v] = neon_mlal_lo(neon_mlal_lo(plo[v], lo, xl), hi, xh);
            phi[v] = neon_mlal_hi(neon_mlal_hi(phi[v], lo, xl), hi, xh);
        }
    }
    UNROLL
    for (int v = 0; v < 4; v++) {
        const int32x4_t l = vpaddlq_s16(plo[v]), u = vpaddlq_s16(phi[v]);
#if defined(__aarch64__)
        s[v] = vpaddq_s32(l, u);
#else
        s[v] = vcombine_s32(vpadd_s32(vget_low_s32(l), vget_high_s32(l)),
                            vpadd_s32(vget_low_s32(u), vget_high_s32(u)));
#endif
    }
}
#endif

/* R = 1 or 2 rows (x0, x1 with scales s0, s1) against one panel. */
static inline __attribute__((always_inline)) void
panel_rows(const int R, int groups, const int8_t *x0, const float *s0, const int8_t *x1,
           const float *s1, const uint8_t *panel, const float *bias, float *c, ptrdiff_t c_rs,
           int nvalid)
{
    float32x4_t f0[4], f1[4];
    UNROLL
    for (int v = 0; v < 4; v++) f0[v] = f1[v] = vdupq_n_f32(0.0f);
    for (int g = 0; g < groups; g++) {
        const uint8_t *blk = panel + (size_t)g * BLOCK, *b = blk + NR * sizeof(float);
        const float *wd = (const float *)(const void *)blk;
        int32x4_t i0[4], i1[4];
        group_sums(i0, x0 + g * G, b);
        if (R > 1) group_sums(i1, x1 + g * G, b);
        UNROLL
        for (int v = 0; v < 4; v++) {
            const float32x4_t w = vld1q_f32(wd + 4 * v);
            f0[v] = vfmaq_f32(f0[v], vcvtq_f32_s32(i0[v]), vmulq_n_f32(w, s0[g]));
            if (R > 1) f1[v] = vfmaq_f32(f1[v], vcvtq_f32_s32(i1[v]), vmulq_n_f32(w, s1[g]));
        }
    }
    store16(c, f0, bias, nvalid);
    if (R > 1) store16(c + c_rs, f1, bias, nvalid);
}

PANEL_BLOCKS(panel_rows)

/* ---- several rows (a speculative check, a short prompt, a batch): a
 * group's nibbles unpacked once for a block of up to 8 rows */

enum { ROWS = 8 };      /* rows of a block */

/* A group's nibbles as signed int8: quads h (lo) and h + 4 (hi) of
 * outputs 4v..4v+3 in lo[h][v], hi[h][v]. */
typedef struct unpacked {
    int8x16_t lo[4][4], hi[4][4];
} unpacked;

static inline __attribute__((always_inline)) void unpack_group(unpacked *u, const uint8_t *b)
{
    for (int h = 0; h < 4; h++)
        UNROLL
        for (int v = 0; v < 4; v++) {
            const int8x16_t w = vreinterpretq_s8_u8(vld1q_u8(b + h * 64 + 16 * v));
            u->lo[h][v] = low_nibbles(w), u->hi[h][v] = high_nibbles(w);
        }
}

/* group_sums from the unpacked nibbles: the same products, the same exact
 * int32 sums. */
#if defined(__ARM_FEATURE_DOTPROD)
static inline __attribute__((always_inline)) void unpacked_sums(int32x4_t s[4], const int8_t *xg, const unpacked *u)
{
    const int8x16_t x0 = vld1q_s8(xg), x1 = vld1q_s8(xg + 16);
    int32x4_t s0 = vdupq_n_s32(0), s1 = s0, s2 = s0, s3 = s0;
#define DOT(h)                                                                           \
    s0 = vdotq_laneq_s32(vdotq_laneq_s32(s0, u->lo[h][0], x0, h), u->hi[h][0], x1, h);    \
    s1 = vdotq_laneq_s32(vdotq_laneq_s32(s1, u->lo[h][1], x0, h), u->hi[h][1], x1, h);    \
    s2 = vdotq_laneq_s32(vdotq_laneq_s32(s2, u->lo[h][2], x0, h), u->hi[h][2], x1, h);    \
    s3 = vdotq_laneq_s32(vdotq_laneq_s32(s3, u->lo[h][3], x0, h), u->hi[h][3], x1, h);
    DOT(0) DOT(1) DOT(2) DOT(3)
#undef DOT
    s[0] = s0, s[1] = s1, s[2] = s2, s[3] = s3;
}
#else
static inline __attribute__((always_inline)) void unpacked_sums(int32x4_t s[4], const int8_t *xg, const unpacked *u)
{
    neon_quad xl[4], xh[4];
    UNROLL
    for (int h = 0; h < 4; h++) {
        xl[h] = neon_quad_load(xg + 4 * h);
        xh[h] = neon_quad_load(xg + 16 + 4 * h);
    }
    UNROLL
    for (int v = 0; v < 4; v++) {
        int16x8_t plo = vdupq_n_s16(0), phi = plo;
#define MLAL(h)                                                                          \
    plo = neon_mlal_lo(neon_mlal_lo(plo, u->lo[h][v], xl[h]), u->hi[h][v], xh[h]);        \
    phi = neon_mlal_hi(neon_mlal_hi(phi, u->lo[h][v], xl[h]), u->hi[h][v], xh[h]);
        MLAL(0) MLAL(1) MLAL(2) MLAL(3)
#undef MLAL
        const int32x4_t l = vpaddlq_s16(plo), hsum = vpaddlq_s16(phi);
#if defined(__aarch64__)
        s[v] = vpaddq_s32(l, hsum);
#else
        s[v] = vcombine_s32(vpadd_s32(vget_low_s32(l), vget_high_s32(l)),
                            vpadd_s32(vget_low_s32(hsum), vget_high_s32(hsum)));
#endif
    }
}
#endif

/* R rows (x, xs bytes apart) against one panel, every group; row r's
 * outputs at c + r*c_rs, the first nvalid of 16 stored. The rows' float
 * chains wait in 8 x 16 floats between groups (a float stored and loaded
 * is the same float) and take panel_rows' operations in its order. */
static inline __attribute__((always_inline)) void
block_rows(const int R, int groups, int k, const int8_t *x, ptrdiff_t xs, const uint8_t *panel,
           const float *bias, float *c, ptrdiff_t c_rs, int nvalid)
{
    float32x4_t f[ROWS][4];
    for (int r = 0; r < R; r++)
        UNROLL
        for (int v = 0; v < 4; v++) f[r][v] = vdupq_n_f32(0.0f);
    for (int g = 0; g < groups; g++) {
        const uint8_t *blk = panel + (size_t)g * BLOCK, *b = blk + NR * sizeof(float);
        const float *wd = (const float *)(const void *)blk;
        unpacked u;
        unpack_group(&u, b);
        for (int r = 0; r < R; r++) {
            const int8_t *xr = x + r * xs;
            const float sr = ngpt_q8_row_scales(xr, k)[g];
            int32x4_t i[4];
            unpacked_sums(i, xr + g * G, &u);
            UNROLL
            for (int v = 0; v < 4; v++)
                f[r][v] = vfmaq_f32(f[r][v], vcvtq_f32_s32(i[v]), vmulq_n_f32(vld1q_f32(wd + 4 * v), sr));
        }
    }
    for (int r = 0; r < R; r++) store16(c + r * c_rs, f[r], bias, nvalid);
}

ROWS_BLOCKS(block_rows)

void ngpt_f32_gemm_q4__neon(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs,
                            const uint8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    if (m == 1) {   /* decode: its walk */
        panel_walk(panel_2, panel_1, BLOCK, m, n, k, xq, xq_rs, wq, bias, c, c_rs);
        return;
    }
    panel_rows_walk(rows_blocks, panel_1, BLOCK, m, n, k, xq, xq_rs, wq, bias, c, c_rs);
}
