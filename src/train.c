/* train.c — one training step (micro-batches, dropout keys, schedule,
 * AdamW) and evaluation over fixed windows, on the arena's batch buffer. */
#include <math.h>
#include <string.h>

#include "fpmode.h"
#include "internal.h"

static ngpt_status check_batch(const ngpt_context *ctx, int32_t batch, int32_t seq, const char *who)
{
    if (batch < 1 || seq < 1 || batch > ctx->shape.batch || seq > ctx->shape.seq)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "%s: (batch=%d, seq=%d) must be within the "
                         "context's planned (batch=%d, seq=%d)", who, (int)batch, (int)seq,
                         (int)ctx->shape.batch, (int)ctx->shape.seq);
    return NGPT_OK;
}

ngpt_status ngpt_train_step(ngpt_context *ctx, const ngpt_optim_config *opt,
                            const ngpt_data *data, uint64_t seed, int32_t batch, int32_t seq,
                            float *loss, float *lr_out, float *grad_norm)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !opt || !data || !loss) return ngpt_fail(NGPT_ERR_NULL_ARG, "train_step: NULL argument");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "train_step: the context was planned for inference");
    ngpt_status st = ngpt_optim_config_validate(opt);
    if (!st) st = check_batch(ctx, batch, seq, "train_step");
    if (st) return st;
    const uint64_t s = ctx->optim_steps;
    float lr;
    if ((st = ngpt_optim_lr(opt, (int64_t)s, &lr))) return st;
    int32_t *tokens = ctx->plan.batch_buf;
    int32_t *targets = tokens + (size_t)batch * seq;
    float sum = 0.0f;
    ngpt_grads_zero(ctx);
    for (int32_t a = 0; a < opt->accum; a++) {
        const uint64_t micro = s * (uint64_t)opt->accum + (uint64_t)a;
        float l;
        if ((st = ngpt_data_batch(data, NGPT_SPLIT_TRAIN, seed, micro, batch, seq, tokens, targets)))
            return st;
        ngpt_dropout_set(ctx, ctx->cfg.dropout > 0.0f, seed, micro);
        if ((st = ngpt_model_forward(ctx, tokens, batch, seq, targets, &l))) return st;
        if ((st = ngpt_model_backward(ctx))) return st;
        sum = sum + l;
    }
    *loss = sum / (float)opt->accum;
    if (lr_out) *lr_out = lr;
    if (!isfinite(*loss))       /* even if the gradients happen to be finite */
        return ngpt_fail(NGPT_ERR_NUMERIC, "train_step: step %llu: the loss is %g (NaN or Inf): "
                         "parameters left unchanged (try a lower learning rate)",
                         (unsigned long long)s + 1, (double)*loss);
    return ngpt_optim_step(ctx, opt, lr, grad_norm);
}

ngpt_status ngpt_model_evaluate(ngpt_context *ctx, const ngpt_data *data, uint64_t seed,
                          int32_t n_batches, int32_t batch, int32_t seq, float *loss)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !data || !loss) return ngpt_fail(NGPT_ERR_NULL_ARG, "evaluate: NULL argument");
    if (n_batches < 1) return ngpt_fail(NGPT_ERR_BAD_ARG, "evaluate: n_batches must be >= 1");
    ngpt_status st = check_batch(ctx, batch, seq, "evaluate");
    if (st) return st;
    const bool was_on = ctx->dropout_on;
    int32_t *tokens = ctx->plan.batch_buf;
    int32_t *targets = tokens + (size_t)batch * seq;
    double sum = 0.0;
    ctx->dropout_on = false;
    for (int32_t i = 0; i < n_batches && !st; i++) {
        float l;
        st = ngpt_data_batch(data, NGPT_SPLIT_EVAL, seed, (uint64_t)i, batch, seq, tokens, targets);
        if (!st) st = ngpt_model_forward(ctx, tokens, batch, seq, targets, &l);
        if (!st) sum += (double)l;
    }
    ctx->dropout_on = was_on;
    ctx->has_targets = false;   /* eval windows are not a training batch */
    if (st) return st;
    *loss = (float)(sum / (double)n_batches);
    return NGPT_OK;
}
