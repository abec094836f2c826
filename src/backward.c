/* backward.c — gradients of the mean cross-entropy of the last forward with
 * respect to every parameter, the forward's wiring (forward.c) walked in
 * reverse over the kernel table. Shapes as in forward.c: B batch, T sequence,
 * C width, H heads, D = C/H, F = d_ff, V vocabulary, BT = B*T rows.
 *
 * Gradients accumulate (+=) into ctx->plan.grads so micro-batches add up;
 * ngpt_grads_zero() starts a new sum. Weight gradients are strided gemms
 * (A^T B) with accumulate, each output one chain over rows in increasing
 * order; bias/LayerNorm gradients continue one chain per element over rows.
 * Dropout masks are recomputed from (seed, step, site, element), never
 * stored; LayerNorm and GELU outputs are recomputed into the forward's
 * scratch (ln_out, hidden) instead of being kept per layer. That scratch
 * doubles as gradient space once its recomputed value has been used:
 * hidden holds dGELU-out then dfc1 after dW2 is formed, and ln_out holds
 * d(attention output) before ln1's output is recomputed.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "rng.h"

/* dW (out,in) += dy^T (rows,out) x (rows,in): one chain over rows. */
static void linear_bwd_weight(const ngpt_context *ctx, float *dw, const float *dy, const float *x,
                              int rows, int in, int out)
{
    ctx->k->gemm(out, in, rows, dy, 1, out, x, in, 1, NULL, dw, in, true, ctx->plan.gemm_work);
}

/* dx (rows,in) = dy (rows,out) W (out,in). */
static void linear_bwd_input(const ngpt_context *ctx, float *dx, const float *dy, const float *w,
                             int rows, int in, int out)
{
    ctx->k->gemm(rows, in, out, dy, out, 1, w, in, 1, NULL, dx, in, false, ctx->plan.gemm_work);
}

/* Dropout backward of one site: dx = mask * scale * dy, the forward's mask
 * recomputed from the same key and element indices. Copies when off. */
static void drop_bwd(const ngpt_context *ctx, float *dx, const float *dy, size_t n, int layer,
                     int kind)
{
    if (!ngpt_dropout_active(ctx)) {
        if (dx != dy) memcpy(dx, dy, n * sizeof(float));
        return;
    }
    const ngpt_dropout_key key = ngpt_dropout_key_of(ctx, layer, kind);
    ctx->k->dropout(dx, dy, n, 0, &key);
}

/* Attention core backward of one layer: d(atty) in ln_out (B,T,C) -> g_qkv (B,T,3C),
 * gradients of q and k after RoPE (rope_bwd is applied by the caller). */
static void attention_bwd(ngpt_context *ctx, const ngpt_layer_acts *a, int layer, int B, int T)
{
    const ngpt_kernels *k = ctx->k;
    const int C = ctx->cfg.d_model, H = ctx->cfg.n_heads, D = C / H;
    const ptrdiff_t row = 3 * (ptrdiff_t)C;
    const float scale = 1.0f / sqrtf((float)D);
    const bool dropping = ngpt_dropout_active(ctx);
    const ngpt_dropout_key key = ngpt_dropout_key_of(ctx, layer, NGPT_SITE_ATTN_PROBS);
    float *pd = ctx->plan.thread_rows;                  /* (T) dropped probabilities */
    float *dp = ctx->plan.thread_rows + ctx->shape.seq; /* (T) dP, then dS */
    float *gqkv = ctx->plan.g_qkv;

    memset(gqkv, 0, (size_t)B * T * row * sizeof(float));
    for (int b = 0; b < B; b++) {
        const float *base = a->qkv + (size_t)b * T * row;
        float *gbase = gqkv + (size_t)b * T * row;
        for (int h = 0; h < H; h++) {
            const float *keys = base + C + h * D, *vals = base + 2 * C + h * D;
            float *gkeys = gbase + C + h * D, *gvals = gbase + 2 * C + h * D;
            for (int i = 0; i < T; i++) {       /* query rows in increasing order */
                size_t row_index = ((size_t)b * H + h) * T + i;
                const float *p = a->att + row_index * T;
                const float *go = ctx->plan.ln_out + ((size_t)b * T + i) * C + h * D;
                const float *pv = p;
                if (dropping) {
                    k->dropout(pd, p, (size_t)i + 1, row_index * T, &key);
                    pv = pd;
                }
                /* o_i = sum_j pv_j v_j:  dV_j += pv_j dO_i;  dPv_j = dO_i . v_j */
                k->outer_acc(gvals, row, pv, go, i + 1, D);
                k->attn_scores(dp, go, vals, row, i + 1, D, 1.0f);
                if (dropping) k->dropout(dp, dp, (size_t)i + 1, row_index * T, &key);
                /* softmax and the 1/sqrt(D) scale: dS (scores = q.k * scale) */
                k->softmax_bwd(dp, p, dp, i + 1, scale);
                /* dQ_i = sum_j dS_j k_j;  dK_j += dS_j q_i */
                k->attn_wsum(gbase + (size_t)i * row + h * D, dp, keys, row, i + 1, D);
                k->outer_acc(gkeys, row, dp, base + (size_t)i * row + h * D, i + 1, D);
            }
        }
    }
}

