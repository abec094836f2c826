/* dropout.c — the only writer of a context's dropout state (dropout.h). */
#include "base/fpmode.h"
#include "base/rng.h"
#include "runtime/dropout.h"

ngpt_status ngpt_context_dropout_set(ngpt_context *ctx, bool enabled, uint64_t seed, uint64_t step)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_dropout_set: NULL context");
    ngpt_dropout_configure(ctx, enabled, seed, step);
    return NGPT_OK;
}

void ngpt_dropout_configure(ngpt_context *ctx, bool on, uint64_t seed, uint64_t step)
{
    ctx->run.dropout = (struct ngpt_dropout_state){on, seed, step};
}

bool ngpt_dropout_pause(ngpt_context *ctx)
{
    const bool was_on = ctx->run.dropout.on;
    ctx->run.dropout.on = false;
    return was_on;
}

void ngpt_dropout_resume(ngpt_context *ctx, bool was_on)
{
    ctx->run.dropout.on = was_on;
}

bool ngpt_dropout_active(const ngpt_context *ctx)
{
    return ctx->run.dropout.on && ctx->cfg.dropout > 0.0f;
}

ngpt_dropout_key ngpt_dropout_key_of(const ngpt_context *ctx, int layer, int site)
{
    ngpt_dropout_key key = {ctx->run.dropout.seed, ctx->run.dropout.step,
                            ngpt_rng_site_dropout(layer, site), ctx->cfg.dropout};
    return key;
}
