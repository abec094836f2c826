/* outputs.c — what the last pass left: its logits, their checksum, and its
 * attention trace (run.pass says which pass that was). */
#include "base/fpmode.h"
#include "model/kv.h"

ngpt_status ngpt_context_logits(const ngpt_context *ctx, const float **logits)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !logits) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_logits: NULL argument");
    if (ctx->shape.loss_chunk)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_logits: the context computes the "
                         "loss in chunks of rows (shape.loss_chunk) and keeps no logits");
    if (!ctx->run.pass.valid)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_logits: there are no logits yet; run a "
                         "forward, prefill or decode first");
    *logits = ctx->plan.logits;
    return NGPT_OK;
}

ngpt_status ngpt_context_trace(const ngpt_context *ctx, int32_t layer, const float **probs,
                           size_t *count)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !probs || !count)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_trace: NULL argument");
    if (layer < 0 || layer >= ctx->cfg.n_layers)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_trace: layer %d is not in 0..%d", (int)layer,
                         (int)ctx->cfg.n_layers - 1);
    if (!ctx->run.pass.valid)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_trace: there is no trace yet; run a "
                         "forward, prefill or decode first");
    const size_t B = (size_t)ctx->run.pass.batch, T = (size_t)ctx->run.pass.seq;
    const size_t H = (size_t)ctx->cfg.n_heads;
    const size_t plan_rows = (size_t)ctx->shape.batch * H * (size_t)ctx->shape.seq;
    const float *cached = ctx->run.pass.cached ? ngpt_kv_trace(ctx, layer, ctx->run.pass.slot0)
                                               : NULL;
    if (cached) {   /* prefill/decode: (nseq, H, Tctx) */
        const size_t TC = (size_t)ctx->cfg.context_len;
        *probs = cached;
        *count = B * H * TC;
    } else if (ctx->shape.trace == NGPT_TRACE_FULL) {
        *probs = ctx->plan.att + (size_t)layer * plan_rows * (size_t)ctx->shape.seq;
        *count = B * H * T * T;
    } else if (ctx->shape.trace == NGPT_TRACE_LAST_ROW) {
        *probs = ctx->plan.trace_rows + (size_t)layer * plan_rows;
        *count = B * H * T;
    } else {
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_trace: the context was planned "
                         "without a trace; set ngpt_shape.trace");
    }
    return NGPT_OK;
}

ngpt_status ngpt_context_logits_checksum(const ngpt_context *ctx, uint64_t *hash)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !hash) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_logits_checksum: NULL argument");
    if (ctx->shape.loss_chunk)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_logits_checksum: the context "
                         "computes the loss in chunks of rows (shape.loss_chunk) and keeps no "
                         "logits");
    if (!ctx->run.pass.valid)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_logits_checksum: there are no logits yet; run "
                         "a forward, prefill or decode first");
    size_t n = (size_t)ctx->run.pass.batch * ctx->run.pass.rows * ctx->cfg.vocab_size;
    *hash = ngpt_checksum_bytes(ctx->plan.logits, n * sizeof(float));
    return NGPT_OK;
}
