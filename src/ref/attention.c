/* attention.c — reference attention scores (q.k * scale, against keys or
 * their transpose), the weighted sum of values, and the outer-product
 * accumulation of their backward; all are fmaf chains in increasing index
 * order. The multi-row kernels are causal: row r sees n + r keys. */
#include <math.h>

#include "../kernels.h"

void ngpt_f32_attn_scores_ref(float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
                              int rows, const float *k, ptrdiff_t k_stride, int n, int dim,
                              float scale)
{
    for (int r = 0; r < rows; r++) {
        const float *qr = q + r * q_stride;
        for (int j = 0; j < n; j++) {
            const float *kj = k + j * k_stride;
            float acc = 0.0f;
            for (int d = 0; d < dim; d++) acc = fmaf(qr[d], kj[d], acc);
            s[r * s_stride + j] = acc * scale;
        }
    }
}

void ngpt_f32_attn_scores_t_ref(float *s, ptrdiff_t s_stride, const float *q, ptrdiff_t q_stride,
                                int rows, const float *kt, ptrdiff_t kt_stride, int n, int dim,
                                float scale)
{
    for (int r = 0; r < rows; r++) {
        const float *qr = q + r * q_stride;
        for (int j = 0; j < n + r; j++) {
            float acc = 0.0f;
            for (int d = 0; d < dim; d++) acc = fmaf(qr[d], kt[d * kt_stride + j], acc);
            s[r * s_stride + j] = acc * scale;
        }
    }
}

void ngpt_f32_attn_wsum_ref(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                            int rows, const float *v, ptrdiff_t v_stride, int n, int step, int dim)
{
    for (int r = 0; r < rows; r++) {
        const float *pr = p + r * p_stride;
        for (int d = 0; d < dim; d++) {
            float acc = 0.0f;
            for (int j = 0; j < n + step * r; j++) acc = fmaf(pr[j], v[j * v_stride + d], acc);
            o[r * o_stride + d] = acc;
        }
    }
}

void ngpt_f32_outer_acc_ref(float *out, ptrdiff_t out_stride, const float *w, ptrdiff_t w_stride,
                            const float *x, ptrdiff_t x_stride, int rows, int n, int dim)
{
    for (int r = 0; r < rows; r++) {
        const float *wr = w + r * w_stride, *xr = x + r * x_stride;
        for (int j = 0; j < n + r; j++) {
            float *o = out + j * out_stride;
            for (int d = 0; d < dim; d++) o[d] = fmaf(wr[j], xr[d], o[d]);
        }
    }
}
