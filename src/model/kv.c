/* kv.c — the KV cache's storage (layout and invariant in kv.h): the only
 * code that writes plan.kv. */
#include <string.h>

#include "model/acts.h"
#include "model/kv.h"
#include "ops/ops.h"

/* Writable views of what kv.h's accessors read. */
static unsigned char *keys_at(ngpt_context *ctx, int layer, int32_t slot)
{
    return (unsigned char *)ngpt_kv_keys(ctx, layer, slot);
}
static unsigned char *values_at(ngpt_context *ctx, int layer, int32_t slot)
{
    return (unsigned char *)ngpt_kv_values(ctx, layer, slot);
}
static int32_t *tokens_at(ngpt_context *ctx, int32_t slot)
{
    return (int32_t *)ngpt_kv_tokens(ctx, slot);
}

float *ngpt_kv_trace(const ngpt_context *ctx, int layer, int32_t slot)
{
    if (!ctx->plan.kv.trace) return NULL;
    const size_t rows = (size_t)ctx->cfg.n_heads * (size_t)ctx->cfg.context_len;
    return ctx->plan.kv.trace + ((size_t)layer * (size_t)ctx->shape.batch + (size_t)slot) * rows;
}

/* n rows of KV*D floats (stride floats apart) into cache rows of `row`
 * bytes: copied, or each head's D values quantized (q8). */
static void store_rows(const ngpt_context *ctx, unsigned char *dst, size_t row, bool q8, int n,
                       const float *src, ptrdiff_t stride)
{
    const int KV = ngpt_cfg_kv_heads(&ctx->cfg), D = ngpt_cfg_head_dim(&ctx->cfg);
    for (int i = 0; i < n; i++) {
        if (q8)
            ctx->k->quantize_q8((int8_t *)(dst + (size_t)i * row), (ptrdiff_t)ngpt_q8_head_bytes(D),
                                src + i * stride, D, KV, D);
        else
            memcpy(dst + (size_t)i * row, src + i * stride, row);
    }
}

void ngpt_kv_write(ngpt_context *ctx, int layer, int32_t slot, int n, const float *keys,
                   const float *values, ptrdiff_t stride)
{
    const size_t n0 = (size_t)ngpt_kv_len(ctx, slot);
    const size_t kr = ngpt_kv_key_row(ctx), vr = ngpt_kv_value_row(ctx);
    store_rows(ctx, keys_at(ctx, layer, slot) + n0 * kr, kr, ngpt_kv_keys_q8(ctx), n, keys, stride);
    store_rows(ctx, values_at(ctx, layer, slot) + n0 * vr, vr, ngpt_kv_values_q8(ctx), n, values,
               stride);
}

void ngpt_kv_commit(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t n)
{
    memcpy(tokens_at(ctx, slot) + ngpt_kv_len(ctx, slot), tokens, (size_t)n * sizeof(int32_t));
    ctx->plan.kv.len[slot] += n;
}

void ngpt_kv_clear(ngpt_context *ctx, int32_t slot)
{
    if (slot < 0) memset(ctx->plan.kv.len, 0, (size_t)ctx->shape.batch * sizeof(int32_t));
    else ctx->plan.kv.len[slot] = 0;
}

void ngpt_kv_truncate(ngpt_context *ctx, int32_t slot, int32_t n)
{
    ctx->plan.kv.len[slot] = n;     /* rows past len are never read (kv.h's invariant) */
}

void ngpt_kv_restore(ngpt_context *ctx, int32_t slot, int32_t n, const void *tokens,
                     const void *rows)
{
    const size_t kb = (size_t)n * ngpt_kv_key_row(ctx), vb = (size_t)n * ngpt_kv_value_row(ctx);
    const unsigned char *p = rows;
    for (int l = 0; l < ctx->cfg.n_layers; l++, p += kb + vb) {
        memcpy(keys_at(ctx, l, slot), p, kb);
        memcpy(values_at(ctx, l, slot), p + kb, vb);
    }
    memcpy(tokens_at(ctx, slot), tokens, (size_t)n * sizeof(int32_t));
    ctx->plan.kv.len[slot] = n;
}

