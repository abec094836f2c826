/* forward.c — the model's wiring (DESIGN.md §1), written once over the kernel
 * table. Shapes: B batch, T sequence, C model width, H heads, D = C/H,
 * F = d_ff, V vocabulary.
 *
 *   tokens (B,T) -> tok_emb -> dropout -> L x Block -> ln_f -> x tok_emb^T -> logits (B,T,V)
 *   Block: x = x + drop(Attn(ln1(x)));  x = x + drop(MLP(ln2(x)))
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "rng.h"

/* y (rows, out) = x (rows, in) W^T + bias, W stored (out, in) as in PyTorch. */
static void linear(const ngpt_kernels *k, float *y, const float *x, const float *w,
                   const float *bias, int rows, int in, int out)
{
    k->gemm(rows, out, in, x, in, 1, w, 1, in, bias, y, out, false);
}

/* Applies dropout of one site in place when dropout is on. */
static void drop(const ngpt_context *ctx, float *x, size_t n, uint64_t first, int layer, int kind)
{
    if (!ctx->dropout_on || ctx->cfg.dropout <= 0.0f) return;
    ngpt_dropout_key key = {ctx->dropout_seed, ctx->dropout_step,
                            ngpt_rng_site_dropout(layer, kind), ctx->cfg.dropout};
    ctx->k->dropout(x, x, n, first, &key);
}

static ngpt_status check_ids(const int32_t *ids, size_t n, int32_t V, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "forward: %s[%zu] = %d is not a token id in 0..%d",
                             what, i, (int)ids[i], (int)V - 1);
    return NGPT_OK;
}

/* Causal self-attention of one layer: a.qkv (B,T,3C) -> a.atty (B,T,C). */
static void attention(ngpt_context *ctx, const ngpt_layer_acts *a, int layer, int B, int T)
{
    const ngpt_kernels *k = ctx->k;
    const int C = ctx->cfg.d_model, H = ctx->cfg.n_heads, D = C / H;
    const ptrdiff_t row = 3 * (ptrdiff_t)C;
    const float scale = 1.0f / sqrtf((float)D);
    const bool dropping = ctx->dropout_on && ctx->cfg.dropout > 0.0f;
    const ngpt_dropout_key key = {ctx->dropout_seed, ctx->dropout_step,
                                  ngpt_rng_site_dropout(layer, NGPT_SITE_ATTN_PROBS),
                                  ctx->cfg.dropout};
    float *prow_scratch = ctx->plan.thread_rows;
    float *drow = ctx->plan.thread_rows + ctx->shape.seq;
    float *trace_rows = ctx->plan.trace_rows
        ? ctx->plan.trace_rows + (size_t)layer * ctx->shape.batch * H * ctx->shape.seq : NULL;

    for (int b = 0; b < B; b++) {
        const float *base = a->qkv + (size_t)b * T * row;
        for (int h = 0; h < H; h++) {
            const float *keys = base + C + h * D, *vals = base + 2 * C + h * D;
            for (int i = 0; i < T; i++) {
                size_t row_index = ((size_t)b * H + h) * T + i;   /* (b,h,i) of (B,H,T,T) */
                float *p = a->att ? a->att + row_index * T : prow_scratch;
                k->attn_scores(p, base + i * row + h * D, keys, row, i + 1, D, scale);
                k->softmax(p, p, i + 1);
                if (a->att) memset(p + i + 1, 0, (size_t)(T - i - 1) * sizeof(float));
                if (trace_rows && i == T - 1)
                    memcpy(trace_rows + ((size_t)b * H + h) * T, p, (size_t)T * sizeof(float));
                const float *pv = p;
                if (dropping) {
                    k->dropout(drow, p, (size_t)i + 1, row_index * T, &key);
                    pv = drow;
                }
                k->attn_wsum(a->atty + ((size_t)b * T + i) * C + h * D, pv, vals, row, i + 1, D);
            }
        }
    }
}

