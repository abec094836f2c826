/* adamw.c — reference AdamW update (decoupled weight decay, PyTorch's order). */
#include <math.h>

#include "../kernels.h"

void ngpt_f32_adamw_ref(float *p, const float *grad, float *m, float *v, size_t n,
                        const ngpt_adamw_coef *c)
{
    for (size_t i = 0; i < n; i++) {
        float g = grad[i] * c->gmul;
        float w = p[i] * c->decay;
        float mi = fmaf(c->beta1, m[i], c->one_minus_beta1 * g);
        float vi = fmaf(c->beta2, v[i], (c->one_minus_beta2 * g) * g);
        m[i] = mi;
        v[i] = vi;
        p[i] = fmaf(-c->step_size, mi / (sqrtf(vi) / c->bc2_sqrt + c->eps), w);
    }
}
