/* forward.c — the model's wiring (DESIGN.md §1), written once over the kernel
 * table. Shapes: B batch, T sequence, C model width, H heads, D = C/H,
 * F = d_ff, V vocabulary.
 *
 *   tokens (B,T) -> tok_emb -> dropout -> L x Block -> ln_f -> x tok_emb^T -> logits (B,T,V)
 *   Block: x = x + drop(Attn(ln1(x)));  x = x + drop(MLP(ln2(x)))
 */
#include <math.h>
#include <string.h>

#include "cache.h"
#include "rng.h"

/* y (rows, out) = x (rows, in) W^T + bias, W stored (out, in) as in PyTorch. */
static void linear(const ngpt_context *ctx, float *y, const float *x, const float *w,
                   const float *bias, int rows, int in, int out)
{
    ctx->k->gemm(rows, out, in, x, in, 1, w, 1, in, bias, y, out, false, ctx->plan.gemm_work);
}

/* Applies dropout of one site in place (the caller checks that it is on). */
static void drop(const ngpt_context *ctx, float *x, size_t n, uint64_t first, int layer, int kind)
{
    const ngpt_dropout_key key = ngpt_dropout_key_of(ctx, layer, kind);
    ctx->k->dropout(x, x, n, first, &key);
}

static ngpt_status check_ids(const int32_t *ids, size_t n, int32_t V, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "ngpt_model_forward: %s[%zu] = %d is not a "
                             "token id in 0..%d", what, i, (int)ids[i], (int)V - 1);
    return NGPT_OK;
}

/* Position of row i of sequence s in this pass. */
static int32_t pass_pos0(const ngpt_context *ctx, const ngpt_pass *ps, int s)
{
    return ps->cached ? ngpt_kv_len(ctx, ps->slot0 + s) : 0;
}

/* Causal self-attention of one layer: a.qkv (nseq,len,3C) -> a.atty (nseq,len,C).
 * Query i of sequence s attends to keys 0..pos0+i: in a full pass they are the
 * pass's own qkv rows (stride 3C); in a cached pass the new keys/values are
 * first appended to the slot's cache (stride C). Same kernels, same chains. */
static void attention(ngpt_context *ctx, const ngpt_layer_acts *a, int layer, const ngpt_pass *ps,
                      bool dropping)
{
    const ngpt_kernels *k = ctx->k;
    const ngpt_plan *pl = &ctx->plan;
    const int C = ctx->cfg.d_model, H = ctx->cfg.n_heads, D = C / H;
    const int B = ps->nseq, T = ps->len;
    const size_t TC = (size_t)ctx->cfg.context_len;
    const ptrdiff_t row = 3 * (ptrdiff_t)C;
    const float scale = 1.0f / sqrtf((float)D);
    const ngpt_dropout_key key = ngpt_dropout_key_of(ctx, layer, NGPT_SITE_ATTN_PROBS);
    float *prow_scratch = pl->thread_rows;
    float *drow = pl->thread_rows + TC;
    /* the full (B,H,T,T) map only in a full pass; a cached pass traces the
     * last new token's row into the cache's trace (cache.h) */
    float *att = ps->cached ? NULL : a->att;
    float *trace_rows = NULL;
    if (!ps->cached && pl->trace_rows)
        trace_rows = pl->trace_rows + (size_t)layer * ctx->shape.batch * H * ctx->shape.seq;

    for (int b = 0; b < B; b++) {
        const float *base = a->qkv + (size_t)b * T * row;
        const int n0 = pass_pos0(ctx, ps, b);
        const float *keys = base + C, *vals = base + 2 * C;
        ptrdiff_t kv_stride = row;
        float *trace_cached = NULL;
        if (ps->cached) {
            const int32_t slot = ps->slot0 + b;
            float *kc = ngpt_kv_keys(ctx, layer, slot), *vc = ngpt_kv_values(ctx, layer, slot);
            for (int i = 0; i < T; i++) {
                memcpy(kc + (size_t)(n0 + i) * C, base + i * row + C, (size_t)C * sizeof(float));
                memcpy(vc + (size_t)(n0 + i) * C, base + i * row + 2 * C, (size_t)C * sizeof(float));
            }
            keys = kc;
            vals = vc;
            kv_stride = C;
            trace_cached = ngpt_kv_trace(ctx, layer, slot);
        }
        for (int h = 0; h < H; h++) {
            for (int i = 0; i < T; i++) {
                const int n = n0 + i + 1;                           /* keys visible to query i */
                size_t row_index = ((size_t)b * H + h) * T + i;   /* (b,h,i) of (B,H,T,T) */
                float *p = att ? att + row_index * T : prow_scratch;
                k->attn_scores(p, base + i * row + h * D, keys + h * D, kv_stride, n, D, scale);
                k->softmax(p, p, n);
                if (att) memset(p + n, 0, (size_t)(T - n) * sizeof(float));
                if (trace_rows && i == T - 1)
                    memcpy(trace_rows + ((size_t)b * H + h) * T, p, (size_t)T * sizeof(float));
                if (trace_cached && i == T - 1) {
                    float *tr = trace_cached + (size_t)h * TC;
                    memcpy(tr, p, (size_t)n * sizeof(float));
                    memset(tr + n, 0, (TC - (size_t)n) * sizeof(float));
                }
                const float *pv = p;
                if (dropping) {
                    k->dropout(drow, p, (size_t)n, row_index * T, &key);
                    pv = drow;
                }
                k->attn_wsum(a->atty + ((size_t)b * T + i) * C + h * D, pv, vals + h * D,
                             kv_stride, n, D);
            }
        }
    }
}

