/* q8.c — NEON 8-bit kernels (AArch64, with or without the dot product
 * instructions, and ARMv7 NEON-VFPv4), bit-identical to the reference
 * (src/ref/q8.c; the rule and the layouts: src/q8.h). arch/avx2/q8.c has
 * the same shape.
 *
 *  - quantize_q8: a group of 32 floats is eight float32x4_t; the largest
 *    |x| is an integer max of the bits; x * (127/amax) is rounded to
 *    nearest even by vcvtnq_s32_f32 (AArch64) or by the reference's magic
 *    constant (ARMv7 has no rounding conversion), then narrowed (|q| <= 127).
 *    ARMv7 flushes a subnormal x * (127/amax), which rounds to 0 anyway.
 *  - gemm_q8: one or two rows against one panel of 16 outputs, every group.
 *    Four k of 4 outputs are one int8x16_t of the panel. With the dot
 *    product (__ARM_FEATURE_DOTPROD: ARMv8.2 boards, the Pi 5's Cortex-A76,
 *    Apple M1; toolchains/rpi5-aarch64.mk, apple-silicon.mk) one SDOT adds
 *    the 4-product sums of 4 outputs into their int32 lanes. Without it
 *    (ARMv8.0, ARMv7) SMULL/SMLAL multiply two quads into int16 lanes (a sum
 *    of two products, at most 2 * 127 * 127 = 32258: no overflow), SADALP
 *    adds lane pairs into int32, and a pairwise add gives each output its
 *    lane. The int32 sums are exact, so their order is free; the float chain
 *    over the groups is the reference's: one vfmaq_f32 per group and output.
 *    No float of the chain can be subnormal (q8.h); on ARMv7 the bias is
 *    added on the VFP unit, which keeps a subnormal sum.
 *    Every loop over the 4 vectors of outputs is UNROLLed (kernels_neon.h):
 *    gcc 12 keeps it rolled at -O2, and then the accumulator arrays it
 *    indexes live on the stack, a load and a store per product; unrolled,
 *    they are registers. The loops over quads stay rolled: unrolled, gcc
 *    hoists their weight loads and spills (the two-row block, ARMv7). */
#include "../panel_walk.h"
#include "../q8_run.h"
#include "kernels_neon.h"
#include "quad_mull.h"

enum { G = NGPT_Q8_GROUP, NR = NGPT_Q8_NR, QUADS = NGPT_Q8_QUADS, BLOCK = NGPT_Q8_BLOCK };

/* ---- quantize_q8 */

static inline uint32_t hmax_u32(uint32x4_t m)
{
#if defined(__aarch64__)
    return vmaxvq_u32(m);
#else
    uint32x2_t h = vpmax_u32(vget_low_u32(m), vget_high_u32(m));
    h = vpmax_u32(h, h);
    return vget_lane_u32(h, 0);
#endif
}

/* Round to nearest even, as int32 (|v| < 2^22). */
static inline int32x4_t round_even(float32x4_t v)
{
#if defined(__aarch64__)
    return vcvtnq_s32_f32(v);
#else
    const float32x4_t magic = vdupq_n_f32(0x1.8p23f);
    return vcvtq_s32_f32(vsubq_f32(vaddq_f32(v, magic), magic));
#endif
}

/* One group of 32 floats (zero past the row's end): its values, its scale. */
static inline float quantize_group(int8_t *q, const float *x)
{
    float32x4_t v[8];
    uint32x4_t m = vdupq_n_u32(0);
    const uint32x4_t abs_mask = vdupq_n_u32(0x7fffffffu);
    for (int i = 0; i < 8; i++) {
        v[i] = vld1q_f32(x + 4 * i);
        m = vmaxq_u32(m, vandq_u32(vreinterpretq_u32_f32(v[i]), abs_mask));
    }
    const uint32_t amax_bits = hmax_u32(m);
    float d, idf;
    if (!q8_group_scale(amax_bits, q, &d, &idf)) return d;
    const float32x4_t id = vdupq_n_f32(idf);
    for (int i = 0; i < 8; i += 2) {
        const int16x8_t h = vcombine_s16(vmovn_s32(round_even(vmulq_f32(v[i], id))),
                                         vmovn_s32(round_even(vmulq_f32(v[i + 1], id))));
        vst1_s8(q + 4 * i, vmovn_s16(h));
    }
    return d;
}

