/* layernorm.c — NEON LayerNorm and RMSNorm forward and backward, bit-identical to the
 * reference: row sums in the canonical 8 lanes (two float32x4_t, the tail
 * added to its lanes in scalar), the per-element formulas with vfmaq_f32
 * exactly where the reference has fmaf; 1/sqrtf and the divides by c stay
 * scalar (once per row). Same shape as arch/avx2/layernorm.c (one __m256
 * there is two float32x4_t here); elementwise passes go 4 lanes a step.
 * ARMv7 (kernels_neon.h, "the flush check"): a forward row that flushed (a
 * near-constant row: tiny deviations, subnormal squares) is recomputed by
 * the reference, its output not being an input; the backward, which
 * accumulates, checks its sums before it writes anything and each block of
 * 4 elements before it stores it; the weight and bias gradients check each
 * block of columns before they store it. */
#include <math.h>
#include <arm_neon.h>

#include "kernels_neon.h"

/* One row; returns false if it flushed (ARMv7). */
static bool layernorm_row(float *yr, float *mean, float *rstd, const float *xr, const float *w,
                          const float *b, int c, float eps)
{
    const float mu = ngpt_f32_rsum__neon(xr, (size_t)c) / (float)c;
    neon_flags_clear();
    const float32x4_t muv = vdupq_n_f32(mu);
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    int i = 0;
    for (; i + 8 <= c; i += 8) {
        const float32x4_t d0 = vsubq_f32(vld1q_f32(xr + i), muv);
        const float32x4_t d1 = vsubq_f32(vld1q_f32(xr + i + 4), muv);
        lo = vfmaq_f32(lo, d0, d0);
        hi = vfmaq_f32(hi, d1, d1);
    }
    float p[NGPT_LANES];
    vst1q_f32(p, lo);
    vst1q_f32(p + 4, hi);
    for (int l = 0; i < c; i++, l++) {
        const float d = xr[i] - mu;
        p[l] = fmaf(d, d, p[l]);
    }
    const float var = ngpt_lanes_combine(p) / (float)c;
    const float rs = 1.0f / sqrtf(var + eps);
    const float32x4_t rsv = vdupq_n_f32(rs);
    float32x4_t last = rsv;
    for (i = 0; i + 4 <= c; i += 4) {
        const float32x4_t xh = vmulq_f32(vsubq_f32(vld1q_f32(xr + i), muv), rsv);
        last = vfmaq_f32(vld1q_f32(b + i), xh, vld1q_f32(w + i));
        vst1q_f32(yr + i, last);
    }
    for (; i < c; i++) yr[i] = fmaf((xr[i] - mu) * rs, w[i], b[i]);
    if (neon_flushed(lo, hi, last, last)) return false;
    if (mean) *mean = mu;
    if (rstd) *rstd = rs;
    return true;
}

void ngpt_f32_layernorm_fwd__neon(float *out, float *mean, float *rstd, const float *x,
                                  const float *w, const float *b, size_t rows, int c, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c;
        float *yr = out + r * (size_t)c, *mr = mean ? mean + r : NULL, *sr = rstd ? rstd + r : NULL;
        if (!layernorm_row(yr, mr, sr, xr, w, b, c, eps)) {
            ngpt_f32_layernorm_fwd_ref(yr, mr, sr, xr, w, b, 1, c, eps);
            neon_flags_clear();
        }
    }
}

/* dx of elements [i0, i1) of a backward row once m1, m2 are known, in scalar. */
static void layernorm_bwd_range(float *dxr, const float *dyr, const float *xr, const float *w,
                                float mu, float rs, float m1, float m2, int i0, int i1)
{
    for (int i = i0; i < i1; i++) {
        const float xhat = (xr[i] - mu) * rs, g = dyr[i] * w[i];
        dxr[i] = fmaf(rs, fmaf(-xhat, m2, g - m1), dxr[i]);
    }
}

