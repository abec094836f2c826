/* cache.c — the KV cache (layout and invariant in cache.h): slot
 * operations, cached passes (the wiring itself is ngpt_model_pass in
 * forward.c, which writes the new keys and values through cache.h), and the
 * public ngpt_cache_* functions, which validate and then call the same
 * internal operations generation uses. */
#include <string.h>

#include "cache.h"
#include "fpmode.h"

/* ------------------------------------------------------- internal operations */

void ngpt_kv_clear(ngpt_context *ctx, int32_t slot)
{
    if (slot < 0) memset(ctx->plan.kv_len, 0, (size_t)ctx->shape.batch * sizeof(int32_t));
    else ctx->plan.kv_len[slot] = 0;
}

/* One cached pass; last_only: see ngpt_pass (nseq 1, logits (1, 1, V)). */
static void append(ngpt_context *ctx, int32_t slot0, int32_t nseq, const int32_t *tokens,
                   int32_t len, bool last_only)
{
    const ngpt_pass pass = {tokens, nseq, len, true, slot0, last_only};
    ngpt_model_pass(ctx, &pass);
    for (int32_t s = 0; s < nseq; s++) {
        const int32_t slot = slot0 + s;
        memcpy(ngpt_kv_tokens(ctx, slot) + ngpt_kv_len(ctx, slot), tokens + (size_t)s * len,
               (size_t)len * sizeof(int32_t));
        ctx->plan.kv_len[slot] += len;
    }
    ngpt_run_pass_done(ctx, nseq, last_only ? 1 : len, true, slot0);
}

void ngpt_kv_append(ngpt_context *ctx, int32_t slot0, int32_t nseq, const int32_t *tokens,
                    int32_t len)
{
    append(ctx, slot0, nseq, tokens, len, false);
}

void ngpt_kv_prefill(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t len,
                     const float **last_row)
{
    const int32_t chunk = ctx->shape.seq;
    int32_t c = 0;
    for (int32_t at = 0; at < len; at += c) {
        c = len - at < chunk ? len - at : chunk;
        append(ctx, slot, 1, tokens + at, c, true);
    }
    *last_row = ctx->plan.logits;
}

void ngpt_kv_copy(ngpt_context *ctx, int32_t dst, int32_t src)
{
    if (dst == src) return;
    const size_t n = (size_t)ngpt_kv_len(ctx, src), C = (size_t)ctx->cfg.d_model;
    for (int l = 0; l < ctx->cfg.n_layers; l++) {
        memcpy(ngpt_kv_keys(ctx, l, dst), ngpt_kv_keys(ctx, l, src), n * C * sizeof(float));
        memcpy(ngpt_kv_values(ctx, l, dst), ngpt_kv_values(ctx, l, src), n * C * sizeof(float));
    }
    memcpy(ngpt_kv_tokens(ctx, dst), ngpt_kv_tokens(ctx, src), n * sizeof(int32_t));
    ctx->plan.kv_len[dst] = (int32_t)n;
}

/* Rearranges n blocks (bytes each, stride apart) so that block i gets the
 * old block parent[i], with one temporary block: copies whose destination
 * nobody still reads go first; a cycle is broken through tmp. */
static void permute(unsigned char *base, size_t stride, size_t bytes, unsigned char *tmp,
                    const int32_t *parent, int32_t n, int32_t *work)
{
    int32_t *src = work, *readers = work + n, *done = work + 2 * n;
    for (int32_t i = 0; i < n; i++) readers[i] = 0;
    for (int32_t i = 0; i < n; i++) {
        src[i] = parent[i];
        done[i] = parent[i] == i;
        if (!done[i]) readers[parent[i]]++;
    }
    for (;;) {
        bool progress = false, pending = false;
        for (int32_t i = 0; i < n; i++) {
            if (done[i]) continue;
            pending = true;
            if (readers[i]) continue;
            memcpy(base + i * stride, src[i] < 0 ? tmp : base + src[i] * stride, bytes);
            if (src[i] >= 0) readers[src[i]]--;
            done[i] = 1;
            progress = true;
        }
        if (!pending) return;
        if (progress) continue;
        for (int32_t i = 0; i < n; i++) {   /* only cycles remain: break one at i */
            if (done[i]) continue;
            memcpy(tmp, base + i * stride, bytes);
            for (int32_t j = 0; j < n; j++)
                if (!done[j] && src[j] == i) src[j] = -1;
            readers[i] = 0;
            break;
        }
    }
}

void ngpt_kv_reorder(ngpt_context *ctx, const int32_t *parent, int32_t n, int32_t *work)
{
    const size_t TC = (size_t)ctx->cfg.context_len, C = (size_t)ctx->cfg.d_model;
    const size_t len = (size_t)ngpt_kv_len(ctx, parent[0]);
    const size_t blk = TC * C * sizeof(float);
    unsigned char *tmp = (unsigned char *)ctx->plan.kv_tmp;
    for (int l = 0; l < ctx->cfg.n_layers; l++) {
        permute((unsigned char *)ngpt_kv_keys(ctx, l, 0), blk, len * C * sizeof(float), tmp,
                parent, n, work);
        permute((unsigned char *)ngpt_kv_values(ctx, l, 0), blk, len * C * sizeof(float), tmp,
                parent, n, work);
    }
    permute((unsigned char *)ngpt_kv_tokens(ctx, 0), TC * sizeof(int32_t), len * sizeof(int32_t),
            tmp, parent, n, work);
    for (int32_t i = 0; i < n; i++) ctx->plan.kv_len[i] = (int32_t)len;
}

