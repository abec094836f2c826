/* kv.h — the KV cache's storage (model/kv.c is its only reader and writer
 * of plan.kv). The model's cached pass writes each layer's new keys and
 * values through ngpt_kv_write and then records the tokens with
 * ngpt_kv_commit (model/forward.c, ngpt_model_append: the one place a token
 * is appended); generation, beam search and the public ngpt_cache_*
 * functions (generate/) use the slot operations below.
 *
 * Slot s (0 <= s < the planned batch) holds, for every layer, the keys
 * (after RoPE) and values of the tokens fed to it so far, and the tokens
 * themselves, in order:
 *   keys, values (L, batch, Tctx, KV*D)   tokens (batch, Tctx)   len (batch)
 * (KV*D = C by default; grouped-query attention stores its KV heads only)
 *   trace        (L, batch, H, Tctx)   the last new token's probabilities (traced plans)
 * A local layer (sliding_window) may keep a ring of its last positions
 * instead (ngpt_cfg_kv_ring): its keys before ngpt_kv_held are gone.
 * Invariant: the cache holds keys and values for exactly len[s] positions
 * 0..len[s]-1 of slot s, and the next token fed to the slot sits at position
 * len[s] (docs/DESIGN.md §1). Every operation below keeps it (the context shift
 * too: after it the kept keys are rotated to their new positions,
 * approximately), so a new one belongs here too.
 *
 * These functions trust their arguments (slots in range, tokens valid, room
 * in the slot): the public ngpt_cache_* functions validate at the boundary,
 * and generation validates its request once. */
#ifndef NGPT_MODEL_KV_H
#define NGPT_MODEL_KV_H

#include "runtime/config.h"
#include "runtime/context.h"

/* Whether the context has a cache (infer mode). */
static inline bool ngpt_kv_planned(const ngpt_context *ctx)
{
    return ctx->plan.kv.k != NULL;
}

/* Tokens slot `slot` holds. */
static inline int32_t ngpt_kv_len(const ngpt_context *ctx, int32_t slot)
{
    return ctx->plan.kv.len[slot];
}

/* The lengths of slots slot0, slot0+1, ...: each slot's next position. */
static inline const int32_t *ngpt_kv_lens(const ngpt_context *ctx, int32_t slot0)
{
    return ctx->plan.kv.len + slot0;
}

/* The tokens slot `slot` holds (ngpt_kv_len of them). */
static inline const int32_t *ngpt_kv_tokens(const ngpt_context *ctx, int32_t slot)
{
    return ctx->plan.kv.tokens + (size_t)slot * (size_t)ctx->cfg.context_len;
}

/* Floats of one position's keys (or values) as computed: KV heads of D. */
static inline size_t ngpt_kv_width(const ngpt_context *ctx)
{
    return (size_t)ngpt_cfg_kv_heads(&ctx->cfg) * (size_t)ngpt_cfg_head_dim(&ctx->cfg);
}

/* Whether keys / values are stored 8-bit (shape.kv_k, kv_v = NGPT_KV_Q8):
 * a row is then KV compact quantized head rows of D (ngpt_q8_head_bytes),
 * else KV*D floats. */
static inline bool ngpt_kv_keys_q8(const ngpt_context *ctx) { return ctx->shape.kv_k == NGPT_KV_Q8; }
static inline bool ngpt_kv_values_q8(const ngpt_context *ctx) { return ctx->shape.kv_v == NGPT_KV_Q8; }

/* Bytes of one position's keys / values in the cache. */
static inline size_t ngpt_kv_key_row(const ngpt_context *ctx) { return ctx->plan.kv.k_row; }
static inline size_t ngpt_kv_value_row(const ngpt_context *ctx) { return ctx->plan.kv.v_row; }

/* A local layer's ring (ngpt_cfg_kv_ring: R positions, 2R rows), or 0:
 * the layer's rows are positions 0..Tctx-1. */
static inline int32_t ngpt_kv_ring(const ngpt_context *ctx, int layer)
{
    return ngpt_cfg_kv_ring(&ctx->cfg, ctx->shape.seq, layer);
}
/* Rows of one slot of a layer: Tctx, or 2R. */
static inline size_t ngpt_kv_rows(const ngpt_context *ctx, int layer)
{
    return ngpt_cfg_kv_rows(&ctx->cfg, ctx->shape.seq, layer);
}
/* The first row of slot `slot` of layer `layer`: layers follow each other,
 * each the planned batch's slots of its rows. */
static inline size_t ngpt_kv_first_row(const ngpt_context *ctx, int layer, int32_t slot)
{
    size_t row = 0;
    for (int l = 0; l < layer; l++) row += ngpt_kv_rows(ctx, l);
    return row * (size_t)ctx->shape.batch + (size_t)slot * ngpt_kv_rows(ctx, layer);
}

