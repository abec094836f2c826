/* forward.c — the model's wiring (DESIGN.md §1), written once over the ops
 * (ops.h: the kernels, split across the thread pool). Shapes: B batch, T sequence, C model width, H heads, D = C/H,
 * F = d_ff, V vocabulary.
 *
 *   tokens (B,T) -> tok_emb -> dropout -> L x Block -> ln_f -> x tok_emb^T -> logits (B,T,V)
 *   Block: x = x + drop(Attn(ln1(x)));  x = x + drop(MLP(ln2(x)))
 *
 * The variants (ngpt_config) change parts of it: [+ pos table] after tok_emb,
 * post-norm blocks, a bias on qkv, no ln_f, an untied lm_head (lay.lm_head).
 */
#include <math.h>
#include <string.h>

#include "cache.h"
#include "fpmode.h"
#include "ops.h"
#include "packed.h"
#include "rng.h"

/* Applies dropout of one site in place (the caller checks that it is on). */
static void drop(ngpt_context *ctx, float *x, size_t n, int layer, int kind)
{
    const ngpt_dropout_key key = ngpt_dropout_key_of(ctx, layer, kind);
    ngpt_op_dropout(ctx, x, x, n, 0, &key);
}

static ngpt_status check_ids(const int32_t *ids, size_t n, int32_t V, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "ngpt_model_forward: %s[%zu] = %d is not a "
                             "token id in 0..%d", what, i, (int)ids[i], (int)V - 1);
    return NGPT_OK;
}

/* Causal self-attention of one layer: a.qkv (nseq,len,3C) -> a.atty (nseq,len,C),
 * the rows of queries q0..len-1 (q0 > 0: a last_only pass's last layer).
 * Query i of sequence s attends to keys 0..pos0+i: in a full pass they are the
 * pass's own qkv rows (stride 3C); in a cached pass the new keys/values are
 * first appended to the slot's cache (stride C). Same kernels, same chains. */
static void attention(ngpt_context *ctx, const ngpt_layer_acts *a, int layer, const ngpt_pass *ps,
                      bool dropping, int q0)
{
    const ngpt_plan *pl = &ctx->plan;
    const int C = ctx->cfg.d_model, H = ctx->cfg.n_heads;
    const int B = ps->nseq, T = ps->len;
    const size_t TC = (size_t)ctx->cfg.context_len;
    const ptrdiff_t row = 3 * (ptrdiff_t)C;
    ngpt_attn at = {.qkv = a->qkv, .k = a->qkv + C, .v = a->qkv + 2 * C,
                    .kv_seq = (ptrdiff_t)T * row, .kv_row = row, .nseq = B, .len = T,
                    .out = a->atty, .q0 = q0, .dropping = dropping,
                    .key = ngpt_dropout_key_of(ctx, layer, NGPT_SITE_ATTN_PROBS)};
    if (ps->cached) {
        /* the new rows go after each slot's kv_len; attention reads the cache */
        for (int b = 0; b < B; b++) {
            const int32_t slot = ps->slot0 + b, n0 = ngpt_kv_len(ctx, slot);
            const float *src = a->qkv + (size_t)b * T * row;
            float *kc = ngpt_kv_keys(ctx, layer, slot), *vc = ngpt_kv_values(ctx, layer, slot);
            for (int i = 0; i < T; i++) {
                memcpy(kc + (size_t)(n0 + i) * C, src + i * row + C, (size_t)C * sizeof(float));
                memcpy(vc + (size_t)(n0 + i) * C, src + i * row + 2 * C, (size_t)C * sizeof(float));
            }
        }
        /* slots slot0.. are consecutive blocks of (Tctx, C) */
        at.k = ngpt_kv_keys(ctx, layer, ps->slot0);
        at.v = ngpt_kv_values(ctx, layer, ps->slot0);
        at.kv_seq = (ptrdiff_t)(TC * C);
        at.kv_row = C;
        at.pos0 = pl->kv_len + ps->slot0;
        /* the last new token's row, (H, Tctx) per slot (cache.h) */
        at.cache_rows = ngpt_kv_trace(ctx, layer, ps->slot0);
        at.row_len = (int)TC;
    } else {
        at.probs = a->att;      /* the full (B,H,T,T) map: training, or a FULL trace */
        if (pl->trace_rows)
            at.last_rows = pl->trace_rows + (size_t)layer * ctx->shape.batch * H * ctx->shape.seq;
    }
    ngpt_op_attention_fwd(ctx, &at);
}

