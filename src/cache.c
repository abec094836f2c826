/* cache.c — the KV cache: prefill and decode passes (the wiring itself is
 * ngpt_model_pass in forward.c) and slot bookkeeping. Slot s of the cache is
 * (L, s, Tctx, C) in kv_k / kv_v; kv_len[s] tokens are valid, and
 * kv_tokens[s] remembers which, so generation can slide its window. */
#include <string.h>

#include "fpmode.h"
#include "internal.h"

static ngpt_status need_cache(const ngpt_context *ctx, const char *fn)
{
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL context", fn);
    if (!ctx->plan.kv_k)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "%s: the context was planned for training; "
                         "generation needs an NGPT_MODE_INFER context", fn);
    return NGPT_OK;
}

static ngpt_status check_slot(const ngpt_context *ctx, int32_t slot, const char *fn)
{
    if (slot < 0 || slot >= ctx->shape.batch)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: slot %d not in 0..%d (the shape's batch)", fn,
                         (int)slot, (int)ctx->shape.batch - 1);
    return NGPT_OK;
}

ngpt_status ngpt_cache_clear(ngpt_context *ctx, int32_t slot)
{
    ngpt_status st = need_cache(ctx, "cache_clear");
    if (st) return st;
    if (slot == -1) {
        memset(ctx->plan.kv_len, 0, (size_t)ctx->shape.batch * sizeof(int32_t));
        return NGPT_OK;
    }
    if ((st = check_slot(ctx, slot, "cache_clear"))) return st;
    ctx->plan.kv_len[slot] = 0;
    return NGPT_OK;
}

ngpt_status ngpt_cache_len(const ngpt_context *ctx, int32_t slot, int32_t *len)
{
    ngpt_status st = need_cache(ctx, "cache_len");
    if (st) return st;
    if (!len) return ngpt_fail(NGPT_ERR_NULL_ARG, "cache_len: NULL len");
    if ((st = check_slot(ctx, slot, "cache_len"))) return st;
    *len = ctx->plan.kv_len[slot];
    return NGPT_OK;
}

ngpt_status ngpt_cache_tokens(const ngpt_context *ctx, int32_t slot, const int32_t **tokens,
                              int32_t *len)
{
    ngpt_status st = need_cache(ctx, "cache_tokens");
    if (st) return st;
    if (!tokens || !len) return ngpt_fail(NGPT_ERR_NULL_ARG, "cache_tokens: NULL argument");
    if ((st = check_slot(ctx, slot, "cache_tokens"))) return st;
    *tokens = ctx->plan.kv_tokens + (size_t)slot * ctx->cfg.context_len;
    *len = ctx->plan.kv_len[slot];
    return NGPT_OK;
}

void ngpt_cache_copy_slot(ngpt_context *ctx, int32_t dst, int32_t src)
{
    if (dst == src) return;
    const ngpt_plan *p = &ctx->plan;
    const size_t TC = (size_t)ctx->cfg.context_len, C = (size_t)ctx->cfg.d_model;
    const size_t n = (size_t)p->kv_len[src];
    for (int l = 0; l < ctx->cfg.n_layers; l++) {
        size_t base = (size_t)l * ctx->shape.batch * TC * C;
        memcpy(p->kv_k + base + dst * TC * C, p->kv_k + base + src * TC * C, n * C * sizeof(float));
        memcpy(p->kv_v + base + dst * TC * C, p->kv_v + base + src * TC * C, n * C * sizeof(float));
    }
    memcpy(p->kv_tokens + dst * TC, p->kv_tokens + src * TC, n * sizeof(int32_t));
    p->kv_len[dst] = p->kv_len[src];
}

ngpt_status ngpt_cache_copy(ngpt_context *ctx, int32_t dst, int32_t src)
{
    ngpt_status st = need_cache(ctx, "cache_copy");
    if (st) return st;
    if ((st = check_slot(ctx, dst, "cache_copy")) || (st = check_slot(ctx, src, "cache_copy")))
        return st;
    ngpt_cache_copy_slot(ctx, dst, src);
    return NGPT_OK;
}

/* Validates and runs one cached pass over slots slot0..slot0+nseq-1. */
static ngpt_status cached_pass(ngpt_context *ctx, const char *fn, int32_t slot0, int32_t nseq,
                               const int32_t *tokens, int32_t len)
{
    ngpt_status st = need_cache(ctx, fn);
    if (st) return st;
    if (!tokens) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL tokens", fn);
    if (nseq < 1 || len < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: batch and len must be >= 1 (got %d, %d)", fn,
                         (int)nseq, (int)len);
    if (slot0 < 0 || nseq > ctx->shape.batch - slot0)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "%s: slots %d..%d exceed the context's planned "
                         "batch of %d", fn, (int)slot0, (int)(slot0 + nseq - 1),
                         (int)ctx->shape.batch);
    const int32_t T = ctx->cfg.context_len, V = ctx->cfg.vocab_size;
    if (len > T)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "%s: %d tokens are longer than the model's context "
                         "T=%d", fn, (int)len, (int)T);
    if (len > ctx->shape.seq)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "%s: %d tokens in one pass exceed the context's "
                         "planned seq=%d (prefill in chunks or plan seq = T)", fn, (int)len,
                         (int)ctx->shape.seq);
    for (int32_t s = 0; s < nseq; s++) {
        int32_t n = ctx->plan.kv_len[slot0 + s];
        if (len > T - n)
            return ngpt_fail(NGPT_ERR_TOO_LONG, "%s: slot %d holds %d tokens; %d more exceed the "
                             "context T=%d (clear the slot, or slide the window)", fn,
                             (int)(slot0 + s), (int)n, (int)len, (int)T);
    }
    for (size_t i = 0; i < (size_t)nseq * (size_t)len; i++)
        if (tokens[i] < 0 || tokens[i] >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "%s: tokens[%zu] = %d is not a token id in 0..%d",
                             fn, i, (int)tokens[i], (int)V - 1);

    const ngpt_pass pass = {tokens, nseq, len, true, slot0};
    ngpt_model_pass(ctx, &pass);
    for (int32_t s = 0; s < nseq; s++) {
        int32_t *kt = ctx->plan.kv_tokens + (size_t)(slot0 + s) * T;
        memcpy(kt + ctx->plan.kv_len[slot0 + s], tokens + (size_t)s * len,
               (size_t)len * sizeof(int32_t));
        ctx->plan.kv_len[slot0 + s] += len;
    }
    ctx->last_batch = nseq;
    ctx->last_seq = len;
    ctx->has_forward = true;
    ctx->last_cached = true;
    ctx->last_slot0 = slot0;
    return NGPT_OK;
}

ngpt_status ngpt_cache_prefill(ngpt_context *ctx, const int32_t *tokens, int32_t batch, int32_t len)
{
    NGPT_FPMODE_SCOPE;
    return cached_pass(ctx, "prefill", 0, batch, tokens, len);
}

ngpt_status ngpt_cache_prefill_slot(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t len)
{
    NGPT_FPMODE_SCOPE;
    if (ctx && (slot < 0 || slot >= ctx->shape.batch)) return check_slot(ctx, slot, "prefill_slot");
    return cached_pass(ctx, "prefill_slot", slot, 1, tokens, len);
}

ngpt_status ngpt_cache_decode(ngpt_context *ctx, const int32_t *tokens, int32_t batch)
{
    NGPT_FPMODE_SCOPE;
    return cached_pass(ctx, "decode_step", 0, batch, tokens, 1);
}
