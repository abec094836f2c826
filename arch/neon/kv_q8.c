/* kv_q8.c — NEON kernels of the 8-bit KV cache (AArch64, with or without
 * the dot product instructions, and ARMv7 NEON-VFPv4), bit-identical to the
 * reference (src/ref/kv_q8.c; contracts in kernels.inc). arch/avx2/kv_q8.c
 * has the same shape.
 *  - attn_scores_q8: 4 keys at a time, lane = key. A group's 32 products of
 *    one key are two SDOTs into 4 int32 lanes (__ARM_FEATURE_DOTPROD), or
 *    SMULL/SMLAL pairs into int16 lanes (each the sum of two products, at
 *    most 2 * 127 * 127 = 32258) added into int32 by SADDLP/SADALP; pairwise
 *    adds fold the 4 keys' lanes into one vector of their group sums. The
 *    int32 sums are exact, so their order is free; the float chain over the
 *    groups is the reference's, one vfmaq_f32 per group (|isum| <= 516128
 *    converts exactly). The rows of a call take each block of 4 keys in
 *    turn, so a block is read from memory once for all of them. No float of
 *    the chain is subnormal (q8.h's floor on the scales); the flush check
 *    guards the final product by the scale.
 *  - attn_wsum_q8: 16 outputs (half a group) of up to 4 rows (ARMv7: 2) in
 *    registers; position j's 16 values are widened to floats once for the
 *    rows and each row adds vfma(p_r[j] * d_j[g], (float)q_j, acc) in
 *    increasing j, the factor one scalar product as in the reference.
 *    Values past dim are the row's zero padding: computed, not stored.
 * ARMv7 flushes subnormals (a tiny factor p * d, a tiny sum): a block of
 * scores that flushed, or rows of weighted sums, are recomputed by the
 * reference (kernels_neon.h, "the flush check"). */
#include <string.h>

#include "kernels_neon.h"

enum { G = NGPT_Q8_GROUP, KEYS = 4 };
#if defined(__aarch64__)
enum { WSUM_ROWS = 4 };         /* 16 accumulators + 4 values + the factors */
#else
enum { WSUM_ROWS = 2 };         /* ARMv7, 16 registers: 8 accumulators + 4 values */
#endif

static inline float scale_at(const int8_t *row, int groups, int g)
{
    float d;
    memcpy(&d, (const unsigned char *)row + (size_t)groups * G + 4 * (size_t)g, sizeof d);
    return d;
}

/* ---- attn_scores_q8 */

/* Partial int32 sums of one group's 32 products (their sum is the group's). */
static inline int32x4_t group_partials(int8x16_t q0, int8x16_t q1, const int8_t *kg)
{
    const int8x16_t k0 = vld1q_s8(kg), k1 = vld1q_s8(kg + 16);
#if defined(__ARM_FEATURE_DOTPROD)
    return vdotq_s32(vdotq_s32(vdupq_n_s32(0), q0, k0), q1, k1);
#else
    const int16x8_t a = vmlal_s8(vmull_s8(vget_low_s8(q0), vget_low_s8(k0)), vget_high_s8(q0), vget_high_s8(k0));
    const int16x8_t b = vmlal_s8(vmull_s8(vget_low_s8(q1), vget_low_s8(k1)), vget_high_s8(q1), vget_high_s8(k1));
    return vpadalq_s16(vpaddlq_s16(a), b);
#endif
}

/* The lane sums of a, b, c, d as one vector (a's in lane 0). */
static inline int32x4_t fold4(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d)
{
#if defined(__aarch64__)
    return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d));
#else
    const int32x2_t ab = vpadd_s32(vpadd_s32(vget_low_s32(a), vget_high_s32(a)),
                                   vpadd_s32(vget_low_s32(b), vget_high_s32(b)));
    const int32x2_t cd = vpadd_s32(vpadd_s32(vget_low_s32(c), vget_high_s32(c)),
                                   vpadd_s32(vget_low_s32(d), vget_high_s32(d)));
    return vcombine_s32(ab, cd);
