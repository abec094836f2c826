/* attention.c — reference attention scores (q.k * scale), the weighted sum
 * of values, and the outer-product accumulation of their backward; all are
 * fmaf chains in increasing index order. */
#include <math.h>

#include "../kernels.h"

void ngpt_f32_attn_scores_ref(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                              int n, int dim, float scale)
{
    for (int j = 0; j < n; j++) {
        const float *kj = k + j * k_stride;
        float acc = 0.0f;
        for (int d = 0; d < dim; d++) acc = fmaf(q[d], kj[d], acc);
        s[j] = acc * scale;
    }
}

void ngpt_f32_attn_wsum_ref(float *o, const float *p, const float *v, ptrdiff_t v_stride,
                            int n, int dim)
{
    for (int d = 0; d < dim; d++) {
        float acc = 0.0f;
        for (int j = 0; j < n; j++) acc = fmaf(p[j], v[j * v_stride + d], acc);
        o[d] = acc;
    }
}

void ngpt_f32_outer_acc_ref(float *out, ptrdiff_t out_stride, const float *w, const float *x,
                            int n, int dim)
{
    for (int j = 0; j < n; j++) {
        float *o = out + j * out_stride;
        for (int d = 0; d < dim; d++) o[d] = fmaf(w[j], x[d], o[d]);
    }
}