/* y (rows, out) = x (rows, in) W^T + bias for Linear `which` of layer l,
 * W = w stored (out, in) as in PyTorch: a cached pass (prefill, decode)
 * multiplies by the packed copy of W (packed.h), a full pass by the
 * parameters through gemm, which packs its blocks itself (ngpt_model_pass
 * refreshes the copy before a cached pass). */
static void linear(ngpt_context *ctx, const ngpt_pass *ps, int l, ngpt_linear which, float *y,
                   const float *x, const float *w, const float *bias, int rows, int in, int out)
{
    if (ps->cached)
        ngpt_op_linear_packed(ctx, y, x, ngpt_packed_w(ctx, l, which), bias, rows, in, out);
    else
        ngpt_op_linear(ctx, y, x, w, bias, rows, in, out);
}

/* One transformer block (DESIGN §1), in place on the residual stream.
 * Pre-norm (the original): x = x + drop(Attn(ln1(x))); x = x + drop(MLP(ln2(x))).
 * Post-norm: x = ln1(x + drop(Attn(x))); x = ln2(x + drop(MLP(x))). */
static void block(ngpt_context *ctx, int l, const ngpt_pass *ps, bool dropping)
{
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;
    const int C = ctx->cfg.d_model, F = ctx->cfg.d_ff;
    const int B = ps->nseq, T = ps->len;
    const size_t BT = (size_t)B * (size_t)T;
    const bool post = ctx->cfg.norm == NGPT_NORM_POST;
    ngpt_layer_acts a = ngpt_layer_acts_get(ctx, l);
    /* rows r0..BT-1 go on past the attention: all of them, or only the last
     * in the last layer of a last_only pass (one sequence) */
    const bool last = ps->last_only && l == ctx->cfg.n_layers - 1;
    const size_t r0 = last ? BT - 1 : 0, R = BT - r0;
#define WB(field) ngpt_block_ptr(lay, W, l, lay->field)     /* layer l's parameter */

    /* attention sublayer: [ln1] (BT,C) -> qkv (BT,3C) [+ bias] -> [RoPE on q,k]
     * -> attention (R,C) -> proj (R,C) -> dropout -> + residual */
    const float *attn_in = a.x_in;
    if (!post) {
        ngpt_op_layernorm_fwd(ctx, p->ln_out, a.ln1_mean, a.ln1_rstd, a.x_in, WB(ln1_w),
                              WB(ln1_b), BT, C);
        attn_in = p->ln_out;
    }
    linear(ctx, ps, l, NGPT_LINEAR_QKV, a.qkv, attn_in, WB(qkv_w),
           ctx->cfg.qkv_bias ? WB(qkv_b) : NULL, (int)BT, C, 3 * C);
    if (ctx->cfg.pos == NGPT_POS_ROPE)
        ngpt_op_rope(ctx, a.qkv, B, T, ps->cached ? p->kv_len + ps->slot0 : NULL, false);
    attention(ctx, &a, l, ps, dropping, last ? T - 1 : 0);
    float *atty = a.atty + r0 * C, *res1 = a.res1 + r0 * C;
    const float *x_in = a.x_in + r0 * C;
    linear(ctx, ps, l, NGPT_LINEAR_PROJ, p->branch, atty, WB(proj_w), NULL, (int)R, C, C);
    if (dropping) drop(ctx, p->branch, BT * C, l, NGPT_SITE_ATTN_OUT);
    ngpt_op_add(ctx, res1, x_in, p->branch, R * C);
    /* MLP sublayer: ln (R,C) -> fc1 (R,F) -> GELU -> fc2 (R,C) -> dropout -> + residual;
     * pre-norm: ln2(res1), residual res1; post-norm: ln1(res1) is both, and ln2
     * normalises the sum */
    if (post)
        ngpt_op_layernorm_fwd(ctx, p->ln_out, a.ln1_mean + r0, a.ln1_rstd + r0, res1,
                              WB(ln1_w), WB(ln1_b), R, C);
    else
        ngpt_op_layernorm_fwd(ctx, p->ln_out, a.ln2_mean + r0, a.ln2_rstd + r0, res1,
                              WB(ln2_w), WB(ln2_b), R, C);
    linear(ctx, ps, l, NGPT_LINEAR_FC1, a.fc1, p->ln_out, WB(fc1_w), WB(fc1_b), (int)R, C, F);
    ngpt_op_gelu_fwd(ctx, p->hidden, a.fc1, R * F);
    linear(ctx, ps, l, NGPT_LINEAR_FC2, p->branch, p->hidden, WB(fc2_w), WB(fc2_b), (int)R, F, C);
    if (dropping) drop(ctx, p->branch, BT * C, l, NGPT_SITE_MLP_OUT);
    if (post) {
        float *res2 = a.res2 + r0 * C;
        ngpt_op_add(ctx, res2, p->ln_out, p->branch, R * C);
        ngpt_op_layernorm_fwd(ctx, a.x_out + r0 * C, a.ln2_mean + r0, a.ln2_rstd + r0, res2,
                              WB(ln2_w), WB(ln2_b), R, C);
    } else {
        ngpt_op_add(ctx, a.x_out + r0 * C, res1, p->branch, R * C);
    }
#undef WB
}

