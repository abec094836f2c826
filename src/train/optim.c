/* optim.c — learning-rate schedule, global-norm clipping and AdamW
 * (docs/DESIGN.md §1). Per-step scalars are computed in double and rounded to
 * float once; the per-element update is the adamw kernel (kernels.h), split
 * across the thread pool by element ranges (ops.h). */
#include <math.h>
#include <sleef.h>
#include <string.h>

#include "base/fpmode.h"
#include "model/model.h"
#include "ops/ops.h"
#include "train/train.h"

ngpt_optim_config ngpt_optim_config_default(void)
{
    NGPT_FPMODE_SCOPE;
    ngpt_optim_config o = {.lr = 3e-4f, .min_lr = 3e-5f, .warmup = 200, .total_steps = 5000,
                           .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
                           .decay_all = true, .clip = 1.0f, .accum = 1};
    return o;
}

static bool finite_in(float x, float lo, float hi) { return isfinite(x) && x >= lo && x <= hi; }

ngpt_status ngpt_optim_config_validate(const ngpt_optim_config *o)
{
    NGPT_FPMODE_SCOPE;
    if (!o) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_optim_config_validate: NULL config");
    return ngpt_prefixed("ngpt_optim_config_validate", ngpt_optim_check(o));
}

ngpt_status ngpt_optim_check(const ngpt_optim_config *o)
{
    if (!finite_in(o->lr, 0.0f, 1e3f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "lr must be finite and >= 0, got %g", (double)o->lr);
    if (!finite_in(o->min_lr, 0.0f, o->lr))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "min_lr must be in [0, lr=%g], got %g",
                         (double)o->lr, (double)o->min_lr);
    if (o->warmup < 0) return ngpt_fail(NGPT_ERR_BAD_ARG, "warmup must be >= 0");
    if (o->total_steps < 1) return ngpt_fail(NGPT_ERR_BAD_ARG, "total_steps must be >= 1");
    if (!finite_in(o->beta1, 0.0f, 0.999999f) || o->beta1 >= 1.0f)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "beta1 must be in [0, 1), got %g", (double)o->beta1);
    if (!finite_in(o->beta2, 0.0f, 0.999999f) || o->beta2 >= 1.0f)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "beta2 must be in [0, 1), got %g", (double)o->beta2);
    if (!(o->eps > 0.0f) || !isfinite(o->eps))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "eps must be > 0, got %g", (double)o->eps);
    if (!finite_in(o->weight_decay, 0.0f, 1e3f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "weight_decay must be finite and >= 0, got %g",
                         (double)o->weight_decay);
    if (!isfinite(o->clip)) return ngpt_fail(NGPT_ERR_BAD_ARG, "clip must be finite");
    if (o->accum < 1 || o->accum > 1 << 20)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "accum must be in 1..%d, got %d", 1 << 20,
                         (int)o->accum);
    return NGPT_OK;
}

ngpt_status ngpt_optim_lr(const ngpt_optim_config *o, int64_t step, float *lr)
{
    NGPT_FPMODE_SCOPE;
    if (!o || !lr) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_optim_lr: NULL argument");
    ngpt_status st = ngpt_optim_check(o);
    if (st) return ngpt_prefixed("ngpt_optim_lr", st);
    if (step < 0) return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_optim_lr: step must be >= 0");
    *lr = ngpt_optim_lr_unchecked(o, step);
    return NGPT_OK;
}

float ngpt_optim_lr_unchecked(const ngpt_optim_config *o, int64_t step)
{
    const double base = o->lr, lo = o->min_lr;
    double r;
    if (step < o->warmup) {
        r = base * (double)step / (double)o->warmup;
    } else {
        double span = (double)(o->total_steps - o->warmup);
        double p = span > 0.0 ? (double)(step - o->warmup) / span : 1.0;
        if (p > 1.0) p = 1.0;
        r = lo + (base - lo) * 0.5 * (1.0 + Sleef_finz_cosd1_u10purecfma(3.14159265358979323846 * p));
        if (r < lo) r = lo;
        if (r > base) r = base;
    }
    return (float)r;
}

ngpt_status ngpt_optim_step(ngpt_context *ctx, const ngpt_optim_config *o, float lr,
                            float *grad_norm)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !o) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_optim_step: NULL argument");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_optim_step: the context was planned for "
                         "inference; plan it with NGPT_MODE_TRAIN");
    ngpt_status st = ngpt_optim_check(o);
    if (st) return ngpt_prefixed("ngpt_optim_step", st);
    if (!isfinite(lr) || lr < 0.0f)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_optim_step: lr must be finite and >= 0, got %g",
                         (double)lr);
    if (ctx->run.n_backward < 1)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_optim_step: there are no gradients; run "
                         "ngpt_model_backward first");
    return ngpt_prefixed("ngpt_optim_step", ngpt_optim_step_unchecked(ctx, o, lr, grad_norm));
}

ngpt_status ngpt_optim_step_unchecked(ngpt_context *ctx, const ngpt_optim_config *o, float lr,
                             float *grad_norm)
{
    ngpt_plan *p = &ctx->plan;
    const size_t P = ctx->lay.total;

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
    for (int32_t i = 0; i < ctx->n_tensors; i++) {
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

ngpt_status ngpt_optim_skip(ngpt_context *ctx)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_optim_skip: NULL context");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_optim_skip: the context was planned for "
                         "inference; plan it with NGPT_MODE_TRAIN");
    ctx->optim_steps++;
    ctx->run.backward_ready = false;
    return NGPT_OK;
}

ngpt_status ngpt_optim_step_count(const ngpt_context *ctx, uint64_t *steps)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !steps) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_optim_step_count: NULL argument");
    *steps = ctx->optim_steps;
    return NGPT_OK;
}
