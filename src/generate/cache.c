/* cache.c — the public KV cache functions (a slot saved as a session file
 * and truncated: session.c): each validates its arguments, then calls the
 * KV cache's storage operations (model/kv.h) or the model's cached pass
 * (model/model.h), the same internal operations generation uses. */
#include "base/fpmode.h"
#include "model/kv.h"
#include "model/model.h"

static ngpt_status need_cache(const ngpt_context *ctx, const char *fn)
{
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL context", fn);
    if (!ngpt_kv_planned(ctx))
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "%s: the context was planned for training; "
                         "generation needs an NGPT_MODE_INFER context", fn);
    return NGPT_OK;
}

static ngpt_status check_slot(const ngpt_context *ctx, int32_t slot, const char *fn)
{
    if (slot < 0 || slot >= ctx->shape.batch)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: slot %d is not in 0..%d (the planned batch)", fn,
                         (int)slot, (int)ctx->shape.batch - 1);
    return NGPT_OK;
}

ngpt_status ngpt_context_cache_clear(ngpt_context *ctx, int32_t slot)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = need_cache(ctx, "ngpt_context_cache_clear");
    if (st) return st;
    if (slot != -1 && (st = check_slot(ctx, slot, "ngpt_context_cache_clear"))) return st;
    ngpt_kv_clear(ctx, slot);
    return NGPT_OK;
}

ngpt_status ngpt_context_cache_len(const ngpt_context *ctx, int32_t slot, int32_t *len)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = need_cache(ctx, "ngpt_context_cache_len");
    if (st) return st;
    if (!len) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_cache_len: NULL len");
    if ((st = check_slot(ctx, slot, "ngpt_context_cache_len"))) return st;
    *len = ngpt_kv_len(ctx, slot);
    return NGPT_OK;
}

ngpt_status ngpt_context_cache_tokens(const ngpt_context *ctx, int32_t slot, const int32_t **tokens,
                              int32_t *len)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = need_cache(ctx, "ngpt_context_cache_tokens");
    if (st) return st;
    if (!tokens || !len) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_cache_tokens: NULL argument");
    if ((st = check_slot(ctx, slot, "ngpt_context_cache_tokens"))) return st;
    *tokens = ngpt_kv_tokens(ctx, slot);
    *len = ngpt_kv_len(ctx, slot);
    return NGPT_OK;
}

ngpt_status ngpt_context_cache_copy(ngpt_context *ctx, int32_t dst, int32_t src)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = need_cache(ctx, "ngpt_context_cache_copy");
    if (st) return st;
    if ((st = check_slot(ctx, dst, "ngpt_context_cache_copy"))) return st;
    if ((st = check_slot(ctx, src, "ngpt_context_cache_copy"))) return st;
    ngpt_kv_copy(ctx, dst, src);
    return NGPT_OK;
}

ngpt_status ngpt_context_cache_shift(ngpt_context *ctx, int32_t slot, int32_t drop)
{
    NGPT_FPMODE_SCOPE;
    ngpt_status st = need_cache(ctx, "ngpt_context_cache_shift");
    if (st) return st;
    if ((st = check_slot(ctx, slot, "ngpt_context_cache_shift"))) return st;
    if (ctx->cfg.pos != NGPT_POS_ROPE)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "ngpt_context_cache_shift: the keys of a model with "
                         "absolute positions cannot be moved to new positions; clear the slot "
                         "and prefill the kept tokens again");
    const int32_t len = ngpt_kv_len(ctx, slot);
    if (drop < 0 || drop > len)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_cache_shift: drop = %d is not in 0..%d (the "
                         "tokens slot %d holds)", (int)drop, (int)len, (int)slot);
    ngpt_kv_shift(ctx, slot, drop);
    return NGPT_OK;
}

/* Validates one cached pass over slots slot0..slot0+nseq-1, then runs it. */
static ngpt_status cached_pass(ngpt_context *ctx, const char *fn, int32_t slot0, int32_t nseq,
                               const int32_t *tokens, int32_t len)
{
    ngpt_status st = need_cache(ctx, fn);
    if (st) return st;
    if (!tokens) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL tokens", fn);
    if (nseq < 1 || len < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: batch and len must be >= 1, got %d and %d", fn,
                         (int)nseq, (int)len);
    if (slot0 < 0 || nseq > ctx->shape.batch - slot0)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "%s: slots %d..%d exceed the context's planned "
                         "batch of %d; plan a larger batch", fn, (int)slot0,
                         (int)(slot0 + nseq - 1), (int)ctx->shape.batch);
    const int32_t T = ctx->cfg.context_len, V = ctx->cfg.vocab_size;
    if (len > T)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "%s: %d tokens are longer than the model's context "
                         "T=%d", fn, (int)len, (int)T);
    if (len > ctx->shape.seq)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "%s: %d tokens in one pass exceed the context's "
                         "planned seq=%d; prefill in chunks or plan seq = T", fn, (int)len,
                         (int)ctx->shape.seq);
    for (int32_t s = 0; s < nseq; s++) {
        int32_t n = ngpt_kv_len(ctx, slot0 + s);
        if (len > T - n)
            return ngpt_fail(NGPT_ERR_TOO_LONG, "%s: slot %d holds %d tokens and %d more exceed "
                             "the context T=%d; clear the slot or slide the window", fn,
                             (int)(slot0 + s), (int)n, (int)len, (int)T);
    }
    for (size_t i = 0; i < (size_t)nseq * (size_t)len; i++)
        if (tokens[i] < 0 || tokens[i] >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "%s: tokens[%zu] = %d is not a token id in 0..%d",
                             fn, i, (int)tokens[i], (int)V - 1);
    ngpt_model_append(ctx, slot0, nseq, tokens, len);
    return NGPT_OK;
}

ngpt_status ngpt_context_cache_prefill(ngpt_context *ctx, const int32_t *tokens, int32_t batch, int32_t len)
{
    NGPT_FPMODE_SCOPE;
    return cached_pass(ctx, "ngpt_context_cache_prefill", 0, batch, tokens, len);
}

ngpt_status ngpt_context_cache_prefill_slot(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t len)
{
    NGPT_FPMODE_SCOPE;
    if (ctx && (slot < 0 || slot >= ctx->shape.batch))
        return check_slot(ctx, slot, "ngpt_context_cache_prefill_slot");
    return cached_pass(ctx, "ngpt_context_cache_prefill_slot", slot, 1, tokens, len);
}

ngpt_status ngpt_context_cache_decode(ngpt_context *ctx, const int32_t *tokens, int32_t batch)
{
    NGPT_FPMODE_SCOPE;
    return cached_pass(ctx, "ngpt_context_cache_decode", 0, batch, tokens, 1);
}