ngpt_status ngpt_forward(ngpt_context *ctx, const int32_t *tokens, int32_t B, int32_t T,
                         const int32_t *targets, float *loss)
{
    if (!ctx || !tokens) return ngpt_fail(NGPT_ERR_NULL_ARG, "forward: NULL context or tokens");
    const ngpt_config *cfg = &ctx->cfg;
    if (T > cfg->context_len)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "forward: sequence of %d tokens is longer than the "
                         "model's context T=%d", (int)T, (int)cfg->context_len);
    if (B < 1 || T < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "forward: batch and seq must be >= 1 (got %d, %d)",
                         (int)B, (int)T);
    if (B > ctx->shape.batch || T > ctx->shape.seq)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "forward: (batch=%d, seq=%d) exceeds the context's "
                         "planned (batch=%d, seq=%d)", (int)B, (int)T, (int)ctx->shape.batch,
                         (int)ctx->shape.seq);
    const size_t BT = (size_t)B * (size_t)T;
    ngpt_status st = check_ids(tokens, BT, cfg->vocab_size, "tokens");
    if (!st && targets) st = check_ids(targets, BT, cfg->vocab_size, "targets");
    if (st) return st;

    const ngpt_kernels *k = ctx->k;
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;
    const int C = cfg->d_model, F = cfg->d_ff, V = cfg->vocab_size, H = cfg->n_heads;
    const int L = cfg->n_layers, D = C / H;

    /* embedding (B,T) -> (B,T,C), then dropout (site: layer index L) */
    float *x = ngpt_layer_acts_get(ctx, 0, B, T).x_in;
    for (size_t i = 0; i < BT; i++)
        memcpy(x + i * C, W + lay->tok_emb + (size_t)tokens[i] * C, (size_t)C * sizeof(float));
    drop(ctx, x, BT * C, 0, L, NGPT_SITE_EMBED);

    for (int l = 0; l < L; l++) {
        ngpt_layer_acts a = ngpt_layer_acts_get(ctx, l, B, T);
        /* attention sublayer */
        k->layernorm_fwd(p->ln_out, a.ln1_mean, a.ln1_rstd, a.x_in,
                         ngpt_block_ptr(lay, W, l, lay->ln1_w), ngpt_block_ptr(lay, W, l, lay->ln1_b),
                         BT, C);
        linear(k, a.qkv, p->ln_out, ngpt_block_ptr(lay, W, l, lay->qkv_w), NULL, (int)BT, C, 3 * C);
        for (size_t r = 0; r < BT; r++) {       /* RoPE on q and k at position t = r % T */
            size_t t = r % (size_t)T;
            const float *cs = p->rope_cos + t * (D / 2), *sn = p->rope_sin + t * (D / 2);
            k->rope(a.qkv + r * 3 * C, H, D, cs, sn);
            k->rope(a.qkv + r * 3 * C + C, H, D, cs, sn);
        }
        attention(ctx, &a, l, B, T);
        linear(k, p->branch, a.atty, ngpt_block_ptr(lay, W, l, lay->proj_w), NULL, (int)BT, C, C);
        drop(ctx, p->branch, BT * C, 0, l, NGPT_SITE_ATTN_OUT);
        k->add(a.res1, a.x_in, p->branch, BT * C);
        /* MLP sublayer */
        k->layernorm_fwd(p->ln_out, a.ln2_mean, a.ln2_rstd, a.res1,
                         ngpt_block_ptr(lay, W, l, lay->ln2_w), ngpt_block_ptr(lay, W, l, lay->ln2_b),
                         BT, C);
        linear(k, a.fc1, p->ln_out, ngpt_block_ptr(lay, W, l, lay->fc1_w),
               ngpt_block_ptr(lay, W, l, lay->fc1_b), (int)BT, C, F);
        k->gelu_fwd(p->hidden, a.fc1, BT * F);
        linear(k, p->branch, p->hidden, ngpt_block_ptr(lay, W, l, lay->fc2_w),
               ngpt_block_ptr(lay, W, l, lay->fc2_b), (int)BT, F, C);
        drop(ctx, p->branch, BT * C, 0, l, NGPT_SITE_MLP_OUT);
        k->add(a.x_out, a.res1, p->branch, BT * C);
        x = a.x_out;
    }

    k->layernorm_fwd(p->lnf, p->lnf_mean, p->lnf_rstd, x, W + lay->lnf_w, W + lay->lnf_b, BT, C);
    linear(k, p->logits, p->lnf, W + lay->tok_emb, NULL, (int)BT, C, V);   /* tied lm_head */

    if (targets) {
        for (size_t i = 0; i < BT; i++) p->losses[i] = k->xent(p->logits + i * V, V, targets[i]);
        float mean = k->rsum(p->losses, BT) / (float)BT;
        if (loss) *loss = mean;
    } else if (loss) {
        *loss = NAN;
    }
    ctx->has_targets = targets && p->targets;   /* kept for ngpt_backward in train mode */
    if (ctx->has_targets) {
        memcpy(p->tokens, tokens, BT * sizeof(int32_t));
        memcpy(p->targets, targets, BT * sizeof(int32_t));
    }
    ctx->last_batch = B;
    ctx->last_seq = T;
    ctx->has_forward = true;
    return NGPT_OK;
}

ngpt_status ngpt_logits(const ngpt_context *ctx, const float **logits)
{
    if (!ctx || !logits) return ngpt_fail(NGPT_ERR_NULL_ARG, "logits: NULL argument");
    if (!ctx->has_forward) return ngpt_fail(NGPT_ERR_WRONG_MODE, "logits: no forward has run yet");
    *logits = ctx->plan.logits;
    return NGPT_OK;
}

ngpt_status ngpt_trace_get(const ngpt_context *ctx, int32_t layer, const float **probs,
                           size_t *count)
{
    if (!ctx || !probs || !count) return ngpt_fail(NGPT_ERR_NULL_ARG, "trace_get: NULL argument");
    if (layer < 0 || layer >= ctx->cfg.n_layers)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "trace_get: layer %d not in 0..%d", (int)layer,
                         (int)ctx->cfg.n_layers - 1);
    if (!ctx->has_forward) return ngpt_fail(NGPT_ERR_WRONG_MODE, "trace_get: no forward has run yet");
    const size_t B = (size_t)ctx->last_batch, T = (size_t)ctx->last_seq;
    const size_t H = (size_t)ctx->cfg.n_heads;
    const size_t plan_rows = (size_t)ctx->shape.batch * H * (size_t)ctx->shape.seq;
    if (ctx->shape.trace == NGPT_TRACE_FULL) {
        *probs = ctx->plan.att + (size_t)layer * plan_rows * (size_t)ctx->shape.seq;
        *count = B * H * T * T;
    } else if (ctx->shape.trace == NGPT_TRACE_LAST_ROW) {
        *probs = ctx->plan.trace_rows + (size_t)layer * plan_rows;
        *count = B * H * T;
    } else {
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "trace_get: the context was planned without a trace "
                         "(set ngpt_shape.trace)");
    }
    return NGPT_OK;
}