/* Absolute positions (pos=sinusoidal|learned): x (rows, C) += table[position]
 * of each row: 0.. in a full pass, after the slot's cached tokens in a
 * cached one. The positions stay in plan.pos_ids for the backward. */
static void add_positions(ngpt_context *ctx, const ngpt_pass *ps, float *x)
{
    ngpt_plan *p = &ctx->plan;
    const size_t BT = (size_t)ps->nseq * (size_t)ps->len;
    for (int s = 0; s < ps->nseq; s++) {
        const int32_t pos0 = ps->cached ? ngpt_kv_len(ctx, ps->slot0 + s) : 0;
        for (int i = 0; i < ps->len; i++) p->pos_ids[(size_t)s * ps->len + i] = pos0 + i;
    }
    const float *table = ctx->cfg.pos == NGPT_POS_LEARNED ? p->params + ctx->lay.pos_emb
                                                          : p->pos_table;
    ngpt_op_embed(ctx, p->branch, table, p->pos_ids, BT, ctx->cfg.d_model);
    ngpt_op_add(ctx, x, x, p->branch, BT * (size_t)ctx->cfg.d_model);
}

void ngpt_model_pass(ngpt_context *ctx, const ngpt_pass *ps)
{
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;
    const int C = ctx->cfg.d_model, V = ctx->cfg.vocab_size, L = ctx->cfg.n_layers;
    const size_t BT = (size_t)ps->nseq * (size_t)ps->len;
    /* generation is always eval: dropout only in a full pass */
    const bool dropping = !ps->cached && ngpt_dropout_active(ctx);
    if (ps->cached) ngpt_packed_refresh(ctx);   /* the parameters may have changed */

    /* embedding (B,T) -> (B,T,C) [+ positions], then dropout (site: layer index L) */
    float *x = ngpt_layer_acts_get(ctx, 0).x_in;
    ngpt_op_embed(ctx, x, W + lay->tok_emb, ps->tokens, BT, C);
    if (ctx->cfg.pos != NGPT_POS_ROPE) add_positions(ctx, ps, x);
    if (dropping) drop(ctx, x, BT * C, L, NGPT_SITE_EMBED);

    for (int l = 0; l < L; l++) block(ctx, l, ps, dropping);
    /* a last_only pass goes on with its last row only */
    const size_t r0 = ps->last_only ? BT - 1 : 0, R = BT - r0;
    x = ngpt_layer_acts_get(ctx, L - 1).x_out + r0 * C;

    /* [ln_f] (R,C) -> lm_head (tied: tok_emb): logits (R,V) = x W_head^T */
    const float *head_in = x;
    if (ctx->cfg.final_norm) {
        ngpt_op_layernorm_fwd(ctx, p->lnf, p->lnf_mean, p->lnf_rstd, x, W + lay->lnf_w,
                              W + lay->lnf_b, R, C);
        head_in = p->lnf;
    }
    linear(ctx, ps, 0, NGPT_LINEAR_LM_HEAD, p->logits, head_in, W + lay->lm_head, NULL, (int)R,
           C, V);
}

ngpt_status ngpt_model_forward(ngpt_context *ctx, const int32_t *tokens, int32_t B, int32_t T,
                         const int32_t *targets, float *loss)
{
    NGPT_FPMODE_SCOPE;
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
    const ngpt_pass pass = {tokens, B, T, false, 0, false};
    ngpt_model_pass(ctx, &pass);

    ngpt_plan *p = &ctx->plan;
    const int V = ctx->cfg.vocab_size;
    const size_t BT = (size_t)B * (size_t)T;
    if (targets) {
        ngpt_op_xent(ctx, p->losses, p->logits, targets, BT, V);
        /* the mean: one canonical sum over every row, on this thread */
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