/* Keys / values of one layer of one slot: ngpt_kv_rows rows of
 * ngpt_kv_key_row / ngpt_kv_value_row bytes (float32: KV*D floats); row =
 * position, or in a ring rows p % R and p % R + R; slots are consecutive
 * blocks. */
static inline const void *ngpt_kv_keys(const ngpt_context *ctx, int layer, int32_t slot)
{
    return ctx->plan.kv.k + ngpt_kv_first_row(ctx, layer, slot) * ctx->plan.kv.k_row;
}
static inline const void *ngpt_kv_values(const ngpt_context *ctx, int layer, int32_t slot)
{
    return ctx->plan.kv.v + ngpt_kv_first_row(ctx, layer, slot) * ctx->plan.kv.v_row;
}

/* The first position whose keys every local layer of the slot holds (0
 * without sliding windows): a ring's oldest, or a loaded session's. */
static inline int32_t ngpt_kv_held(const ngpt_context *ctx, int32_t slot)
{
    return ctx->plan.kv.held ? ctx->plan.kv.held[slot] : 0;
}

/* The traced attention rows of one layer of slots slot.., (H, Tctx) per
 * slot, or NULL when the plan has no trace. */
float *ngpt_kv_trace(const ngpt_context *ctx, int layer, int32_t slot);

/* Stores the key and value rows (KV*D floats each, stride floats apart) of
 * n new tokens of slot `slot` of one layer at positions len.. (the tokens
 * are recorded afterwards by ngpt_kv_commit); an 8-bit cache quantizes
 * each head's D values as they enter (quantize_q8). */
void ngpt_kv_write(ngpt_context *ctx, int layer, int32_t slot, int n, const float *keys,
                   const float *values, ptrdiff_t stride);

/* Records n tokens appended to slot `slot` (their keys and values are
 * written): the slot now holds len + n. */
void ngpt_kv_commit(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t n);

/* Empties slot `slot`, or every slot for -1. */
void ngpt_kv_clear(ngpt_context *ctx, int32_t slot);

/* Slot dst becomes a copy of slot src. */
void ngpt_kv_copy(ngpt_context *ctx, int32_t dst, int32_t src);

/* Slots 0..n-1 become copies of the old slots parent[0..n) (a permutation
 * with repeats, as beam search needs), moving each block at most twice with
 * one spare block. All n parents must hold the same number of tokens.
 * work: 3n ints. */
void ngpt_kv_reorder(ngpt_context *ctx, const int32_t *parent, int32_t n, int32_t *work);

/* Keeps the first n (0 <= n <= len) tokens of slot `slot`: rows 0..n-1 are
 * what a prefill of those n tokens alone computes (each row depends only on
 * the tokens up to it), so the slot is as if only they had been fed
 * (ngpt_context_cache_truncate; speculative generation cuts the proposals the
 * target did not accept). The traced row stays the last pass's. False when
 * a local layer no longer holds the keys the next position would read
 * (before ngpt_kv_held): the slot is unchanged, and its n tokens must be
 * fed again (ngpt_model_truncate does). */
bool ngpt_kv_truncate(ngpt_context *ctx, int32_t slot, int32_t n);

/* Slot `slot` becomes n tokens (tokens: n int32) with their keys and values
 * (rows: for each layer, n key rows, then n value rows, each as the cache
 * stores it: ngpt_kv_key_row / ngpt_kv_value_row bytes), read as bytes: the
 * source need not be aligned (a session file in memory). */
void ngpt_kv_restore(ngpt_context *ctx, int32_t slot, int32_t n, const void *tokens,
                     const void *rows, int32_t held);

/* Row of position p in a layer's block (ngpt_kv_keys / values) of rows of
 * `bytes`: p, or in a ring of R positions p % R. */
static inline const unsigned char *ngpt_kv_row_at(const void *block, size_t bytes, int32_t ring,
                                                  int32_t p)
{
    return (const unsigned char *)block + (size_t)(ring ? p % ring : p) * bytes;
}

/* Context shift (ngpt_context_cache_shift): drops the oldest `drop` tokens of slot
 * `slot` (0 <= drop <= its length); the kept n = len - drop move to positions
 * 0..n-1 with their values as they are and their keys rotated by -drop
 * positions: the RoPE transpose (rope_bwd) with the tables of position drop,
 * in float, on the keys as stored, i.e. R(-drop)R(p)k, not R(p-drop)k; 8-bit
 * keys are read back as floats (q * d), rotated and quantized again. */
void ngpt_kv_shift(ngpt_context *ctx, int32_t slot, int32_t drop);

#endif