void ngpt_f32_quantize_q8__neon(int8_t *xq, ptrdiff_t xq_rs, const float *x, ptrdiff_t x_rs, int m,
                                int k)
{
    q8_quantize_rows(quantize_group, xq, xq_rs, x, x_rs, m, k);
}

/* ---- gemm_q8 */

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

#if defined(__ARM_FEATURE_DOTPROD)
/* The int32 sums of one group for a row: 4 vectors of 4 outputs. */
static inline void group_sums(int32x4_t s[4], const int8_t *xg, const int8_t *q)
{
    UNROLL
    for (int v = 0; v < 4; v++) s[v] = vdupq_n_s32(0);
    for (int h = 0; h < 2; h++) {       /* quads 4h..4h+3 of the row in one register */
        const int8x16_t xv = vld1q_s8(xg + 16 * h);
        const int8_t *qh = q + h * 4 * 64;
#define DOT(lane)                                                                        \
        UNROLL                                                                           \
        for (int v = 0; v < 4; v++)                                                      \
            s[v] = vdotq_laneq_s32(s[v], vld1q_s8(qh + (lane) * 64 + 16 * v), xv, lane);
        DOT(0) DOT(1) DOT(2) DOT(3)
#undef DOT
    }
}
#else
/* The same with SMULL/SMLAL (quad_mull.h): quads s and s+1 of 4 outputs in
 * int16 lanes (each the sum of two products), pairs added into int32 by
 * SADALP: lanes (o k01, o k23, o' k01, o' k23) per half, folded by a
 * pairwise add. */
static inline void group_sums(int32x4_t s[4], const int8_t *xg, const int8_t *q)
{
    int32x4_t lo[4], hi[4];
    UNROLL
    for (int v = 0; v < 4; v++) lo[v] = hi[v] = vdupq_n_s32(0);
    for (int sq = 0; sq < QUADS; sq += 2) {
        const neon_quad x0 = neon_quad_load(xg + 4 * sq), x1 = neon_quad_load(xg + 4 * sq + 4);
        UNROLL
        for (int v = 0; v < 4; v++) {
            const int8x16_t w0 = vld1q_s8(q + sq * 64 + 16 * v);
            const int8x16_t w1 = vld1q_s8(q + (sq + 1) * 64 + 16 * v);
            const int16x8_t plo = neon_mlal_lo(neon_mull_lo(w0, x0), w1, x1);
            const int16x8_t phi = neon_mlal_hi(neon_mull_hi(w0, x0), w1, x1);
            lo[v] = vpadalq_s16(lo[v], plo);
            hi[v] = vpadalq_s16(hi[v], phi);
        }
    }
    UNROLL
    for (int v = 0; v < 4; v++) {
#if defined(__aarch64__)
        s[v] = vpaddq_s32(lo[v], hi[v]);
#else
        s[v] = vcombine_s32(vpadd_s32(vget_low_s32(lo[v]), vget_high_s32(lo[v])),
                            vpadd_s32(vget_low_s32(hi[v]), vget_high_s32(hi[v])));
#endif
    }
}
#endif

/* R = 1 or 2 rows (x0, x1 with scales s0, s1) against one panel. */
static inline __attribute__((always_inline)) void
panel_rows(const int R, int groups, const int8_t *x0, const float *s0, const int8_t *x1,
           const float *s1, const int8_t *panel, const float *bias, float *c, ptrdiff_t c_rs,
           int nvalid)
{
    float32x4_t f0[4], f1[4];
    UNROLL
    for (int v = 0; v < 4; v++) f0[v] = f1[v] = vdupq_n_f32(0.0f);
    for (int g = 0; g < groups; g++) {
        const int8_t *blk = panel + (size_t)g * BLOCK, *q = blk + NR * sizeof(float);
        const float *wd = (const float *)(const void *)blk;
        int32x4_t i0[4], i1[4];
        group_sums(i0, x0 + g * G, q);
        if (R > 1) group_sums(i1, x1 + g * G, q);
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

void ngpt_f32_gemm_q8__neon(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs,
                            const int8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    panel_walk(panel_2, panel_1, BLOCK, m, n, k, xq, xq_rs, wq, bias, c, c_rs);
}
