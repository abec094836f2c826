/* attention.c — NEON attention scores, weighted sum and the outer-product
 * accumulation of their backward, bit-identical to the reference: every
 * output is one fmaf chain in increasing index order, lanes hold different
 * outputs, leftovers run the reference.
 *  - scores: 4 keys side by side (lane = key); a 4x4 block of keys x dims is
 *    transposed in registers so each fma adds q[d] * k_j[d] to key j's chain.
 *  - scores_t: 4 keys a vector (lane = key, kt's columns), chains over d.
 *  - wsum: 16 dims in four accumulators (lane = d), the chains run over keys j.
 *  - outer_acc: 4 dims a vector, one fma per element and row.
 * The multi-row kernels run their rows one at a time, row r over its n + r
 * keys (arch/avx2/attention.c tiles 4 rows at once, with 8 lanes).
 * ARMv7: outputs whose chains flushed are recomputed by the reference
 * before they are stored (kernels_neon.h, "the flush check"). */
#include <math.h>
#include <arm_neon.h>

#include "kernels_neon.h"

/* Scores of 4 keys at a time: 4x4 blocks of K (rows j, columns d) are
 * transposed so one vector holds k_j[d] for the 4 keys, and each lane's chain
 * gets fmaf(q[d], k_j[d], acc) for d = 0, 1, 2, ... */