void ngpt_kv_copy(ngpt_context *ctx, int32_t dst, int32_t src)
{
    if (dst == src) return;
    const size_t n = (size_t)ngpt_kv_len(ctx, src);
    const size_t kb = n * ngpt_kv_key_row(ctx), vb = n * ngpt_kv_value_row(ctx);
    for (int l = 0; l < ctx->cfg.n_layers; l++) {
        memcpy(keys_at(ctx, l, dst), ngpt_kv_keys(ctx, l, src), kb);
        memcpy(values_at(ctx, l, dst), ngpt_kv_values(ctx, l, src), vb);
    }
    memcpy(tokens_at(ctx, dst), ngpt_kv_tokens(ctx, src), n * sizeof(int32_t));
    ctx->plan.kv.len[dst] = (int32_t)n;
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

/* One slot-layer block (Tctx rows, and at least KV*D floats) of scratch,
 * between passes: the plan's own, or, where the plan left it out because
 * it holds one, the qkv buffer of the activations (model/acts.c), which no
 * pass is using then. */
static float *reorder_scratch(ngpt_context *ctx)
{
    const size_t kr = ngpt_kv_key_row(ctx), vr = ngpt_kv_value_row(ctx);
    const size_t block = (size_t)ctx->cfg.context_len * (kr > vr ? kr : vr) / sizeof(float);
    const size_t need = block > ngpt_kv_width(ctx) ? block : ngpt_kv_width(ctx);
    if (ctx->plan.kv.tmp) return ctx->plan.kv.tmp;
    ngpt_acts_handover(ctx->plan.qkv, need);
    return ctx->plan.qkv;
}

void ngpt_kv_reorder(ngpt_context *ctx, const int32_t *parent, int32_t n, int32_t *work)
{
    const size_t TC = (size_t)ctx->cfg.context_len;
    const size_t kr = ngpt_kv_key_row(ctx), vr = ngpt_kv_value_row(ctx);
    const size_t len = (size_t)ngpt_kv_len(ctx, parent[0]);
    unsigned char *tmp = (unsigned char *)reorder_scratch(ctx);
    for (int l = 0; l < ctx->cfg.n_layers; l++) {
        permute(keys_at(ctx, l, 0), TC * kr, len * kr, tmp, parent, n, work);
        permute(values_at(ctx, l, 0), TC * vr, len * vr, tmp, parent, n, work);
    }
    permute((unsigned char *)tokens_at(ctx, 0), TC * sizeof(int32_t), len * sizeof(int32_t),
            tmp, parent, n, work);
    for (int32_t i = 0; i < n; i++) ctx->plan.kv.len[i] = (int32_t)len;
}

void ngpt_kv_shift(ngpt_context *ctx, int32_t slot, int32_t drop)
{
    const int32_t len = ngpt_kv_len(ctx, slot), n = len - drop;
    if (drop == 0) return;
    const int KV = ngpt_cfg_kv_heads(&ctx->cfg), D = ngpt_cfg_head_dim(&ctx->cfg);
    const size_t kr = ngpt_kv_key_row(ctx), vr = ngpt_kv_value_row(ctx);
    const size_t hb = ngpt_q8_head_bytes(D);
    const bool q8 = ngpt_kv_keys_q8(ctx);
    const ngpt_rope_fn unrotate = ctx->cfg.rope_pairs == NGPT_ROPE_HALVES ? ctx->k->rope_halves_bwd
                                                                          : ctx->k->rope_bwd;
    float *row = q8 ? reorder_scratch(ctx) : NULL;     /* one row of KV*D floats */
    for (int l = 0; l < ctx->cfg.n_layers; l++) {
        const float *cs, *sn;      /* the layer's tables (a local layer's own base) */
        ngpt_op_rope_tables(ctx, l, &cs, &sn);
        cs += (size_t)drop * (size_t)(D / 2);
        sn += (size_t)drop * (size_t)(D / 2);
        unsigned char *k = keys_at(ctx, l, slot), *v = values_at(ctx, l, slot);
        memmove(k, k + (size_t)drop * kr, (size_t)n * kr);
        memmove(v, v + (size_t)drop * vr, (size_t)n * vr);
        /* the transpose of position drop's rotation turns every pair back by
         * drop*freq_i; the n kept rows are n*KV contiguous head vectors */
        if (!q8) {
            unrotate((float *)(void *)k, n * KV, D, cs, sn);
            continue;
        }
        /* 8-bit keys: each row read back (q * d, one product), turned, and
         * quantized again by the rule every key entered by */
        for (int32_t i = 0; i < n; i++) {
            int8_t *r = (int8_t *)(k + (size_t)i * kr);
            for (int h = 0; h < KV; h++) {
                const int8_t *q = r + (size_t)h * hb;
                const float *d = ngpt_q8_row_scales(q, D);
                for (int t = 0; t < D; t++) row[h * D + t] = (float)q[t] * d[t / NGPT_Q8_GROUP];
            }
            unrotate(row, KV, D, cs, sn);
            ctx->k->quantize_q8(r, (ptrdiff_t)hb, row, D, KV, D);
        }
    }
    int32_t *tok = tokens_at(ctx, slot);
    memmove(tok, tok + drop, (size_t)n * sizeof(int32_t));
    ctx->plan.kv.len[slot] = n;
}
