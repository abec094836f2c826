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

/* The ring of the cache's local layers (they share W), or 0. */
static int32_t ring_of(const ngpt_context *ctx)
{
    for (int l = 0; l < ctx->cfg.n_layers; l++)
        if (ngpt_kv_ring(ctx, l)) return ngpt_kv_ring(ctx, l);
    return 0;
}

void ngpt_kv_write(ngpt_context *ctx, int layer, int32_t slot, int n, const float *keys,
                   const float *values, ptrdiff_t stride)
{
    const size_t n0 = (size_t)ngpt_kv_len(ctx, slot);
    const size_t kr = ngpt_kv_key_row(ctx), vr = ngpt_kv_value_row(ctx);
    const bool k8 = ngpt_kv_keys_q8(ctx), v8 = ngpt_kv_values_q8(ctx);
    unsigned char *k = keys_at(ctx, layer, slot), *v = values_at(ctx, layer, slot);
    const size_t R = (size_t)ngpt_kv_ring(ctx, layer);
    if (!R) {
        store_rows(ctx, k + n0 * kr, kr, k8, n, keys, stride);
        store_rows(ctx, v + n0 * vr, vr, v8, n, values, stride);
        return;
    }
    for (int i = 0; i < n; i++)     /* a ring: rows p % R and p % R + R */
        for (size_t r = (n0 + (size_t)i) % R; r < 2 * R; r += R) {
            store_rows(ctx, k + r * kr, kr, k8, 1, keys + i * stride, stride);
            store_rows(ctx, v + r * vr, vr, v8, 1, values + i * stride, stride);
        }
}

void ngpt_kv_commit(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t n)
{
    int32_t *dst = tokens_at(ctx, slot) + ngpt_kv_len(ctx, slot);
    if (dst != tokens) memcpy(dst, tokens, (size_t)n * sizeof(int32_t));  /* (a re-feed) */
    ctx->plan.kv.len[slot] += n;
    const int32_t R = ring_of(ctx), len = ctx->plan.kv.len[slot];
    if (R && len - R > ctx->plan.kv.held[slot]) ctx->plan.kv.held[slot] = len - R;
}

void ngpt_kv_clear(ngpt_context *ctx, int32_t slot)
{
    const size_t B = (size_t)ctx->shape.batch;
    if (slot < 0) memset(ctx->plan.kv.len, 0, B * sizeof(int32_t));
    else ctx->plan.kv.len[slot] = 0;
    if (ctx->plan.kv.held && slot < 0) memset(ctx->plan.kv.held, 0, B * sizeof(int32_t));
    else if (ctx->plan.kv.held) ctx->plan.kv.held[slot] = 0;
}

bool ngpt_kv_truncate(ngpt_context *ctx, int32_t slot, int32_t n)
{
    /* the next position n reads keys n - W + 1..: still held? */
    const int32_t W = ctx->cfg.sliding_window;
    if (n > 0 && n < ngpt_kv_len(ctx, slot) && n - W + 1 < ngpt_kv_held(ctx, slot)) return false;
    ctx->plan.kv.len[slot] = n;     /* rows past len are never read (kv.h's invariant) */
    return true;
}

void ngpt_kv_restore(ngpt_context *ctx, int32_t slot, int32_t n, const void *tokens,
                     const void *rows, int32_t held)
{
    const size_t kr = ngpt_kv_key_row(ctx), vr = ngpt_kv_value_row(ctx);
    const size_t kb = (size_t)n * kr, vb = (size_t)n * vr;
    const unsigned char *p = rows;
    for (int l = 0; l < ctx->cfg.n_layers; l++, p += kb + vb) {
        const int32_t R = ngpt_kv_ring(ctx, l);
        if (!R) {
            memcpy(keys_at(ctx, l, slot), p, kb);
            memcpy(values_at(ctx, l, slot), p + kb, vb);
            continue;
        }
        for (int32_t q = n > R ? n - R : 0; q < n; q++)     /* a ring: its last R positions */
            for (size_t r = (size_t)(q % R); r < 2 * (size_t)R; r += (size_t)R) {
                memcpy(keys_at(ctx, l, slot) + r * kr, p + (size_t)q * kr, kr);
                memcpy(values_at(ctx, l, slot) + r * vr, p + kb + (size_t)q * vr, vr);
            }
    }
    memcpy(tokens_at(ctx, slot), tokens, (size_t)n * sizeof(int32_t));
    ctx->plan.kv.len[slot] = n;
    if (ctx->plan.kv.held) {
        const int32_t R = ring_of(ctx);
        ctx->plan.kv.held[slot] = R && n - R > held ? n - R : held;
    }
}

