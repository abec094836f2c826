/* optim.c — global-norm clipping and AdamW (docs/DESIGN.md §1), at the
 * learning rate of the schedule (runtime/optim_config.c). Per-step scalars
 * are computed in double and rounded to float once; the per-element update
 * is the adamw kernel (kernels.h), split across the thread pool by element
 * ranges (ops.h). */
#include <math.h>
#include <sleef.h>
#include <string.h>

#include "base/fpmode.h"
#include "model/model.h"
#include "ops/ops.h"
#include "train/train.h"

ngpt_status ngpt_context_optim_step(ngpt_context *ctx, const ngpt_optim_config *o, float lr,
                            float *grad_norm)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !o) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_optim_step: NULL argument");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_optim_step: the context was planned for "
                         "inference; plan it with NGPT_MODE_TRAIN");
    ngpt_status st = ngpt_optim_check(o);
    if (st) return ngpt_prefixed("ngpt_context_optim_step", st);
    if (!isfinite(lr) || lr < 0.0f)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_optim_step: lr must be finite and >= 0, got %g",
                         (double)lr);
    if (ctx->run.n_backward < 1)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_optim_step: there are no gradients; run "
                         "ngpt_context_backward first");
    return ngpt_prefixed("ngpt_context_optim_step", ngpt_context_optim_step_unchecked(ctx, o, lr, grad_norm));
}

ngpt_status ngpt_context_optim_step_unchecked(ngpt_context *ctx, const ngpt_optim_config *o, float lr,
                             float *grad_norm)
{
    ngpt_plan *p = &ctx->plan;
    const bool adapter = ctx->lora.training;    /* its floats train, the model's are frozen */
    const size_t P = adapter ? ctx->lora.train.total : ctx->lay.total;

    /* global norm of the mean gradient, then the clip coefficient; the norm
     * is one canonical sum over every parameter, so it stays on this thread
     * (about a millisecond for 3.2M parameters) */
    const float inv_accum = 1.0f / (float)ctx->run.n_backward;
    const float norm = sqrtf(ctx->k->sumsq(p->grads, P)) * inv_accum;
    if (grad_norm) *grad_norm = norm;
    if (!isfinite(norm))
        return ngpt_fail(NGPT_ERR_NUMERIC, "the gradient norm of step %llu is %g (NaN or Inf); "
                         "the parameters are unchanged (try a lower learning rate)",
                         (unsigned long long)ctx->optim_steps + 1, (double)norm);
    float coef = 1.0f;
    if (o->clip > 0.0f) {
        coef = o->clip / (norm + 1e-6f);
        if (coef > 1.0f) coef = 1.0f;
    }

    const double t = (double)(ctx->optim_steps + 1);
    const double bc1 = 1.0 - Sleef_finz_powd1_u10purecfma((double)o->beta1, t);
    const double bc2 = 1.0 - Sleef_finz_powd1_u10purecfma((double)o->beta2, t);
    ngpt_adamw_coef c = {.gmul = coef * inv_accum,
                         .beta1 = o->beta1, .one_minus_beta1 = 1.0f - o->beta1,
                         .beta2 = o->beta2, .one_minus_beta2 = 1.0f - o->beta2,
                         .step_size = (float)((double)lr / bc1),
                         .bc2_sqrt = (float)sqrt(bc2),
                         .eps = o->eps, .decay = 1.0f};
    const float decay = (float)(1.0 - (double)lr * (double)o->weight_decay);
    if (adapter) {      /* every A and B is a 2-D weight: all decay */
        c.decay = decay;
        ngpt_op_adamw(ctx, p->lora.w, p->grads, p->adam_m, p->adam_v, P, &c);
    }
    for (int32_t i = 0; i < (adapter ? 0 : ctx->n_tensors); i++) {
        const ngpt_tensor_info *ti = &p->tensors[i];
        /* the 2-D Linear weights decay, the embeddings (tok_emb, pos_emb) do not */
        bool decays = o->decay_all || (ti->ndim == 2 && !strstr(ti->name, "_emb."));
        c.decay = decays ? decay : 1.0f;
        ngpt_op_adamw(ctx, p->params + ti->offset, p->grads + ti->offset, p->adam_m + ti->offset,
                      p->adam_v + ti->offset, ti->count, &c);
    }
    ctx->optim_steps++;
    ctx->run.backward_ready = false;   /* the next backward needs a forward with these parameters */
    return NGPT_OK;
}

ngpt_status ngpt_context_optim_skip(ngpt_context *ctx)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_optim_skip: NULL context");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_optim_skip: the context was planned for "
                         "inference; plan it with NGPT_MODE_TRAIN");
    ctx->optim_steps++;
    ctx->run.backward_ready = false;
    return NGPT_OK;
}

ngpt_status ngpt_context_step_count(const ngpt_context *ctx, uint64_t *steps)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !steps) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_step_count: NULL argument");
    *steps = ctx->optim_steps;
    return NGPT_OK;
}