void ngpt_f32_layernorm_bwd__neon(float *dx, const float *dy, const float *x, const float *mean,
                                  const float *rstd, const float *w, size_t rows, int c)
{
    for (size_t r = 0; r < rows; r++) {
        neon_flags_clear();
        const float *xr = x + r * (size_t)c, *dyr = dy + r * (size_t)c;
        float *dxr = dx + r * (size_t)c;
        const float mu = mean[r], rs = rstd[r];
        const float32x4_t muv = vdupq_n_f32(mu), rsv = vdupq_n_f32(rs);
        float32x4_t s1lo = vdupq_n_f32(0.0f), s1hi = s1lo, s2lo = s1lo, s2hi = s1lo;
        int i = 0;
        for (; i + 8 <= c; i += 8) {
            const float32x4_t xh0 = vmulq_f32(vsubq_f32(vld1q_f32(xr + i), muv), rsv);
            const float32x4_t xh1 = vmulq_f32(vsubq_f32(vld1q_f32(xr + i + 4), muv), rsv);
            const float32x4_t g0 = vmulq_f32(vld1q_f32(dyr + i), vld1q_f32(w + i));
            const float32x4_t g1 = vmulq_f32(vld1q_f32(dyr + i + 4), vld1q_f32(w + i + 4));
            s1lo = vaddq_f32(s1lo, g0);
            s1hi = vaddq_f32(s1hi, g1);
            s2lo = vfmaq_f32(s2lo, g0, xh0);
            s2hi = vfmaq_f32(s2hi, g1, xh1);
        }
        if (neon_flushed(s1lo, s1hi, s2lo, s2hi)) {     /* nothing of this row is written yet */
            ngpt_f32_layernorm_bwd_ref(dxr, dyr, xr, mean + r, rstd + r, w, 1, c);
            continue;
        }
        float l1[NGPT_LANES], l2[NGPT_LANES];
        vst1q_f32(l1, s1lo), vst1q_f32(l1 + 4, s1hi);
        vst1q_f32(l2, s2lo), vst1q_f32(l2 + 4, s2hi);
        for (int l = 0; i < c; i++, l++) {
            const float xhat = (xr[i] - mu) * rs, g = dyr[i] * w[i];
            l1[l] = l1[l] + g;
            l2[l] = fmaf(g, xhat, l2[l]);
        }
        const float m1 = ngpt_lanes_combine(l1) / (float)c;
        const float m2 = ngpt_lanes_combine(l2) / (float)c;
        const float32x4_t m1v = vdupq_n_f32(m1), m2v = vdupq_n_f32(m2);
        neon_flags_clear();     /* the scalar tail may have left one */
        for (i = 0; i + 4 <= c; i += 4) {
            const float32x4_t xh = vmulq_f32(vsubq_f32(vld1q_f32(xr + i), muv), rsv);
            const float32x4_t g = vmulq_f32(vld1q_f32(dyr + i), vld1q_f32(w + i));
            /* fmaf(-xhat, m2, g - m1): vfms negates xh inside the fma, bit
             * for bit the same (gcc builds ARMv7's vnegq_f32 from four VFP
             * negations through the stack) */
            const float32x4_t in = vfmsq_f32(vsubq_f32(g, m1v), xh, m2v);
            const float32x4_t dxi = vfmaq_f32(vld1q_f32(dxr + i), rsv, in);
            if (neon_flushed1(dxi)) {
                layernorm_bwd_range(dxr, dyr, xr, w, mu, rs, m1, m2, i, i + 4);
                neon_flags_clear();
                continue;
            }
            vst1q_f32(dxr + i, dxi);
        }
        layernorm_bwd_range(dxr, dyr, xr, w, mu, rs, m1, m2, i, c);
    }
}

/* 8 columns at a time keep their dw and db chains in registers over every
 * row (as arch/avx2/layernorm.c does with 16); then 4; the tail in scalar.
 * A block of columns that flushed is recomputed by the reference. */