/* One transformer block (DESIGN §1), in place on the residual stream. */
static void block(ngpt_context *ctx, int l, const ngpt_pass *ps, bool dropping)
{
    const ngpt_kernels *k = ctx->k;
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;
    const int C = ctx->cfg.d_model, F = ctx->cfg.d_ff, H = ctx->cfg.n_heads, D = C / H;
    const int B = ps->nseq, T = ps->len;
    const size_t BT = (size_t)B * (size_t)T;
    ngpt_layer_acts a = ngpt_layer_acts_get(ctx, l);

    /* attention sublayer */
    k->layernorm_fwd(p->ln_out, a.ln1_mean, a.ln1_rstd, a.x_in,
                     ngpt_block_ptr(lay, W, l, lay->ln1_w), ngpt_block_ptr(lay, W, l, lay->ln1_b),
                     BT, C);
    linear(ctx, a.qkv, p->ln_out, ngpt_block_ptr(lay, W, l, lay->qkv_w), NULL, (int)BT, C, 3 * C);
    for (int b = 0; b < B; b++) {           /* RoPE on q and k at the row's position */
        const int n0 = pass_pos0(ctx, ps, b);
        for (int i = 0; i < T; i++) {
            size_t r = (size_t)b * T + i, t = (size_t)(n0 + i);
            const float *cs = p->rope_cos + t * (D / 2), *sn = p->rope_sin + t * (D / 2);
            k->rope(a.qkv + r * 3 * C, H, D, cs, sn);
            k->rope(a.qkv + r * 3 * C + C, H, D, cs, sn);
        }
    }
    attention(ctx, &a, l, ps, dropping);
    linear(ctx, p->branch, a.atty, ngpt_block_ptr(lay, W, l, lay->proj_w), NULL, (int)BT, C, C);
    if (dropping) drop(ctx, p->branch, BT * C, 0, l, NGPT_SITE_ATTN_OUT);
    k->add(a.res1, a.x_in, p->branch, BT * C);
    /* MLP sublayer */
    k->layernorm_fwd(p->ln_out, a.ln2_mean, a.ln2_rstd, a.res1,
                     ngpt_block_ptr(lay, W, l, lay->ln2_w), ngpt_block_ptr(lay, W, l, lay->ln2_b),
                     BT, C);
    linear(ctx, a.fc1, p->ln_out, ngpt_block_ptr(lay, W, l, lay->fc1_w),
           ngpt_block_ptr(lay, W, l, lay->fc1_b), (int)BT, C, F);
    k->gelu_fwd(p->hidden, a.fc1, BT * F);
    linear(ctx, p->branch, p->hidden, ngpt_block_ptr(lay, W, l, lay->fc2_w),
           ngpt_block_ptr(lay, W, l, lay->fc2_b), (int)BT, F, C);
    if (dropping) drop(ctx, p->branch, BT * C, 0, l, NGPT_SITE_MLP_OUT);
    k->add(a.x_out, a.res1, p->branch, BT * C);
}

void ngpt_model_pass(ngpt_context *ctx, const ngpt_pass *ps)
{
    const ngpt_kernels *k = ctx->k;
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;
    const int C = ctx->cfg.d_model, V = ctx->cfg.vocab_size, L = ctx->cfg.n_layers;
    const size_t BT = (size_t)ps->nseq * (size_t)ps->len;
    /* generation is always eval: dropout only in a full pass */
    const bool dropping = !ps->cached && ngpt_dropout_active(ctx);

    /* embedding (B,T) -> (B,T,C), then dropout (site: layer index L) */
    float *x = ngpt_layer_acts_get(ctx, 0).x_in;
    for (size_t i = 0; i < BT; i++)
        memcpy(x + i * C, W + lay->tok_emb + (size_t)ps->tokens[i] * C, (size_t)C * sizeof(float));
    if (dropping) drop(ctx, x, BT * C, 0, L, NGPT_SITE_EMBED);

    for (int l = 0; l < L; l++) block(ctx, l, ps, dropping);
    x = ngpt_layer_acts_get(ctx, L - 1).x_out;

    k->layernorm_fwd(p->lnf, p->lnf_mean, p->lnf_rstd, x, W + lay->lnf_w, W + lay->lnf_b, BT, C);
    linear(ctx, p->logits, p->lnf, W + lay->tok_emb, NULL, (int)BT, C, V);   /* tied lm_head */
}