#endif
}

/* One query's scores against keys k_0..k_3 (lane = key), times scale. */
static inline float32x4_t scores4(const int8_t *q, const int8_t *k, ptrdiff_t k_stride, int groups,
                                  float scale)
{
    const int8_t *k1 = k + k_stride, *k2 = k1 + k_stride, *k3 = k2 + k_stride;
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int g = 0; g < groups; g++) {
        const int8x16_t q0 = vld1q_s8(q + g * G), q1 = vld1q_s8(q + g * G + 16);
        const int32x4_t isum = fold4(group_partials(q0, q1, k + g * G), group_partials(q0, q1, k1 + g * G),
                                     group_partials(q0, q1, k2 + g * G), group_partials(q0, q1, k3 + g * G));
        const float dk[KEYS] = {scale_at(k, groups, g), scale_at(k1, groups, g), scale_at(k2, groups, g),
                                scale_at(k3, groups, g)};
        const float32x4_t d = vmulq_f32(vdupq_n_f32(scale_at(q, groups, g)), vld1q_f32(dk));
        acc = vfmaq_f32(acc, vcvtq_f32_s32(isum), d);
    }
    return vmulq_f32(acc, vdupq_n_f32(scale));
}

void ngpt_f32_attn_scores_q8__neon(float *s, ptrdiff_t s_stride, const int8_t *q, ptrdiff_t q_stride,
                                   int rows, const int8_t *k, ptrdiff_t k_stride, int n, int step,
                                   int dim, float scale)
{
    neon_flags_clear();
    const int groups = ngpt_q8_groups(dim), nmax = n + step * (rows - 1);
    for (int j = 0; j < nmax; j += KEYS)
        for (int r = 0; r < rows; r++) {
            const int keep = n + step * r - j;   /* keys of this block row r sees */
            float *sr = s + r * s_stride + j;
            const int8_t *qr = q + r * q_stride, *kj = k + j * k_stride;
            if (keep < KEYS) {
                if (keep > 0)
                    ngpt_f32_attn_scores_q8_ref(sr, 0, qr, 0, 1, kj, k_stride, keep, 1, dim, scale);
                continue;
            }
            const float32x4_t sj = scores4(qr, kj, k_stride, groups, scale);
            if (neon_flushed1(sj)) {
                ngpt_f32_attn_scores_q8_ref(sr, 0, qr, 0, 1, kj, k_stride, KEYS, 1, dim, scale);
                neon_flags_clear();
                continue;
            }
            vst1q_f32(sr, sj);
        }
}

/* ---- attn_wsum_q8 */

/* Adds position j (its row vj) to outputs c..c+15 of rows first..R-1. */
static inline __attribute__((always_inline)) void
wsum_step(const int R, int first, float32x4_t acc[WSUM_ROWS][4], const float *p, ptrdiff_t p_stride,
          const int8_t *vj, int j, int c, int groups)
{
    const float d = scale_at(vj, groups, c / G);
    const int8x16_t x = vld1q_s8(vj + c);
    const int16x8_t lo = vmovl_s8(vget_low_s8(x)), hi = vmovl_s8(vget_high_s8(x));
    const float32x4_t x0 = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
    const float32x4_t x1 = vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo)));
    const float32x4_t x2 = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
    const float32x4_t x3 = vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi)));
    UNROLL
    for (int r = first; r < R; r++) {
        /* the factor on the scalar unit (ARMv7's VFP keeps a subnormal) */
        const float f = p[r * p_stride + j] * d;
#if defined(__aarch64__)
        const float32x2_t fb = vdup_n_f32(f);
        acc[r][0] = vfmaq_lane_f32(acc[r][0], x0, fb, 0);
        acc[r][1] = vfmaq_lane_f32(acc[r][1], x1, fb, 0);
        acc[r][2] = vfmaq_lane_f32(acc[r][2], x2, fb, 0);
        acc[r][3] = vfmaq_lane_f32(acc[r][3], x3, fb, 0);
#else
        const float32x4_t fb = vdupq_n_f32(f);
        acc[r][0] = vfmaq_f32(acc[r][0], fb, x0);
        acc[r][1] = vfmaq_f32(acc[r][1], fb, x1);
        acc[r][2] = vfmaq_f32(acc[r][2], fb, x2);
        acc[r][3] = vfmaq_f32(acc[r][3], fb, x3);
#endif
    }
}