void ngpt_f32_layernorm_bwd_wb__neon(float *dw, float *db, const float *dy, const float *x,
                                     ptrdiff_t ld, const float *mean, const float *rstd,
                                     size_t rows, int n)
{
    neon_flags_clear();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        float32x4_t w0 = vld1q_f32(dw + i), w1 = vld1q_f32(dw + i + 4);
        float32x4_t b0 = vld1q_f32(db + i), b1 = vld1q_f32(db + i + 4);
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + (ptrdiff_t)r * ld + i, *dyr = dy + (ptrdiff_t)r * ld + i;
            const float32x4_t muv = vdupq_n_f32(mean[r]), rsv = vdupq_n_f32(rstd[r]);
            const float32x4_t d0 = vld1q_f32(dyr), d1 = vld1q_f32(dyr + 4);
            w0 = vfmaq_f32(w0, d0, vmulq_f32(vsubq_f32(vld1q_f32(xr), muv), rsv));
            w1 = vfmaq_f32(w1, d1, vmulq_f32(vsubq_f32(vld1q_f32(xr + 4), muv), rsv));
            b0 = vaddq_f32(b0, d0);
            b1 = vaddq_f32(b1, d1);
        }
        if (neon_flushed(w0, w1, b0, b1)) {
            ngpt_f32_layernorm_bwd_wb_ref(dw + i, db + i, dy + i, x + i, ld, mean, rstd, rows, 8);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(dw + i, w0), vst1q_f32(dw + i + 4, w1);
        vst1q_f32(db + i, b0), vst1q_f32(db + i + 4, b1);
    }
    for (; i + 4 <= n; i += 4) {
        float32x4_t w0 = vld1q_f32(dw + i), b0 = vld1q_f32(db + i);
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + (ptrdiff_t)r * ld + i, *dyr = dy + (ptrdiff_t)r * ld + i;
            const float32x4_t muv = vdupq_n_f32(mean[r]), rsv = vdupq_n_f32(rstd[r]);
            const float32x4_t d0 = vld1q_f32(dyr);
            w0 = vfmaq_f32(w0, d0, vmulq_f32(vsubq_f32(vld1q_f32(xr), muv), rsv));
            b0 = vaddq_f32(b0, d0);
        }
        if (neon_flushed2(w0, b0)) {
            ngpt_f32_layernorm_bwd_wb_ref(dw + i, db + i, dy + i, x + i, ld, mean, rstd, rows, 4);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(dw + i, w0), vst1q_f32(db + i, b0);
    }
    if (i < n) ngpt_f32_layernorm_bwd_wb_ref(dw + i, db + i, dy + i, x + i, ld, mean, rstd, rows, n - i);
}

/* RMSNorm: one row; false if it flushed (ARMv7: the sum of squares of a
 * tiny row, or a product of the output; the flags are sticky, so one check
 * at the end covers the row, which is recomputed whole). */
static bool rmsnorm_row(float *yr, float *rstd, const float *xr, const float *w, int c, float eps)
{
    neon_flags_clear();
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    int i = 0;
    for (; i + 8 <= c; i += 8) {
        const float32x4_t x0 = vld1q_f32(xr + i), x1 = vld1q_f32(xr + i + 4);
        lo = vfmaq_f32(lo, x0, x0);
        hi = vfmaq_f32(hi, x1, x1);
    }
    float p[NGPT_LANES];
    vst1q_f32(p, lo);
    vst1q_f32(p + 4, hi);
    for (int l = 0; i < c; i++, l++) p[l] = fmaf(xr[i], xr[i], p[l]);
    const float rs = 1.0f / sqrtf(ngpt_lanes_combine(p) / (float)c + eps);
    const float32x4_t rsv = vdupq_n_f32(rs);
    float32x4_t a = rsv, b = rsv;
    for (i = 0; i + 4 <= c; i += 4) {
        a = vmulq_f32(vld1q_f32(xr + i), rsv);
        b = vmulq_f32(a, vld1q_f32(w + i));
        vst1q_f32(yr + i, b);
    }
    for (; i < c; i++) yr[i] = (xr[i] * rs) * w[i];
    if (neon_flushed(lo, hi, a, b)) return false;
    if (rstd) *rstd = rs;
    return true;
}

void ngpt_f32_rmsnorm_fwd__neon(float *out, float *rstd, const float *x, const float *w,
                                size_t rows, int c, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)c;
        float *yr = out + r * (size_t)c, *sr = rstd ? rstd + r : NULL;
        if (!rmsnorm_row(yr, sr, xr, w, c, eps)) {
            ngpt_f32_rmsnorm_fwd_ref(yr, sr, xr, w, 1, c, eps);
            neon_flags_clear();
        }
    }
}

static void rmsnorm_bwd_range(float *dxr, const float *dyr, const float *xr, const float *w,
                              float rs, float m, int i0, int i1)
{
    for (int i = i0; i < i1; i++) dxr[i] = fmaf(rs, fmaf(-(xr[i] * rs), m, dyr[i] * w[i]), dxr[i]);
}