ngpt_status ngpt_model_forward(ngpt_context *ctx, const int32_t *tokens, int32_t B, int32_t T,
                         const int32_t *targets, float *loss)
{
    if (!ctx || !tokens)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_forward: NULL context or tokens");
    const ngpt_config *cfg = &ctx->cfg;
    if (T > cfg->context_len)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "ngpt_model_forward: a sequence of %d tokens is "
                         "longer than the model's context T=%d", (int)T, (int)cfg->context_len);
    if (B < 1 || T < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_model_forward: batch and seq must be >= 1, got "
                         "%d and %d", (int)B, (int)T);
    if (B > ctx->shape.batch || T > ctx->shape.seq)
        return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "ngpt_model_forward: (batch=%d, seq=%d) exceeds "
                         "the context's planned (batch=%d, seq=%d); plan a larger shape",
                         (int)B, (int)T, (int)ctx->shape.batch, (int)ctx->shape.seq);
    const size_t BT = (size_t)B * (size_t)T;
    ngpt_status st = check_ids(tokens, BT, cfg->vocab_size, "tokens");
    if (!st && targets) st = check_ids(targets, BT, cfg->vocab_size, "targets");
    if (st) return st;
    ngpt_forward_run(ctx, tokens, B, T, targets, loss);
    return NGPT_OK;
}

void ngpt_forward_run(ngpt_context *ctx, const int32_t *tokens, int32_t B, int32_t T,
                      const int32_t *targets, float *loss)
{
    const ngpt_pass pass = {tokens, B, T, false, 0};
    ngpt_model_pass(ctx, &pass);

    ngpt_plan *p = &ctx->plan;
    const int V = ctx->cfg.vocab_size;
    const size_t BT = (size_t)B * (size_t)T;
    if (targets) {
        for (size_t i = 0; i < BT; i++) p->losses[i] = ctx->k->xent(p->logits + i * V, V, targets[i]);
        float mean = ctx->k->rsum(p->losses, BT) / (float)BT;
        if (loss) *loss = mean;
    } else if (loss) {
        *loss = NAN;
    }
    ngpt_run_pass_done(ctx, B, T, false, 0);
    if (targets && p->targets) {    /* train mode: kept for ngpt_model_backward */
        memcpy(p->tokens, tokens, BT * sizeof(int32_t));
        memcpy(p->targets, targets, BT * sizeof(int32_t));
        ctx->run.backward_ready = true;
    }
}

ngpt_status ngpt_logits_data(const ngpt_context *ctx, const float **logits)
{
    if (!ctx || !logits) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_logits_data: NULL argument");
    if (!ctx->run.pass.valid)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_logits_data: there are no logits yet; run a "
                         "forward, prefill or decode first");
    *logits = ctx->plan.logits;
    return NGPT_OK;
}

ngpt_status ngpt_trace_data(const ngpt_context *ctx, int32_t layer, const float **probs,
                           size_t *count)
{
    if (!ctx || !probs || !count)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_trace_data: NULL argument");
    if (layer < 0 || layer >= ctx->cfg.n_layers)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_trace_data: layer %d is not in 0..%d", (int)layer,
                         (int)ctx->cfg.n_layers - 1);
    if (!ctx->run.pass.valid)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_trace_data: there is no trace yet; run a "
                         "forward, prefill or decode first");
    const size_t B = (size_t)ctx->run.pass.batch, T = (size_t)ctx->run.pass.seq;
    const size_t H = (size_t)ctx->cfg.n_heads;
    const size_t plan_rows = (size_t)ctx->shape.batch * H * (size_t)ctx->shape.seq;
    if (ctx->run.pass.cached && ctx->plan.kv_trace) {   /* prefill/decode: (nseq, H, Tctx) */
        const size_t TC = (size_t)ctx->cfg.context_len;
        *probs = ngpt_kv_trace(ctx, layer, ctx->run.pass.slot0);
        *count = B * H * TC;
    } else if (ctx->shape.trace == NGPT_TRACE_FULL) {
        *probs = ctx->plan.att + (size_t)layer * plan_rows * (size_t)ctx->shape.seq;
        *count = B * H * T * T;
    } else if (ctx->shape.trace == NGPT_TRACE_LAST_ROW) {
        *probs = ctx->plan.trace_rows + (size_t)layer * plan_rows;
        *count = B * H * T;
    } else {
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_trace_data: the context was planned "
                         "without a trace; set ngpt_shape.trace");
    }
    return NGPT_OK;
}