/* Bytes of layer l's rows a copy of a slot of n tokens moves: n rows, or a
 * ring's whole block. */
static size_t rows_bytes(const ngpt_context *ctx, int l, size_t n, size_t row)
{
    return (ngpt_kv_ring(ctx, l) ? ngpt_kv_rows(ctx, l) : n) * row;
}

void ngpt_kv_copy(ngpt_context *ctx, int32_t dst, int32_t src)
{
    if (dst == src) return;
    const size_t n = (size_t)ngpt_kv_len(ctx, src);
    const size_t kr = ngpt_kv_key_row(ctx), vr = ngpt_kv_value_row(ctx);
    for (int l = 0; l < ctx->cfg.n_layers; l++) {
        memcpy(keys_at(ctx, l, dst), ngpt_kv_keys(ctx, l, src), rows_bytes(ctx, l, n, kr));
        memcpy(values_at(ctx, l, dst), ngpt_kv_values(ctx, l, src), rows_bytes(ctx, l, n, vr));
    }
    memcpy(tokens_at(ctx, dst), ngpt_kv_tokens(ctx, src), n * sizeof(int32_t));
    ctx->plan.kv.len[dst] = (int32_t)n;
    if (ctx->plan.kv.held) ctx->plan.kv.held[dst] = ctx->plan.kv.held[src];
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
        const size_t rows = ngpt_kv_rows(ctx, l);
        permute(keys_at(ctx, l, 0), rows * kr, rows_bytes(ctx, l, len, kr), tmp, parent, n, work);
        permute(values_at(ctx, l, 0), rows * vr, rows_bytes(ctx, l, len, vr), tmp, parent, n, work);
    }
    permute((unsigned char *)tokens_at(ctx, 0), TC * sizeof(int32_t), len * sizeof(int32_t),
            tmp, parent, n, work);
    for (int32_t i = 0; i < n; i++) ctx->plan.kv.len[i] = (int32_t)len;
    if (ctx->plan.kv.held) {    /* beams of one history: the same held position */
        const int32_t held = ctx->plan.kv.held[parent[0]];
        for (int32_t i = 0; i < n; i++) ctx->plan.kv.held[i] = held;
    }
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
        /* a ring of R: position p - drop's row is p's moved back by drop % R
         * (the rows past R repeat the first R, so the move reads inside) */
        const size_t R = (size_t)ngpt_kv_ring(ctx, l), from = R ? (size_t)drop % R : (size_t)drop;
        const int32_t rows = R ? (int32_t)R : n;
        memmove(k, k + from * kr, (size_t)rows * kr);
        memmove(v, v + from * vr, (size_t)rows * vr);
        /* the transpose of position drop's rotation turns every pair back by
         * drop*freq_i; the kept rows are rows*KV contiguous head vectors */
        if (!q8) unrotate((float *)(void *)k, rows * KV, D, cs, sn);
        /* 8-bit keys: each row read back (q * d, one product), turned, and
         * quantized again by the rule every key entered by */
        for (int32_t i = 0; q8 && i < rows; i++) {
            int8_t *r = (int8_t *)(k + (size_t)i * kr);
            for (int h = 0; h < KV; h++) {
                const int8_t *q = r + (size_t)h * hb;
                const float *d = ngpt_q8_row_scales(q, D);
                for (int t = 0; t < D; t++) row[h * D + t] = (float)q[t] * d[t / NGPT_Q8_GROUP];
            }
            unrotate(row, KV, D, cs, sn);
            ctx->k->quantize_q8(r, (ptrdiff_t)hb, row, D, KV, D);
        }
        if (R) {    /* the ring's second copy */
            memcpy(k + R * kr, k, R * kr);
            memcpy(v + R * vr, v, R * vr);
        }
    }
    int32_t *tok = tokens_at(ctx, slot);
    memmove(tok, tok + drop, (size_t)n * sizeof(int32_t));
    ctx->plan.kv.len[slot] = n;
    if (ctx->plan.kv.held) {
        const int32_t held = ctx->plan.kv.held[slot] - drop;
        ctx->plan.kv.held[slot] = held > 0 ? held : 0;
    }
}