void ngpt_f32_rmsnorm_bwd__neon(float *dx, const float *dy, const float *x, const float *rstd,
                                const float *w, size_t rows, int c)
{
    for (size_t r = 0; r < rows; r++) {
        neon_flags_clear();
        const float *xr = x + r * (size_t)c, *dyr = dy + r * (size_t)c;
        float *dxr = dx + r * (size_t)c;
        const float rs = rstd[r];
        const float32x4_t rsv = vdupq_n_f32(rs);
        float32x4_t lo = vdupq_n_f32(0.0f), hi = lo, g0 = lo, g1 = lo;
        int i = 0;
        for (; i + 8 <= c; i += 8) {
            const float32x4_t xh0 = vmulq_f32(vld1q_f32(xr + i), rsv);
            const float32x4_t xh1 = vmulq_f32(vld1q_f32(xr + i + 4), rsv);
            g0 = vmulq_f32(vld1q_f32(dyr + i), vld1q_f32(w + i));
            g1 = vmulq_f32(vld1q_f32(dyr + i + 4), vld1q_f32(w + i + 4));
            lo = vfmaq_f32(lo, g0, xh0);
            hi = vfmaq_f32(hi, g1, xh1);
        }
        if (neon_flushed(lo, hi, g0, g1)) {     /* nothing of this row is written yet */
            ngpt_f32_rmsnorm_bwd_ref(dxr, dyr, xr, rstd + r, w, 1, c);
            continue;
        }
        float l[NGPT_LANES];
        vst1q_f32(l, lo), vst1q_f32(l + 4, hi);
        for (int k = 0; i < c; i++, k++) l[k] = fmaf(dyr[i] * w[i], xr[i] * rs, l[k]);
        const float m = ngpt_lanes_combine(l) / (float)c;
        const float32x4_t mv = vdupq_n_f32(m);
        neon_flags_clear();     /* the scalar tail may have left one */
        for (i = 0; i + 4 <= c; i += 4) {
            const float32x4_t xh = vmulq_f32(vld1q_f32(xr + i), rsv);
            const float32x4_t g = vmulq_f32(vld1q_f32(dyr + i), vld1q_f32(w + i));
            /* fmaf(-xhat, m, g): vfms negates xh inside the fma, the same bits */
            const float32x4_t in = vfmsq_f32(g, xh, mv);
            const float32x4_t dxi = vfmaq_f32(vld1q_f32(dxr + i), rsv, in);
            if (neon_flushed(xh, g, in, dxi)) {
                rmsnorm_bwd_range(dxr, dyr, xr, w, rs, m, i, i + 4);
                neon_flags_clear();
                continue;
            }
            vst1q_f32(dxr + i, dxi);
        }
        rmsnorm_bwd_range(dxr, dyr, xr, w, rs, m, i, c);
    }
}

/* 8 columns at a time keep their dw chains in registers over every row,
 * then 4; the tail in scalar. A block that flushed is recomputed. */
void ngpt_f32_rmsnorm_bwd_w__neon(float *dw, const float *dy, const float *x, ptrdiff_t ld,
                                  const float *rstd, size_t rows, int n)
{
    neon_flags_clear();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        float32x4_t w0 = vld1q_f32(dw + i), w1 = vld1q_f32(dw + i + 4);
        float32x4_t h0 = w0, h1 = w1;
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + (ptrdiff_t)r * ld + i, *dyr = dy + (ptrdiff_t)r * ld + i;
            const float32x4_t rsv = vdupq_n_f32(rstd[r]);
            h0 = vmulq_f32(vld1q_f32(xr), rsv);
            h1 = vmulq_f32(vld1q_f32(xr + 4), rsv);
            w0 = vfmaq_f32(w0, vld1q_f32(dyr), h0);
            w1 = vfmaq_f32(w1, vld1q_f32(dyr + 4), h1);
        }
        if (neon_flushed(w0, w1, h0, h1)) {
            ngpt_f32_rmsnorm_bwd_w_ref(dw + i, dy + i, x + i, ld, rstd, rows, 8);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(dw + i, w0), vst1q_f32(dw + i + 4, w1);
    }
    for (; i + 4 <= n; i += 4) {
        float32x4_t w0 = vld1q_f32(dw + i), h0 = w0;
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + (ptrdiff_t)r * ld + i, *dyr = dy + (ptrdiff_t)r * ld + i;
            h0 = vmulq_f32(vld1q_f32(xr), vdupq_n_f32(rstd[r]));
            w0 = vfmaq_f32(w0, vld1q_f32(dyr), h0);
        }
        if (neon_flushed2(w0, h0)) {
            ngpt_f32_rmsnorm_bwd_w_ref(dw + i, dy + i, x + i, ld, rstd, rows, 4);
            neon_flags_clear();
            continue;
        }
        vst1q_f32(dw + i, w0);
    }
    if (i < n) ngpt_f32_rmsnorm_bwd_w_ref(dw + i, dy + i, x + i, ld, rstd, rows, n - i);
}
