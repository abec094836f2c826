/* gemm.c — NEON matrix product, bit-identical to ngpt_f32_gemm_ref.
 *
 * Vectorised across outputs only: a tile of 4 rows x 8 columns keeps eight
 * float32x4_t accumulators, each lane one output C(i,j), and advances them
 * with one vfmaq_f32 per k (== fmaf per lane) in increasing k from +0.0f, so
 * every chain is the reference's. The columns come from an 8-wide panel:
 * B's own rows when b_cs == 1 (backward), else a packed copy of the panel
 * (any strides: a Linear's W stored (out, in) has b_rs = 1, b_cs = K);
 * partial panels are packed with zero padding and only valid lanes stored.
 * Fewer than 4 rows (decode) against a W layout transpose 4x4 blocks in
 * registers instead of packing (row_w8).
 * A panel that would need packing more than PACK_K rows of k (128 KiB of
 * stack) is left to the reference; unpacked panels (b_cs == 1, e.g. weight
 * gradients with k = B*T) have no limit.
 * ARMv7: a tile whose chains or sums flushed is recomputed by the reference
 * before it is stored (panel_ref; kernels_neon.h, "the flush check"). */
#include <arm_neon.h>

#include "kernels_neon.h"

enum { PACK_K = 4096 };

/* The reference's store() of a row's nv <= 8 valid columns (lanes 0-3 and
 * 4-7): the bias, then C. A full row is summed in registers (finish8),
 * checked for flushes with its tile (ARMv7), then stored (put8); a partial
 * row is summed in scalar as it is stored. */
static inline void finish8(const float *c, float32x4_t *a0, float32x4_t *a1, const float *bias,
                           int nv, bool accumulate)
{
    if (nv != 8) return;
    if (bias) {
        *a0 = vaddq_f32(*a0, vld1q_f32(bias));
        *a1 = vaddq_f32(*a1, vld1q_f32(bias + 4));
    }
    if (accumulate) {
        *a0 = vaddq_f32(vld1q_f32(c), *a0);
        *a1 = vaddq_f32(vld1q_f32(c + 4), *a1);
    }
}

static inline void put8(float *c, float32x4_t a0, float32x4_t a1, const float *bias, int nv,
                        bool accumulate)
{
    if (nv == 8) {
        vst1q_f32(c, a0);
        vst1q_f32(c + 4, a1);
        return;
    }
    float t[8];
    vst1q_f32(t, a0);
    vst1q_f32(t + 4, a1);
    for (int j = 0; j < nv; j++) {
        float acc = t[j];
        if (bias) acc = acc + bias[j];
        c[j] = accumulate ? c[j] + acc : acc;
    }
}

/* Rows i..i+rows-1 of a panel by the reference: a tile whose chains or sums
 * flushed on ARMv7 (kernels_neon.h, "the flush check"), before it is stored. */
static void panel_ref(int i, int rows, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                      const float *bp, ptrdiff_t ldb, const float *bias, float *c,
                      ptrdiff_t c_rs, int nv, bool accumulate)
{
    ngpt_f32_gemm_ref(rows, nv, k, a + i * a_rs, a_rs, a_cs, bp, ldb, 1, bias, c + i * c_rs, c_rs,
                      accumulate);
    neon_flags_clear();
}

/* All m rows against one panel: bp[kk*ldb + jj] = B(kk, j0+jj), jj < 8. */
static void panel(int m, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                  ptrdiff_t ldb, const float *bias, float *c, ptrdiff_t c_rs, int nv,
                  bool accumulate)
{
    int i = 0;
    for (; i + 4 <= m; i += 4) {
        const float *a0 = a + i * a_rs, *a1 = a0 + a_rs, *a2 = a1 + a_rs, *a3 = a2 + a_rs;
        float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c10 = c00, c11 = c00;
        float32x4_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;
        const float *bk = bp;
        for (int kk = 0; kk < k; kk++, bk += ldb) {
            const float32x4_t b0 = vld1q_f32(bk), b1 = vld1q_f32(bk + 4);
            const ptrdiff_t o = kk * a_cs;
            float32x4_t v = vdupq_n_f32(a0[o]);
            c00 = vfmaq_f32(c00, v, b0);
            c01 = vfmaq_f32(c01, v, b1);
            v = vdupq_n_f32(a1[o]);
            c10 = vfmaq_f32(c10, v, b0);
            c11 = vfmaq_f32(c11, v, b1);
            v = vdupq_n_f32(a2[o]);
            c20 = vfmaq_f32(c20, v, b0);
            c21 = vfmaq_f32(c21, v, b1);
            v = vdupq_n_f32(a3[o]);
            c30 = vfmaq_f32(c30, v, b0);
            c31 = vfmaq_f32(c31, v, b1);
        }
        float *ci = c + i * c_rs;
        finish8(ci, &c00, &c01, bias, nv, accumulate);
        finish8(ci + c_rs, &c10, &c11, bias, nv, accumulate);
        finish8(ci + 2 * c_rs, &c20, &c21, bias, nv, accumulate);
        finish8(ci + 3 * c_rs, &c30, &c31, bias, nv, accumulate);
        if (neon_flushed(c00, c01, c10, c11) || neon_flushed(c20, c21, c30, c31)) {
            panel_ref(i, 4, k, a, a_rs, a_cs, bp, ldb, bias, c, c_rs, nv, accumulate);
            continue;
        }
        put8(ci, c00, c01, bias, nv, accumulate);
        put8(ci + c_rs, c10, c11, bias, nv, accumulate);
        put8(ci + 2 * c_rs, c20, c21, bias, nv, accumulate);
        put8(ci + 3 * c_rs, c30, c31, bias, nv, accumulate);
    }
    for (; i < m; i++) {
        const float *ai = a + i * a_rs;
        float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0;
        const float *bk = bp;
        for (int kk = 0; kk < k; kk++, bk += ldb) {
            const float32x4_t v = vdupq_n_f32(ai[kk * a_cs]);
            c0 = vfmaq_f32(c0, v, vld1q_f32(bk));
            c1 = vfmaq_f32(c1, v, vld1q_f32(bk + 4));
        }
        finish8(c + i * c_rs, &c0, &c1, bias, nv, accumulate);
        if (neon_flushed2(c0, c1))
            panel_ref(i, 1, k, a, a_rs, a_cs, bp, ldb, bias, c, c_rs, nv, accumulate);
        else
            put8(c + i * c_rs, c0, c1, bias, nv, accumulate);
    }
}

