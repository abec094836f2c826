/* kv_q8.c — the reference kernels of the 8-bit KV cache (contracts in
 * kernels.inc; a head's row is q8.h's quantized row stored compact, its
 * scales after its G*32 values): the scores as an exact int32 sum per group
 * and one fmaf chain over the groups, as gemm_q8's; the weighted sum of the
 * values as one fmaf chain per output over the positions. Several query
 * rows are the same loops row by row (with step 1 each row sees one more
 * position). */
#include <math.h>

#include "../kernels.h"

enum { G = NGPT_Q8_GROUP };

void ngpt_f32_attn_scores_q8_ref(float *s, ptrdiff_t s_stride, const int8_t *q, ptrdiff_t q_stride,
                                 int rows, const int8_t *k, ptrdiff_t k_stride, int n, int step,
                                 int dim, float scale)
{
    const int groups = ngpt_q8_groups(dim);
    for (int r = 0; r < rows; r++) {
        const int8_t *qr = q + r * q_stride;
        const float *dq = ngpt_q8_row_scales(qr, dim);
        for (int j = 0; j < n + step * r; j++) {
            const int8_t *kj = k + j * k_stride;
            const float *dk = ngpt_q8_row_scales(kj, dim);
            float acc = 0.0f;
            for (int g = 0; g < groups; g++) {
                int32_t isum = 0;
                for (int t = 0; t < G; t++) isum += (int32_t)qr[g * G + t] * (int32_t)kj[g * G + t];
                acc = fmaf((float)isum, dq[g] * dk[g], acc);
            }
            s[r * s_stride + j] = acc * scale;
        }
    }
}

void ngpt_f32_attn_wsum_q8_ref(float *o, ptrdiff_t o_stride, const float *p, ptrdiff_t p_stride,
                               int rows, const int8_t *v, ptrdiff_t v_stride, int n, int step,
                               int dim)
{
    for (int r = 0; r < rows; r++)
        for (int d = 0; d < dim; d++) {
            float acc = 0.0f;
            for (int j = 0; j < n + step * r; j++) {
                const int8_t *vj = v + j * v_stride;
                acc = fmaf(p[r * p_stride + j] * ngpt_q8_row_scales(vj, dim)[d / G], (float)vj[d], acc);
            }
            o[r * o_stride + d] = acc;
        }
}
