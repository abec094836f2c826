/* train.c — one training step (micro-batches, dropout keys, schedule,
 * AdamW) and evaluation over fixed windows, on the arena's batch buffer. */
#include <math.h>
#include <string.h>

#include "base/fpmode.h"
#include "base/progress.h"
#include "model/model.h"
#include "runtime/dropout.h"
#include "train/train.h"

/* The batch shape fits the plan (a bare message: the callers prefix it). */
static ngpt_status check_batch(const ngpt_context *ctx, int32_t batch, int32_t seq)
{
    if (batch < 1 || seq < 1 || batch > ctx->shape.batch || seq > ctx->shape.seq)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "(batch=%d, seq=%d) must be within the "
                         "context's planned (batch=%d, seq=%d)", (int)batch, (int)seq,
                         (int)ctx->shape.batch, (int)ctx->shape.seq);
    return NGPT_OK;
}

ngpt_status ngpt_context_train_step(ngpt_context *ctx, const ngpt_optim_config *opt,
                            const ngpt_data *data, uint64_t seed, int32_t batch, int32_t seq,
                            float *loss, float *lr_out, float *grad_norm)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !opt || !data || !loss)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_train_step: NULL argument");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_train_step: the context was planned for "
                         "inference; plan it with NGPT_MODE_TRAIN");
    ngpt_status st = ngpt_optim_check(opt);
    if (!st) st = check_batch(ctx, batch, seq);
    if (!st) st = ngpt_data_check(data, NGPT_SPLIT_TRAIN, seq, ctx->cfg.vocab_size);
    if (st) return ngpt_prefixed("ngpt_context_train_step", st);
    /* checked once: from here on the internal, non-validating pieces */
    const uint64_t s = ctx->optim_steps;
    const float lr = ngpt_optim_config_lr_unchecked(opt, (int64_t)s);
    int32_t *tokens = ctx->plan.batch_buf;
    int32_t *targets = tokens + (size_t)batch * seq;
    float sum = 0.0f;
    ngpt_context_grads_zero_unchecked(ctx);
    for (int32_t a = 0; a < opt->accum; a++) {
        const uint64_t micro = s * (uint64_t)opt->accum + (uint64_t)a;
        float l;
        ngpt_data_batch_unchecked(data, NGPT_SPLIT_TRAIN, seed, micro, batch, seq, tokens, targets);
        ngpt_dropout_configure(ctx, ctx->cfg.dropout > 0.0f, seed, micro);
        ngpt_context_forward_unchecked(ctx, tokens, batch, seq, targets, &l);
        ngpt_context_backward_unchecked(ctx);
        sum = sum + l;
    }
    *loss = sum / (float)opt->accum;
    if (lr_out) *lr_out = lr;
    if (!isfinite(*loss))       /* even if the gradients happen to be finite */
        return ngpt_fail(NGPT_ERR_NUMERIC, "ngpt_context_train_step: the loss of step %llu is %g (NaN "
                         "or Inf); the parameters are unchanged (try a lower learning rate)",
                         (unsigned long long)s + 1, (double)*loss);
    return ngpt_prefixed("ngpt_context_train_step", ngpt_context_optim_step_unchecked(ctx, opt, lr, grad_norm));
}

ngpt_status ngpt_context_evaluate(ngpt_context *ctx, const ngpt_data *data, uint64_t seed,
                          int32_t n_batches, int32_t batch, int32_t seq, float *loss)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !data || !loss)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_evaluate: NULL argument");
    if (n_batches < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_evaluate: n_batches must be >= 1, got %d",
                         (int)n_batches);
    ngpt_status st = check_batch(ctx, batch, seq);
    if (!st) st = ngpt_data_check(data, NGPT_SPLIT_EVAL, seq, ctx->cfg.vocab_size);
    if (st) return ngpt_prefixed("ngpt_context_evaluate", st);
    if (ngpt_logits_kept(ctx, seq) < seq)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_evaluate: the loss needs the logits of "
                         "every position, but the context keeps only the last %d "
                         "(shape.logits_rows); plan logits_rows = NGPT_LOGITS_ALL", (int)ctx->shape.logits_rows);
    int32_t *tokens = ctx->plan.batch_buf;
    int32_t *targets = tokens + (size_t)batch * seq;
    double sum = 0.0;
    const bool was_on = ngpt_dropout_pause(ctx);
    for (int32_t i = 0; i < n_batches; i++) {
        float l;
        ngpt_data_batch_unchecked(data, NGPT_SPLIT_EVAL, seed, (uint64_t)i, batch, seq, tokens, targets);
        ngpt_context_forward_unchecked(ctx, tokens, batch, seq, targets, &l);
        sum += (double)l;
        if (!ngpt_progress_report(NGPT_PROGRESS_EVALUATE, (uint64_t)i + 1, (uint64_t)n_batches)) {
            st = ngpt_fail(NGPT_ERR_STOPPED, "ngpt_context_evaluate: cancelled by the progress "
                           "callback after %d of %d batches; no loss was written", (int)i + 1,
                           (int)n_batches);
            break;
        }
    }
    ngpt_dropout_resume(ctx, was_on);
    ctx->run.backward_ready = false;    /* eval windows are not a training batch */
    if (st) return st;
    *loss = (float)(sum / (double)n_batches);
    return NGPT_OK;
}