/* k-major 4x4 transpose: r_l = 4 consecutive k of column l -> t_x = column
 * values at k offset x. */
static inline void transpose4(float32x4_t r0, float32x4_t r1, float32x4_t r2, float32x4_t r3,
                              float32x4_t t[4])
{
    const float32x4x2_t p01 = vtrnq_f32(r0, r1), p23 = vtrnq_f32(r2, r3);
    t[0] = vcombine_f32(vget_low_f32(p01.val[0]), vget_low_f32(p23.val[0]));
    t[1] = vcombine_f32(vget_low_f32(p01.val[1]), vget_low_f32(p23.val[1]));
    t[2] = vcombine_f32(vget_high_f32(p01.val[0]), vget_high_f32(p23.val[0]));
    t[3] = vcombine_f32(vget_high_f32(p01.val[1]), vget_high_f32(p23.val[1]));
}

/* One row against 8 columns of a W-layout B (b_rs == 1: column j is the
 * contiguous row b + j*b_cs), without packing: a decode step has one row, so
 * a packed panel would be used once. 4x4 blocks are transposed in registers;
 * each lane still takes k = 0, 1, 2, ... in order. */
static void row_w8(int k, const float *ai, ptrdiff_t a_cs, const float *b, ptrdiff_t b_cs,
                   const float *bias, float *c, bool accumulate)
{
    const float *w[8];
    for (int jj = 0; jj < 8; jj++) w[jj] = b + jj * b_cs;
    float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0;
    int kk = 0;
    for (; kk + 4 <= k; kk += 4) {
        float32x4_t t[4], u[4];
        transpose4(vld1q_f32(w[0] + kk), vld1q_f32(w[1] + kk), vld1q_f32(w[2] + kk),
                   vld1q_f32(w[3] + kk), t);
        transpose4(vld1q_f32(w[4] + kk), vld1q_f32(w[5] + kk), vld1q_f32(w[6] + kk),
                   vld1q_f32(w[7] + kk), u);
        for (int x = 0; x < 4; x++) {
            const float32x4_t v = vdupq_n_f32(ai[(kk + x) * a_cs]);
            c0 = vfmaq_f32(c0, v, t[x]);
            c1 = vfmaq_f32(c1, v, u[x]);
        }
    }
    for (; kk < k; kk++) {
        float lo[4] = {w[0][kk], w[1][kk], w[2][kk], w[3][kk]};
        float hi[4] = {w[4][kk], w[5][kk], w[6][kk], w[7][kk]};
        const float32x4_t v = vdupq_n_f32(ai[kk * a_cs]);
        c0 = vfmaq_f32(c0, v, vld1q_f32(lo));
        c1 = vfmaq_f32(c1, v, vld1q_f32(hi));
    }
    finish8(c, &c0, &c1, bias, 8, accumulate);
    if (neon_flushed2(c0, c1)) {
        ngpt_f32_gemm_ref(1, 8, k, ai, 0, a_cs, b, 1, b_cs, bias, c, 0, accumulate);
        neon_flags_clear();
        return;
    }
    put8(c, c0, c1, bias, 8, accumulate);
}

void ngpt_f32_gemm__neon(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate)
{
    neon_flags_clear();
    float pack[PACK_K * 8];
    for (int j = 0; j < n; j += 8) {
        const int nv = n - j < 8 ? n - j : 8;
        const float *bj = bias ? bias + j : NULL;
        if (nv == 8 && b_cs == 1) {
            panel(m, k, a, a_rs, a_cs, b + j, b_rs, bj, c + j, c_rs, nv, accumulate);
            continue;
        }
        if (nv == 8 && b_rs == 1 && m < 4) {
            for (int i = 0; i < m; i++)
                row_w8(k, a + i * a_rs, a_cs, b + j * b_cs, b_cs, bj, c + i * c_rs + j, accumulate);
            continue;
        }
        if (k > PACK_K) {   /* the same chains, from the reference */
            ngpt_f32_gemm_ref(m, nv, k, a, a_rs, a_cs, b + j * b_cs, b_rs, b_cs, bj, c + j, c_rs,
                              accumulate);
            continue;
        }
        for (int kk = 0; kk < k; kk++) {
            const float *src = b + kk * b_rs + j * b_cs;
            float *dst = pack + kk * 8;
            for (int jj = 0; jj < 8; jj++) dst[jj] = jj < nv ? src[jj * b_cs] : 0.0f;
        }
        panel(m, k, a, a_rs, a_cs, pack, 8, bj, c + j, c_rs, nv, accumulate);
    }
}
