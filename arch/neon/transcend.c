/* transcend.c — NEON GELU, softmax and cross-entropy through SLEEF's vector
 * finz_ functions, which return the bits of the scalar
 * Sleef_finz_<f>f1_u10purecfma the reference calls. The row max stays the
 * reference's scalar loop (NaN and signed-zero behaviour); the exp cutoff is
 * a lane select; sums are the canonical 8 lanes; tails call the scalar
 * functions. Divides are vdivq_f32, so these are AArch64-only. */
#include <math.h>
#include <arm_neon.h>
#include <sleef.h>

#include "kernels_neon.h"

#if defined(__aarch64__)
#define VEXP Sleef_finz_expf4_u10advsimd
#define VERF Sleef_finz_erff4_u10advsimd

static const float RSQRT2 = 0.70710678118654752f, RSQRT2PI = 0.39894228040143268f;

void ngpt_f32_gelu_fwd__neon(float *y, const float *x, size_t n)
{
    const float32x4_t half = vdupq_n_f32(0.5f), one = vdupq_n_f32(1.0f), k = vdupq_n_f32(RSQRT2);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        vst1q_f32(y + i, vmulq_f32(vmulq_f32(half, v), vaddq_f32(one, VERF(vmulq_f32(v, k)))));
    }
    for (; i < n; i++) {
        const float v = x[i];
        y[i] = (0.5f * v) * (1.0f + Sleef_finz_erff1_u10purecfma(v * RSQRT2));
    }
}

void ngpt_f32_gelu_bwd__neon(float *dx, const float *x, const float *dy, size_t n)
{
    const float32x4_t half = vdupq_n_f32(0.5f), mhalf = vdupq_n_f32(-0.5f),
                      one = vdupq_n_f32(1.0f), k = vdupq_n_f32(RSQRT2), kp = vdupq_n_f32(RSQRT2PI);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        const float32x4_t cdf = vmulq_f32(half, vaddq_f32(one, VERF(vmulq_f32(v, k))));
        const float32x4_t pdf = vmulq_f32(VEXP(vmulq_f32(vmulq_f32(mhalf, v), v)), kp);
        vst1q_f32(dx + i, vmulq_f32(vld1q_f32(dy + i), vfmaq_f32(cdf, v, pdf)));
    }
    for (; i < n; i++) {
        const float v = x[i];
        const float cdf = 0.5f * (1.0f + Sleef_finz_erff1_u10purecfma(v * RSQRT2));
        const float pdf = Sleef_finz_expf1_u10purecfma((-0.5f * v) * v) * RSQRT2PI;
        dx[i] = dy[i] * fmaf(v, pdf, cdf);
    }
}

static float row_max(const float *s, int n)
{
    float mx = s[0];
    for (int j = 1; j < n; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

static inline float32x4_t exp_terms(float32x4_t d)
{
    const uint32x4_t below = vcltq_f32(d, vdupq_n_f32(NGPT_EXP_CUTOFF));
    return vbslq_f32(below, vdupq_n_f32(0.0f), VEXP(d));
}

static inline float exp_term(float d)
{
    return d < NGPT_EXP_CUTOFF ? 0.0f : Sleef_finz_expf1_u10purecfma(d);
}

/* e_j = exp term of s_j - max, stored to e when e != NULL; returns the
 * canonical sum. */
static float exp_sum(float *e, const float *s, int n, float mx)
{
    const float32x4_t m = vdupq_n_f32(mx);
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const float32x4_t e0 = exp_terms(vsubq_f32(vld1q_f32(s + j), m));
        const float32x4_t e1 = exp_terms(vsubq_f32(vld1q_f32(s + j + 4), m));
        if (e) {
            vst1q_f32(e + j, e0);
            vst1q_f32(e + j + 4, e1);
        }
        lo = vaddq_f32(lo, e0);
        hi = vaddq_f32(hi, e1);
    }
    float lanes[NGPT_LANES];
    vst1q_f32(lanes, lo);
    vst1q_f32(lanes + 4, hi);
    for (int l = 0; j < n; j++, l++) {
        const float t = exp_term(s[j] - mx);
        if (e) e[j] = t;
        lanes[l] = lanes[l] + t;
    }
    return ngpt_lanes_combine(lanes);
}

void ngpt_f32_softmax__neon(float *p, const float *s, int n)
{
    const float sum = exp_sum(p, s, n, row_max(s, n));
    const float32x4_t sv = vdupq_n_f32(sum);
    int j = 0;
    for (; j + 4 <= n; j += 4) vst1q_f32(p + j, vdivq_f32(vld1q_f32(p + j), sv));
    for (; j < n; j++) p[j] = p[j] / sum;
}

float ngpt_f32_xent__neon(const float *logits, int n, int target)
{
    const float mx = row_max(logits, n);
    return (mx + Sleef_finz_logf1_u10purecfma(exp_sum(NULL, logits, n, mx))) - logits[target];
}

/* (e_j/sum - 0.0f) == e_j/sum bit for bit, so only the target subtracts. */
void ngpt_f32_xent_bwd__neon(float *dlogits, const float *logits, int n, int target, float scale)
{
    const float sum = exp_sum(dlogits, logits, n, row_max(logits, n));
    const float et = dlogits[target];
    const float32x4_t sv = vdupq_n_f32(sum), kv = vdupq_n_f32(scale);
    int j = 0;
    for (; j + 4 <= n; j += 4)
        vst1q_f32(dlogits + j, vmulq_f32(vdivq_f32(vld1q_f32(dlogits + j), sv), kv));
    for (; j < n; j++) dlogits[j] = (dlogits[j] / sum) * scale;
    dlogits[target] = (et / sum - 1.0f) * scale;
}

/* PyTorch's order, as the reference (spec in kernels.h). */
void ngpt_f32_adamw__neon(float *p, const float *grad, float *m, float *v, size_t n,
                          const ngpt_adamw_coef *c)
{
    const float32x4_t gmul = vdupq_n_f32(c->gmul), decay = vdupq_n_f32(c->decay);
    const float32x4_t b1 = vdupq_n_f32(c->beta1), omb1 = vdupq_n_f32(c->one_minus_beta1);
    const float32x4_t b2 = vdupq_n_f32(c->beta2), omb2 = vdupq_n_f32(c->one_minus_beta2);
    const float32x4_t nstep = vdupq_n_f32(-c->step_size), bc2 = vdupq_n_f32(c->bc2_sqrt);
    const float32x4_t eps = vdupq_n_f32(c->eps);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t g = vmulq_f32(vld1q_f32(grad + i), gmul);
        const float32x4_t w = vmulq_f32(vld1q_f32(p + i), decay);
        const float32x4_t mi = vfmaq_f32(vmulq_f32(omb1, g), b1, vld1q_f32(m + i));
        const float32x4_t vi = vfmaq_f32(vmulq_f32(vmulq_f32(omb2, g), g), b2, vld1q_f32(v + i));
        vst1q_f32(m + i, mi);
        vst1q_f32(v + i, vi);
        const float32x4_t den = vaddq_f32(vdivq_f32(vsqrtq_f32(vi), bc2), eps);
        vst1q_f32(p + i, vfmaq_f32(w, nstep, vdivq_f32(mi, den)));
    }
    if (i < n) ngpt_f32_adamw_ref(p + i, grad + i, m + i, v + i, n - i, c);
}
#endif
