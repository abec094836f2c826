/* softmax.c — AVX2 softmax, cross-entropy and their backward, bit-identical
 * to the reference: exp from Sleef_finz_expf8_u10avx2 (equal to the scalar
 * finz expf), the NGPT_EXP_CUTOFF applied by a blend, the sums in the
 * canonical 8 lanes, log through the same scalar SLEEF call.
 *
 * The row max runs per lane with the reference's `s > m ? s : m` from s[0];
 * it can differ from the reference only in the sign of a zero max, which
 * changes no result (s - (+0) == s - (-0) except for s = ±0, where exp gives
 * 1 either way; and ±0 + log(sum >= 1) is the same). */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>

#include "kernels_avx2.h"

static float row_max(const float *s, int n)
{
    __m256 m = _mm256_set1_ps(s[0]);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 v = _mm256_loadu_ps(s + j);
        m = _mm256_blendv_ps(m, v, _mm256_cmp_ps(v, m, _CMP_GT_OQ));
    }
    float p[8];
    _mm256_storeu_ps(p, m);
    float mx = p[0];
    for (int l = 1; l < 8; l++) mx = p[l] > mx ? p[l] : mx;
    for (; j < n; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

static inline __m256 exp_term8(__m256 d)
{
    const __m256 e = Sleef_finz_expf8_u10avx2(d);
    return _mm256_andnot_ps(_mm256_cmp_ps(d, _mm256_set1_ps(NGPT_EXP_CUTOFF), _CMP_LT_OQ), e);
}

static inline float exp_term(float d)
{
    return d < NGPT_EXP_CUTOFF ? 0.0f : Sleef_finz_expf1_u10purecfma(d);
}

/* e_j = exp_term(s_j - max) into out (may alias s); returns the canonical sum. */
static float exp_row(float *out, const float *s, int n, float mx)
{
    const __m256 vm = _mm256_set1_ps(mx);
    __m256 acc = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 e = exp_term8(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
        if (out) _mm256_storeu_ps(out + j, e);
        acc = _mm256_add_ps(acc, e);
    }
    float p[NGPT_LANES];
    _mm256_storeu_ps(p, acc);
    for (; j < n; j++) {
        const float e = exp_term(s[j] - mx);
        if (out) out[j] = e;
        p[j % NGPT_LANES] = p[j % NGPT_LANES] + e;
    }
    return ngpt_lanes_combine(p);
}

void ngpt_f32_softmax__avx2(float *p, const float *s, int n)
{
    const float sum = exp_row(p, s, n, row_max(s, n));
    const __m256 vs = _mm256_set1_ps(sum);
    int j = 0;
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(p + j, _mm256_div_ps(_mm256_loadu_ps(p + j), vs));
    for (; j < n; j++) p[j] = p[j] / sum;
}

float ngpt_f32_xent__avx2(const float *logits, int n, int target)
{
    const float mx = row_max(logits, n);
    const float sum = exp_row(NULL, logits, n, mx);
    return (mx + Sleef_finz_logf1_u10purecfma(sum)) - logits[target];
}

void ngpt_f32_xent_bwd__avx2(float *dlogits, const float *logits, int n, int target, float scale)
{
    const float sum = exp_row(dlogits, logits, n, row_max(logits, n));
    const bool has_t = target >= 0 && target < n;
    const float et = has_t ? dlogits[target] : 0.0f;
    const __m256 vs = _mm256_set1_ps(sum), vc = _mm256_set1_ps(scale);
    int j = 0;
    /* (e/sum - 0.0f) * scale == (e/sum) * scale bit for bit (x - +0 == x). */
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(dlogits + j, _mm256_mul_ps(_mm256_div_ps(_mm256_loadu_ps(dlogits + j), vs), vc));
    for (; j < n; j++) dlogits[j] = (dlogits[j] / sum - 0.0f) * scale;
    if (has_t) dlogits[target] = (et / sum - 1.0f) * scale;
}

void ngpt_f32_softmax_bwd__avx2(float *ds, const float *p, const float *dp, int n, float scale)
{
    __m256 acc = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= n; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(p + j), _mm256_loadu_ps(dp + j), acc);
    float l[NGPT_LANES];
    _mm256_storeu_ps(l, acc);
    for (; j < n; j++) l[j % NGPT_LANES] = fmaf(p[j], dp[j], l[j % NGPT_LANES]);
    const float dot = ngpt_lanes_combine(l);
    const __m256 vd = _mm256_set1_ps(dot), vc = _mm256_set1_ps(scale);
    for (j = 0; j + 8 <= n; j += 8) {
        const __m256 pj = _mm256_loadu_ps(p + j), dpj = _mm256_loadu_ps(dp + j);
        _mm256_storeu_ps(ds + j, _mm256_mul_ps(_mm256_mul_ps(pj, _mm256_sub_ps(dpj, vd)), vc));
    }
    for (; j < n; j++) ds[j] = (p[j] * (dp[j] - dot)) * scale;
}