/* Outputs c..c+15 (those below dim) of R rows, row r seeing n + step*r
 * positions: the positions every row sees for all, then (step 1) position
 * n + t for the rows after t. */
static inline __attribute__((always_inline)) void
wsum_cols(const int R, float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
          const int8_t *v, ptrdiff_t v_stride, int n, int step, int dim, int c)
{
    const int groups = ngpt_q8_groups(dim);
    float32x4_t acc[WSUM_ROWS][4];
    UNROLL
    for (int r = 0; r < R; r++)
        UNROLL
        for (int i = 0; i < 4; i++) acc[r][i] = vdupq_n_f32(0.0f);
    for (int j = 0; j < n; j++) wsum_step(R, 0, acc, p, p_stride, v + j * v_stride, j, c, groups);
    if (step)
        UNROLL
        for (int t = 0; t + 1 < R; t++)
            wsum_step(R, t + 1, acc, p, p_stride, v + (n + t) * v_stride, n + t, c, groups);
    const int nd = dim - c < 16 ? dim - c : 16;
    UNROLL
    for (int r = 0; r < R; r++) {
        float *oc = o + r * o_stride + c;
        if (nd == 16) {
            neon_store16(oc, acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
        } else {
            float t[16];
            neon_store16(t, acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
            memcpy(oc, t, (size_t)nd * sizeof(float));
        }
    }
}

/* Every output of R rows; rows whose sums flushed (ARMv7) are recomputed
 * by the reference (each output is written before, so it is rewritten). */
#define WSUM_FN(R)                                                                          \
    static __attribute__((noinline)) void wsum_rows##R(float *o, ptrdiff_t o_stride,        \
                                                        const float *p, ptrdiff_t p_stride, \
                                                        const int8_t *v, ptrdiff_t v_stride, \
                                                        int n, int step, int dim)           \
    {                                                                                       \
        for (int c = 0; c < dim; c += 16)                                                   \
            wsum_cols(R, o, o_stride, p, p_stride, v, v_stride, n, step, dim, c);           \
        if (neon_flags_set()) {                                                             \
            ngpt_f32_attn_wsum_q8_ref(o, o_stride, p, p_stride, R, v, v_stride, n, step, dim); \
            neon_flags_clear();                                                             \
        }                                                                                   \
    }
WSUM_FN(1) WSUM_FN(2)
#if defined(__aarch64__)
WSUM_FN(3) WSUM_FN(4)
#endif

void ngpt_f32_attn_wsum_q8__neon(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                                 int rows, const int8_t *v, ptrdiff_t v_stride, int n, int step,
                                 int dim)
{
    neon_flags_clear();
    for (int r = 0; r < rows; r += WSUM_ROWS) {
        float *orow = o + r * o_stride;
        const float *prow = p + r * p_stride;
        const int nr = n + step * r;
        switch (rows - r < WSUM_ROWS ? rows - r : WSUM_ROWS) {
#if defined(__aarch64__)
        case 4: wsum_rows4(orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim); break;
        case 3: wsum_rows3(orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim); break;
#endif
        case 2: wsum_rows2(orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim); break;
        case 1: wsum_rows1(orow, o_stride, prow, p_stride, v, v_stride, nr, step, dim); break;
        default: break;
        }
    }
}
