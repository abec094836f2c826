/* cache.h — the KV cache, owned by cache.c. Generation (generate.c), beam
 * search (beam.c) and the public ngpt_cache_* functions all go through it.
 *
 * Slot s (0 <= s < the planned batch) holds, for every layer, the keys
 * (after RoPE) and values of the tokens fed to it so far, and the tokens
 * themselves, in order:
 *   kv_k, kv_v  (L, batch, Tctx, C)   kv_tokens (batch, Tctx)   kv_len (batch)
 *   kv_trace    (L, batch, H, Tctx)   the last new token's probabilities (traced plans)
 * Invariant: the cache holds keys and values for exactly kv_len[s] positions
 * 0..kv_len[s]-1 of slot s, and the next token fed to the slot sits at
 * position kv_len[s] (DESIGN §1). Every operation below keeps it, so a later
 * one (e.g. dropping the oldest tokens and re-rotating the kept keys to their
 * new positions) belongs here too, next to ngpt_kv_reorder.
 *
 * These functions trust their arguments (slots in range, tokens valid, room
 * in the slot): the public ngpt_cache_* functions validate at the boundary,
 * and generation validates its request once. */
#ifndef NGPT_CACHE_H
#define NGPT_CACHE_H

#include "internal.h"

static inline int32_t ngpt_kv_len(const ngpt_context *ctx, int32_t slot)
{
    return ctx->plan.kv_len[slot];
}

/* The tokens slot `slot` holds (ngpt_kv_len of them). */
static inline int32_t *ngpt_kv_tokens(const ngpt_context *ctx, int32_t slot)
{
    return ctx->plan.kv_tokens + (size_t)slot * (size_t)ctx->cfg.context_len;
}

/* Keys / values of one layer of one slot: (Tctx, C), row = position. */
static inline float *ngpt_kv_keys(const ngpt_context *ctx, int layer, int32_t slot)
{
    const size_t block = (size_t)ctx->cfg.context_len * (size_t)ctx->cfg.d_model;
    return ctx->plan.kv_k + ((size_t)layer * (size_t)ctx->shape.batch + (size_t)slot) * block;
}
static inline float *ngpt_kv_values(const ngpt_context *ctx, int layer, int32_t slot)
{
    const size_t block = (size_t)ctx->cfg.context_len * (size_t)ctx->cfg.d_model;
    return ctx->plan.kv_v + ((size_t)layer * (size_t)ctx->shape.batch + (size_t)slot) * block;
}

/* The traced attention rows of one layer of one slot, (H, Tctx), or NULL
 * when the plan has no trace. */
static inline float *ngpt_kv_trace(const ngpt_context *ctx, int layer, int32_t slot)
{
    if (!ctx->plan.kv_trace) return NULL;
    const size_t rows = (size_t)ctx->cfg.n_heads * (size_t)ctx->cfg.context_len;
    return ctx->plan.kv_trace + ((size_t)layer * (size_t)ctx->shape.batch + (size_t)slot) * rows;
}

/* Empties slot `slot`, or every slot for -1. */
void ngpt_kv_clear(ngpt_context *ctx, int32_t slot);

/* One cached pass: appends tokens (nseq, len) to slots slot0..slot0+nseq-1
 * (len <= the planned seq, each slot with room for len more) and computes
 * their logits into plan.logits (nseq, len, V). */
void ngpt_kv_append(ngpt_context *ctx, int32_t slot0, int32_t nseq, const int32_t *tokens,
                    int32_t len);

/* Appends any number of tokens to one slot, in passes of the planned seq;
 * *last_row is the logits row of the last token. */
void ngpt_kv_prefill(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t len,
                     const float **last_row);

/* Slot dst becomes a copy of slot src. */
void ngpt_kv_copy(ngpt_context *ctx, int32_t dst, int32_t src);

/* Slots 0..n-1 become copies of the old slots parent[0..n) (a permutation
 * with repeats, as beam search needs), moving each block at most twice with
 * one spare block (kv_tmp). All n parents must hold the same number of
 * tokens. work: 3n ints. */
void ngpt_kv_reorder(ngpt_context *ctx, const int32_t *parent, int32_t n, int32_t *work);

#endif