ngpt_status ngpt_model_backward(ngpt_context *ctx)
{
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_backward: NULL context");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_model_backward: the context was planned "
                         "for inference; plan it with NGPT_MODE_TRAIN");
    if (!ctx->run.backward_ready)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_model_backward: there is no forward with "
                         "targets to differentiate; run ngpt_model_forward with targets first");
    ngpt_backward_run(ctx);
    return NGPT_OK;
}

void ngpt_backward_run(ngpt_context *ctx)
{
    const ngpt_config *cfg = &ctx->cfg;
    const ngpt_kernels *k = ctx->k;
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    const int B = ctx->run.pass.batch, T = ctx->run.pass.seq;
    const int C = cfg->d_model, F = cfg->d_ff, V = cfg->vocab_size, H = cfg->n_heads;
    const int L = cfg->n_layers, D = C / H;
    const size_t BT = (size_t)B * (size_t)T;
    float *W = p->params;       /* read only here */
    float *G = p->grads;

    /* loss = mean over BT rows of cross-entropy -> dlogits (BT,V) */
    const float inv_bt = 1.0f / (float)BT;
    for (size_t i = 0; i < BT; i++)
        k->xent_bwd(p->g_logits + i * V, p->logits + i * V, V, p->targets[i], inv_bt);
    /* tied lm_head: dE += dlogits^T lnf; dlnf = dlogits E */
    linear_bwd_weight(ctx, G + lay->tok_emb, p->g_logits, p->lnf, (int)BT, C, V);
    linear_bwd_input(ctx, p->g_ln, p->g_logits, W + lay->tok_emb, (int)BT, C, V);
    /* ln_f: the residual stream gradient starts here */
    memset(p->g_res, 0, BT * C * sizeof(float));
    float *x_last = ngpt_layer_acts_get(ctx, L - 1).x_out;
    k->layernorm_bwd(p->g_res, G + lay->lnf_w, G + lay->lnf_b, p->g_ln, x_last, p->lnf_mean,
                     p->lnf_rstd, W + lay->lnf_w, BT, C);

    for (int l = L - 1; l >= 0; l--) {
        ngpt_layer_acts a = ngpt_layer_acts_get(ctx, l);
        /* MLP sublayer: x_out = res1 + drop(fc2(gelu(fc1(ln2(res1))))) */
        drop_bwd(ctx, p->g_branch, p->g_res, BT * C, l, NGPT_SITE_MLP_OUT);
        k->gelu_fwd(p->hidden, a.fc1, BT * F);
        linear_bwd_weight(ctx, ngpt_block_ptr(lay, G, l, lay->fc2_w), p->g_branch, p->hidden,
                          (int)BT, F, C);
        k->colsum_acc(ngpt_block_ptr(lay, G, l, lay->fc2_b), p->g_branch, BT, C);
        linear_bwd_input(ctx, p->hidden, p->g_branch, ngpt_block_ptr(lay, W, l, lay->fc2_w),
                         (int)BT, F, C);
        k->gelu_bwd(p->hidden, a.fc1, p->hidden, BT * F);
        k->layernorm_fwd(p->ln_out, NULL, NULL, a.res1, ngpt_block_ptr(lay, W, l, lay->ln2_w),
                         ngpt_block_ptr(lay, W, l, lay->ln2_b), BT, C);
        linear_bwd_weight(ctx, ngpt_block_ptr(lay, G, l, lay->fc1_w), p->hidden, p->ln_out,
                          (int)BT, C, F);
        k->colsum_acc(ngpt_block_ptr(lay, G, l, lay->fc1_b), p->hidden, BT, F);
        linear_bwd_input(ctx, p->g_ln, p->hidden, ngpt_block_ptr(lay, W, l, lay->fc1_w),
                         (int)BT, C, F);
        k->layernorm_bwd(p->g_res, ngpt_block_ptr(lay, G, l, lay->ln2_w),
                         ngpt_block_ptr(lay, G, l, lay->ln2_b), p->g_ln, a.res1, a.ln2_mean,
                         a.ln2_rstd, ngpt_block_ptr(lay, W, l, lay->ln2_w), BT, C);

        /* attention sublayer: res1 = x_in + drop(proj(attn(rope(qkv(ln1(x_in)))))) */
        drop_bwd(ctx, p->g_branch, p->g_res, BT * C, l, NGPT_SITE_ATTN_OUT);
        linear_bwd_weight(ctx, ngpt_block_ptr(lay, G, l, lay->proj_w), p->g_branch, a.atty,
                          (int)BT, C, C);
        linear_bwd_input(ctx, p->ln_out, p->g_branch, ngpt_block_ptr(lay, W, l, lay->proj_w),
                         (int)BT, C, C);
        attention_bwd(ctx, &a, l, B, T);
        for (size_t r = 0; r < BT; r++) {       /* RoPE backward on dq and dk */
            size_t t = r % (size_t)T;
            const float *cs = p->rope_cos + t * (D / 2), *sn = p->rope_sin + t * (D / 2);
            k->rope_bwd(p->g_qkv + r * 3 * C, H, D, cs, sn);
            k->rope_bwd(p->g_qkv + r * 3 * C + C, H, D, cs, sn);
        }
        k->layernorm_fwd(p->ln_out, NULL, NULL, a.x_in, ngpt_block_ptr(lay, W, l, lay->ln1_w),
                         ngpt_block_ptr(lay, W, l, lay->ln1_b), BT, C);
        linear_bwd_weight(ctx, ngpt_block_ptr(lay, G, l, lay->qkv_w), p->g_qkv, p->ln_out,
                          (int)BT, C, 3 * C);
        linear_bwd_input(ctx, p->g_ln, p->g_qkv, ngpt_block_ptr(lay, W, l, lay->qkv_w), (int)BT,
                         C, 3 * C);
        k->layernorm_bwd(p->g_res, ngpt_block_ptr(lay, G, l, lay->ln1_w),
                         ngpt_block_ptr(lay, G, l, lay->ln1_b), p->g_ln, a.x_in, a.ln1_mean,
                         a.ln1_rstd, ngpt_block_ptr(lay, W, l, lay->ln1_w), BT, C);
    }

    /* embedding dropout, then the lookup: dE[token_i] += dx_i, rows in order */
    drop_bwd(ctx, p->g_res, p->g_res, BT * C, L, NGPT_SITE_EMBED);
    for (size_t i = 0; i < BT; i++) {
        float *row = G + lay->tok_emb + (size_t)p->tokens[i] * C;
        k->add(row, row, p->g_res + i * C, (size_t)C);
    }
    ctx->run.n_backward++;
}

ngpt_status ngpt_grads_zero(ngpt_context *ctx)
{
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_grads_zero: NULL context");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_grads_zero: the context was planned for "
                         "inference; plan it with NGPT_MODE_TRAIN");
    ngpt_grads_reset(ctx);
    return NGPT_OK;
}

void ngpt_grads_reset(ngpt_context *ctx)
{
    memset(ctx->plan.grads, 0, ctx->lay.total * sizeof(float));
    ctx->run.n_backward = 0;
}

ngpt_status ngpt_grads_data(ngpt_context *ctx, float **grads, size_t *count)
{
    if (!ctx || !grads || !count)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_grads_data: NULL argument");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_grads_data: the context was planned for "
                         "inference; plan it with NGPT_MODE_TRAIN");
    *grads = ctx->plan.grads;
    *count = ctx->lay.total;
    return NGPT_OK;
}