void ngpt_kv_shift(ngpt_context *ctx, int32_t slot, int32_t drop)
{
    const int32_t len = ngpt_kv_len(ctx, slot), n = len - drop;
    if (drop == 0) return;
    const int C = ctx->cfg.d_model, H = ctx->cfg.n_heads, D = C / H;
    const float *cs = ctx->plan.rope_cos + (size_t)drop * (size_t)(D / 2);
    const float *sn = ctx->plan.rope_sin + (size_t)drop * (size_t)(D / 2);
    for (int l = 0; l < ctx->cfg.n_layers; l++) {
        float *k = ngpt_kv_keys(ctx, l, slot), *v = ngpt_kv_values(ctx, l, slot);
        memmove(k, k + (size_t)drop * C, (size_t)n * C * sizeof(float));
        memmove(v, v + (size_t)drop * C, (size_t)n * C * sizeof(float));
        /* the transpose of position drop's rotation turns every pair back by
         * drop*freq_i; the n kept rows are n*H contiguous head vectors */
        ctx->k->rope_bwd(k, n * H, D, cs, sn);
    }
    int32_t *tok = ngpt_kv_tokens(ctx, slot);
    memmove(tok, tok + drop, (size_t)n * sizeof(int32_t));
    ctx->plan.kv_len[slot] = n;
}

/* ------------------------------------------------------------ public API */

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
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: slot %d is not in 0..%d (the planned batch)", fn,
                         (int)slot, (int)ctx->shape.batch - 1);
    return NGPT_OK;
}

ngpt_status ngpt_cache_clear(ngpt_context *ctx, int32_t slot)
{
    ngpt_status st = need_cache(ctx, "ngpt_cache_clear");
    if (st) return st;
    if (slot != -1 && (st = check_slot(ctx, slot, "ngpt_cache_clear"))) return st;
    ngpt_kv_clear(ctx, slot);
    return NGPT_OK;
}

ngpt_status ngpt_cache_len(const ngpt_context *ctx, int32_t slot, int32_t *len)
{
    ngpt_status st = need_cache(ctx, "ngpt_cache_len");
    if (st) return st;
    if (!len) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_cache_len: NULL len");
    if ((st = check_slot(ctx, slot, "ngpt_cache_len"))) return st;
    *len = ngpt_kv_len(ctx, slot);
    return NGPT_OK;
}

ngpt_status ngpt_cache_tokens(const ngpt_context *ctx, int32_t slot, const int32_t **tokens,
                              int32_t *len)
{
    ngpt_status st = need_cache(ctx, "ngpt_cache_tokens");
    if (st) return st;
    if (!tokens || !len) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_cache_tokens: NULL argument");
    if ((st = check_slot(ctx, slot, "ngpt_cache_tokens"))) return st;
    *tokens = ngpt_kv_tokens(ctx, slot);
    *len = ngpt_kv_len(ctx, slot);
    return NGPT_OK;
}

ngpt_status ngpt_cache_copy(ngpt_context *ctx, int32_t dst, int32_t src)
{
    ngpt_status st = need_cache(ctx, "ngpt_cache_copy");
    if (st) return st;
    if ((st = check_slot(ctx, dst, "ngpt_cache_copy"))) return st;
    if ((st = check_slot(ctx, src, "ngpt_cache_copy"))) return st;
    ngpt_kv_copy(ctx, dst, src);
    return NGPT_OK;
}

ngpt_status ngpt_cache_shift(ngpt_context *ctx, int32_t slot, int32_t drop)
{
    ngpt_status st = need_cache(ctx, "ngpt_cache_shift");
    if (st) return st;
    if ((st = check_slot(ctx, slot, "ngpt_cache_shift"))) return st;
    if (ctx->cfg.pos != NGPT_POS_ROPE)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "ngpt_cache_shift: the keys of a model with "
                         "absolute positions cannot be moved to new positions; clear the slot "
                         "and prefill the kept tokens again");
    const int32_t len = ngpt_kv_len(ctx, slot);
    if (drop < 0 || drop > len)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_cache_shift: drop = %d is not in 0..%d (the "
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
    ngpt_kv_append(ctx, slot0, nseq, tokens, len);
    return NGPT_OK;
}

ngpt_status ngpt_cache_prefill(ngpt_context *ctx, const int32_t *tokens, int32_t batch, int32_t len)
{
    NGPT_FPMODE_SCOPE;
    return cached_pass(ctx, "ngpt_cache_prefill", 0, batch, tokens, len);
}

ngpt_status ngpt_cache_prefill_slot(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t len)
{
    NGPT_FPMODE_SCOPE;
    if (ctx && (slot < 0 || slot >= ctx->shape.batch))
        return check_slot(ctx, slot, "ngpt_cache_prefill_slot");
    return cached_pass(ctx, "ngpt_cache_prefill_slot", slot, 1, tokens, len);
}

ngpt_status ngpt_cache_decode(ngpt_context *ctx, const int32_t *tokens, int32_t batch)
{
    NGPT_FPMODE_SCOPE;
    return cached_pass(ctx, "ngpt_cache_decode", 0, batch, tokens, 1);
}