void ngpt_f32_attn_scores__neon(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                                int n, int dim, float scale)
{
    neon_flags_clear();
    int j = 0;
    const int d4 = dim - dim % 4;
    for (; j + 4 <= n; j += 4) {
        const float *k0 = k + j * k_stride, *k1 = k0 + k_stride, *k2 = k1 + k_stride,
                    *k3 = k2 + k_stride;
        float32x4_t acc = vdupq_n_f32(0.0f);
        int d = 0;
        for (; d < d4; d += 4) {
            /* rows r0..r3 -> columns t0..t3 (t_x[l] = k_l[d+x]) */
            const float32x4x2_t p01 = vtrnq_f32(vld1q_f32(k0 + d), vld1q_f32(k1 + d));
            const float32x4x2_t p23 = vtrnq_f32(vld1q_f32(k2 + d), vld1q_f32(k3 + d));
            const float32x4_t t0 = vcombine_f32(vget_low_f32(p01.val[0]), vget_low_f32(p23.val[0]));
            const float32x4_t t1 = vcombine_f32(vget_low_f32(p01.val[1]), vget_low_f32(p23.val[1]));
            const float32x4_t t2 = vcombine_f32(vget_high_f32(p01.val[0]), vget_high_f32(p23.val[0]));
            const float32x4_t t3 = vcombine_f32(vget_high_f32(p01.val[1]), vget_high_f32(p23.val[1]));
            acc = vfmaq_f32(acc, vdupq_n_f32(q[d]), t0);
            acc = vfmaq_f32(acc, vdupq_n_f32(q[d + 1]), t1);
            acc = vfmaq_f32(acc, vdupq_n_f32(q[d + 2]), t2);
            acc = vfmaq_f32(acc, vdupq_n_f32(q[d + 3]), t3);
        }
        for (; d < dim; d++) {
            float32x4_t t = vdupq_n_f32(k0[d]);
            t = vsetq_lane_f32(k1[d], t, 1);
            t = vsetq_lane_f32(k2[d], t, 2);
            t = vsetq_lane_f32(k3[d], t, 3);
            acc = vfmaq_f32(acc, vdupq_n_f32(q[d]), t);
        }
        const float32x4_t sj = vmulq_f32(acc, vdupq_n_f32(scale));
        if (neon_flushed1(sj)) {
            ngpt_f32_attn_scores_ref(s + j, q, k0, k_stride, 4, dim, scale);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(s + j, sj);
    }
    ngpt_f32_attn_scores_ref(s + j, q, k + j * k_stride, k_stride, n - j, dim, scale);
}

/* One row of attn_scores_t: keys j..j+3 a vector, each lane's chain over d. */
static void scores_t_row(float *s, const float *q, const float *kt, ptrdiff_t kt_stride, int n,
                         int dim, float scale)
{
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (int d = 0; d < dim; d++)
            acc = vfmaq_f32(acc, vdupq_n_f32(q[d]), vld1q_f32(kt + d * kt_stride + j));
        const float32x4_t sj = vmulq_f32(acc, vdupq_n_f32(scale));
        if (neon_flushed1(sj)) {
            ngpt_f32_attn_scores_t_ref(s + j, 0, q, 0, 1, kt + j, kt_stride, 4, dim, scale);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(s + j, sj);
    }
    ngpt_f32_attn_scores_t_ref(s + j, 0, q, 0, 1, kt + j, kt_stride, n - j, dim, scale);
}

void ngpt_f32_attn_scores_t__neon(float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
                                  int rows, const float *kt, ptrdiff_t kt_stride, int n, int dim,
                                  float scale)
{
    neon_flags_clear();
    for (int r = 0; r < rows; r++)
        scores_t_row(s + r * s_stride, q + r * q_stride, kt, kt_stride, n + r, dim, scale);
}

/* One row of attn_wsum: o[d..d+16) at a time, four accumulators run over j
 * together. */
static void wsum_row(float *o, const float *p, const float *v, ptrdiff_t v_stride, int n, int dim)
{
    neon_flags_clear();
    int d = 0;
    for (; d + 16 <= dim; d += 16) {
        float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
        for (int j = 0; j < n; j++) {
            const float *vj = v + j * v_stride + d;
            const float32x4_t pj = vdupq_n_f32(p[j]);
            a0 = vfmaq_f32(a0, pj, vld1q_f32(vj));
            a1 = vfmaq_f32(a1, pj, vld1q_f32(vj + 4));
            a2 = vfmaq_f32(a2, pj, vld1q_f32(vj + 8));
            a3 = vfmaq_f32(a3, pj, vld1q_f32(vj + 12));
        }
        if (neon_flushed(a0, a1, a2, a3)) {
            ngpt_f32_attn_wsum_ref(o + d, 0, p, 0, 1, v + d, v_stride, n, 16);
            neon_flags_clear();
            continue;
        }
        neon_store16(o + d, a0, a1, a2, a3);
    }
    for (; d + 4 <= dim; d += 4) {
        float32x4_t a0 = vdupq_n_f32(0.0f);
        for (int j = 0; j < n; j++)
            a0 = vfmaq_f32(a0, vdupq_n_f32(p[j]), vld1q_f32(v + j * v_stride + d));
        if (neon_flushed1(a0)) {
            ngpt_f32_attn_wsum_ref(o + d, 0, p, 0, 1, v + d, v_stride, n, 4);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(o + d, a0);
    }
    ngpt_f32_attn_wsum_ref(o + d, 0, p, 0, 1, v + d, v_stride, n, dim - d);
}

void ngpt_f32_attn_wsum__neon(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                              int rows, const float *v, ptrdiff_t v_stride, int n, int dim)
{
    neon_flags_clear();
    for (int r = 0; r < rows; r++) wsum_row(o + r * o_stride, p + r * p_stride, v, v_stride, n + r, dim);
}

/* One row of outer_acc: 16 elements a block (4 a step after them), each
 * block checked before it is stored. */
static void outer_row(float *out, ptrdiff_t out_stride, const float *w, const float *x, int n,
                      int dim)
{
    for (int j = 0; j < n; j++) {
        float *o = out + j * out_stride;
        const float wj = w[j];
        const float32x4_t wv = vdupq_n_f32(wj);
        int d = 0;
        for (; d + 16 <= dim; d += 16) {
            const float32x4_t o0 = vfmaq_f32(vld1q_f32(o + d), wv, vld1q_f32(x + d));
            const float32x4_t o1 = vfmaq_f32(vld1q_f32(o + d + 4), wv, vld1q_f32(x + d + 4));
            const float32x4_t o2 = vfmaq_f32(vld1q_f32(o + d + 8), wv, vld1q_f32(x + d + 8));
            const float32x4_t o3 = vfmaq_f32(vld1q_f32(o + d + 12), wv, vld1q_f32(x + d + 12));
            if (neon_flushed(o0, o1, o2, o3)) {
                ngpt_f32_outer_acc_ref(o + d, 0, w + j, 0, x + d, 0, 1, 1, 16);
                neon_flags_clear();
                continue;
            }
            neon_store16(o + d, o0, o1, o2, o3);
        }
        for (; d + 4 <= dim; d += 4) {
            const float32x4_t o0 = vfmaq_f32(vld1q_f32(o + d), wv, vld1q_f32(x + d));
            if (neon_flushed1(o0)) {
                ngpt_f32_outer_acc_ref(o + d, 0, w + j, 0, x + d, 0, 1, 1, 4);
                neon_flags_clear();
                continue;
            }
            vst1q_f32(o + d, o0);
        }
        ngpt_f32_outer_acc_ref(o + d, 0, w + j, 0, x + d, 0, 1, 1, dim - d);
    }
}

void ngpt_f32_outer_acc__neon(float *out, ptrdiff_t out_stride, const float *w, ptrdiff_t w_stride,
                              const float *x, ptrdiff_t x_stride, int rows, int n, int dim)
{
    neon_flags_clear();
    for (int r = 0; r < rows; r++)
        outer_row(out, out_stride, w + r * w_stride, x + r * x_stride, n + r, dim);
}
