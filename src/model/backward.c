/* backward.c — gradients of the mean cross-entropy of the last forward with
 * respect to every parameter, the forward's wiring (forward.c) walked in
 * reverse over the ops (ops.h, split across the thread pool). Shapes as in forward.c: B batch, T sequence,
 * C width, H heads, D head size, KV key/value heads, QKV = (H + 2 KV) D,
 * F = d_ff, V vocabulary, BT = B*T rows.
 *
 * Gradients accumulate (+=) into ctx->plan.grads so micro-batches add up;
 * ngpt_context_grads_zero() starts a new sum. Weight gradients are strided gemms
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

#include "base/fpmode.h"
#include "base/rng.h"
#include "model/acts.h"
#include "model/lora.h"
#include "model/model.h"
#include "ops/ops.h"
#include "runtime/dropout.h"

/* Dropout backward of one site: dx = mask * scale * dy, the forward's mask
 * recomputed from the same key and element indices. Copies when off. */
static void drop_bwd(ngpt_context *ctx, float *dx, const float *dy, size_t n, int layer, int kind)
{
    if (!ngpt_dropout_active(ctx)) {
        if (dx != dy) memcpy(dx, dy, n * sizeof(float));
        return;
    }
    const ngpt_dropout_key key = ngpt_dropout_key_of(ctx, layer, kind);
    ngpt_op_dropout(ctx, dx, dy, n, 0, &key);
}

/* Attention core backward of one layer: d(atty) in ln_out (B,T,H*D) -> g_qkv (B,T,QKV),
 * gradients of q and k after RoPE (the RoPE backward follows). */
static void attention_bwd(ngpt_context *ctx, const ngpt_layer_acts *a, int layer, int B, int T)
{
    const ngpt_config *cfg = &ctx->cfg;
    const ptrdiff_t row = ngpt_cfg_qkv_width(cfg), k0 = ngpt_cfg_attn_width(cfg);
    const ptrdiff_t kvd = (ptrdiff_t)ngpt_cfg_kv_heads(cfg) * ngpt_cfg_head_dim(cfg);
    const ngpt_attn at = {.qkv = a->qkv, .k = a->qkv + k0, .v = a->qkv + k0 + kvd,
                          .kv_seq = (ptrdiff_t)T * row, .kv_row = row, .nseq = B, .len = T,
                          .probs = a->att, .window = ngpt_cfg_layer_window(cfg, layer),
                          .dropping = ngpt_dropout_active(ctx),
                          .key = ngpt_dropout_key_of(ctx, layer, NGPT_SITE_ATTN_PROBS)};
    ngpt_op_attention_bwd(ctx, &at, ctx->plan.ln_out, ctx->plan.bwd.g_qkv);
}

/* The backward of layer l's Linear `which` (W at offset w of the
 * parameters) from dy (rows, out) and its input x (rows, in): dW += dy^T x,
 * dx (rows, in) = dy W. Training an adapter, W is frozen: the adapter's
 * gradients instead (model/lora.h). dx may be x's buffer (fc2's hidden). */
static void linear_bwd(ngpt_context *ctx, int l, ngpt_linear which, float *dx, const float *dy,
                       const float *x, int rows, int in, int out)
{
    if (ctx->lora.training) {
        ngpt_lora_linear_bwd(ctx, l, which, dx, dy, x, rows, in, out);
        return;
    }
    const size_t w = ngpt_linear_weight(&ctx->lay, l, which);
    ngpt_op_linear_bwd_weight(ctx, ctx->plan.grads + w, dy, x, rows, in, out);
    if (dx == x) ngpt_acts_handover(dx, (size_t)rows * (size_t)in);   /* x is dead: d(x) */
    ngpt_op_linear_bwd_input(ctx, dx, dy, ctx->plan.params + w, rows, in, out);
}

/* The gradient of a bias or a norm's weight, or NULL while an adapter
 * trains (the model's parameters are frozen: nothing to add to). */
static float *grad_of(ngpt_context *ctx, int l, size_t field)
{
    return ctx->lora.training ? NULL : ngpt_block_ptr(&ctx->lay, ctx->plan.grads, l, field);
}

ngpt_status ngpt_context_backward(ngpt_context *ctx)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_backward: NULL context");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_backward: the context was planned "
                         "for inference; plan it with NGPT_MODE_TRAIN");
    if (!ctx->run.backward_ready)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_backward: there is no forward with "
                         "targets to differentiate; run ngpt_context_forward with targets first");
    ngpt_context_backward_unchecked(ctx);
    return NGPT_OK;
}

/* The attention sublayer's backward from dy = d(its residual sum): dropout,
 * proj [and its bias], attention, [RoPE], [qkv bias], qkv; d(qkv's input) lands in g_ln.
 * attn_in is qkv's input: ln_out (pre-norm: ln1's output, recomputed here
 * once ln_out's d(atty) is used) or x_in (post-norm). */
static void attn_sublayer_bwd(ngpt_context *ctx, const ngpt_layer_acts *a, int l, int B, int T,
                              const float *dy, const float *attn_in)
{
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;       /* read only */
    const int C = ctx->cfg.d_model, rows = B * T;
    const int QKV = ngpt_cfg_qkv_width(&ctx->cfg), A = ngpt_cfg_attn_width(&ctx->cfg);
    const size_t BT = (size_t)rows;
    drop_bwd(ctx, p->bwd.g_branch, dy, BT * C, l, NGPT_SITE_ATTN_OUT);
    float *g_proj_b = ctx->cfg.proj_bias ? grad_of(ctx, l, lay->proj_b) : NULL;
    if (g_proj_b) ngpt_op_colsum_acc(ctx, g_proj_b, p->bwd.g_branch, BT, C);
    ngpt_acts_handover(p->ln_out, BT * A);     /* the layers' shared buffers change hands */
    linear_bwd(ctx, l, NGPT_LINEAR_PROJ, p->ln_out, p->bwd.g_branch, a->atty, rows, A, C);
    attention_bwd(ctx, a, l, B, T);                                     /* g_qkv (BT,QKV) */
    if (ctx->cfg.pos == NGPT_POS_ROPE) ngpt_op_rope(ctx, p->bwd.g_qkv, B, T, NULL, l, true);
    if (ctx->cfg.qk_norm)       /* d(q), d(k) before their norms; the norms' weights */
        ngpt_op_qk_norm_bwd(ctx, p->bwd.g_qkv, p->bwd.g_qk, a->qk_x, a->qk_rstd,
                            ngpt_block_ptr(lay, W, l, lay->q_norm),
                            ngpt_block_ptr(lay, W, l, lay->k_norm), grad_of(ctx, l, lay->q_norm),
                            grad_of(ctx, l, lay->k_norm), BT);
    float *g_qkv_b = ctx->cfg.qkv_bias ? grad_of(ctx, l, lay->qkv_b) : NULL;
    if (g_qkv_b) ngpt_op_colsum_acc(ctx, g_qkv_b, p->bwd.g_qkv, BT, QKV);
    if (attn_in == p->ln_out) {     /* pre-norm: ln1's output, recomputed over d(atty) */
        ngpt_acts_handover(p->ln_out, BT * C);
        ngpt_op_norm_fwd(ctx, p->ln_out, NULL, NULL, a->x_in, ngpt_block_ptr(lay, W, l, lay->ln1_w),
                         ngpt_block_ptr(lay, W, l, lay->ln1_b), BT, C);
    }
    linear_bwd(ctx, l, NGPT_LINEAR_QKV, p->bwd.g_ln, p->bwd.g_qkv, attn_in, rows, C, QKV);
}

/* The MLP sublayer's backward from dy = d(its residual sum): dropout, fc2,
 * GELU (exact or tanh) or SwiGLU, fc1 over its input (recomputed into ln_out
 * by the caller); d(that input) lands in g_ln. With SwiGLU, d(fc1) (BT,2F)
 * is in gelu_grad's buffer. */
static void mlp_sublayer_bwd(ngpt_context *ctx, const ngpt_layer_acts *a, int l, int rows,
                             const float *dy)
{
    const ngpt_layout *lay = &ctx->lay;
    const ngpt_config *cfg = &ctx->cfg;
    ngpt_plan *p = &ctx->plan;
    const int C = cfg->d_model, F = cfg->d_ff, F1 = ngpt_cfg_fc1_width(cfg);
    const bool gated = ngpt_cfg_gated(cfg);
    const size_t BT = (size_t)rows;
#define GB(field) grad_of(ctx, l, lay->field)     /* layer l's gradient, or NULL (frozen) */
    drop_bwd(ctx, p->bwd.g_branch, dy, BT * C, l, NGPT_SITE_MLP_OUT);
    ngpt_acts_handover(p->hidden, BT * F);
    if (gated) {
        ngpt_op_glu_fwd(ctx, p->hidden, a->fc1, BT, F);                 /* recomputed (BT,F) */
    } else {
        const ngpt_gelu_fwd_grad_fn act_grad = cfg->gelu == NGPT_GELU_TANH
                                                   ? ctx->k->gelu_tanh_fwd_grad : ctx->k->gelu_fwd_grad;
        ngpt_op_gelu_fwd_grad(ctx, act_grad, p->hidden, p->bwd.gelu_grad, a->fc1, BT * F); /* recomputed (BT,F) */
    }
    if (cfg->mlp_bias && GB(fc2_b)) ngpt_op_colsum_acc(ctx, GB(fc2_b), p->bwd.g_branch, BT, C);
    /* the activation's output, then d(hidden) in its place */
    linear_bwd(ctx, l, NGPT_LINEAR_FC2, p->hidden, p->bwd.g_branch, p->hidden, rows, F, C);
    float *dfc1 = p->hidden;                                                         /* (BT,F1) */
    if (gated) {
        dfc1 = p->bwd.gelu_grad;
        ngpt_op_glu_bwd(ctx, dfc1, p->hidden, a->fc1, BT, F);
    } else {
        ngpt_op_gelu_bwd(ctx, p->hidden, p->bwd.gelu_grad, p->hidden, BT * F);
    }
    if (cfg->mlp_bias && GB(fc1_b)) ngpt_op_colsum_acc(ctx, GB(fc1_b), dfc1, BT, F1);
    linear_bwd(ctx, l, NGPT_LINEAR_FC1, p->bwd.g_ln, dfc1, p->ln_out, rows, C, F1);
#undef GB
}

/* norm=sandwich: d(a post norm's input), the branch, from d(its output)
 * dy into g_ln (zeroed: the kernel adds), which the sublayer's backward
 * then takes as its dy. Without the post norms: dy itself. */
static const float *post_norm_bwd(ngpt_context *ctx, int l, const float *dy, const float *x,
                                  const float *mean, const float *rstd, size_t w, size_t b)
{
    if (ctx->cfg.norm != NGPT_NORM_SANDWICH) return dy;
    ngpt_plan *p = &ctx->plan;
    const int C = ctx->cfg.d_model;
    const size_t BT = (size_t)ctx->run.pass.batch * (size_t)ctx->run.pass.seq;
    float *gw = grad_of(ctx, l, w);
    memset(p->bwd.g_ln, 0, BT * (size_t)C * sizeof(float));
    ngpt_op_norm_bwd(ctx, p->bwd.g_ln, gw, gw ? grad_of(ctx, l, b) : NULL, dy, x, mean, rstd,
                     ngpt_block_ptr(&ctx->lay, p->params, l, w), BT, C);
    return p->bwd.g_ln;
}

/* Pre-norm block backward: g_res holds d(x_out) and leaves with d(x_in). */
static void pre_norm_block_bwd(ngpt_context *ctx, int l, int B, int T)
{
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;
    const int C = ctx->cfg.d_model;
    const size_t BT = (size_t)B * (size_t)T;
    ngpt_layer_acts a = ngpt_layer_acts_get(ctx, l);
#define WB(field) ngpt_block_ptr(lay, W, l, lay->field)
#define GB(field) grad_of(ctx, l, lay->field)     /* NULL: frozen */
    /* MLP sublayer: x_out = res1 + drop(fc2(gelu(fc1(ln2(res1))))) */
    ngpt_acts_handover(p->ln_out, BT * C);
    ngpt_op_norm_fwd(ctx, p->ln_out, NULL, NULL, a.res1, WB(ln2_w), WB(ln2_b), BT, C);
    mlp_sublayer_bwd(ctx, &a, l, (int)BT, post_norm_bwd(ctx, l, p->bwd.g_res, a.mlp_out, a.pm_mean,
                                                         a.pm_rstd, lay->pm_w, lay->pm_b));
    ngpt_op_norm_bwd(ctx, p->bwd.g_res, GB(ln2_w), GB(ln2_b), p->bwd.g_ln, a.res1, a.ln2_mean,
                          a.ln2_rstd, WB(ln2_w), BT, C);
    /* attention sublayer: res1 = x_in + drop(proj(attn(rope(qkv(ln1(x_in)))))) */
    attn_sublayer_bwd(ctx, &a, l, B, T, post_norm_bwd(ctx, l, p->bwd.g_res, a.branch, a.pa_mean,
                                                      a.pa_rstd, lay->pa_w, lay->pa_b), p->ln_out);
    ngpt_op_norm_bwd(ctx, p->bwd.g_res, GB(ln1_w), GB(ln1_b), p->bwd.g_ln, a.x_in, a.ln1_mean,
                          a.ln1_rstd, WB(ln1_w), BT, C);
#undef WB
#undef GB
}

/* Post-norm block backward: g_res holds d(x_out) and leaves with d(x_in).
 * x_out = ln2(res2), res2 = y1 + drop(MLP(y1)), y1 = ln1(res1),
 * res1 = x_in + drop(Attn(x_in)). Each LayerNorm's d(input) goes to g_ln
 * (zeroed: the kernel adds), is copied to g_res as the residual's share, and
 * the sublayer's share is added to it. */
static void post_norm_block_bwd(ngpt_context *ctx, int l, int B, int T)
{
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    float *W = p->params;
    const int C = ctx->cfg.d_model;
    const size_t BT = (size_t)B * (size_t)T, n = BT * (size_t)C;
    ngpt_layer_acts a = ngpt_layer_acts_get(ctx, l);
#define WB(field) ngpt_block_ptr(lay, W, l, lay->field)
#define GB(field) grad_of(ctx, l, lay->field)     /* NULL: frozen */
    memset(p->bwd.g_ln, 0, n * sizeof(float));
    ngpt_op_norm_bwd(ctx, p->bwd.g_ln, GB(ln2_w), GB(ln2_b), p->bwd.g_res, a.res2, a.ln2_mean,
                          a.ln2_rstd, WB(ln2_w), BT, C);
    memcpy(p->bwd.g_res, p->bwd.g_ln, n * sizeof(float));                      /* d(res2) */
    ngpt_acts_handover(p->ln_out, BT * C);
    ngpt_op_norm_fwd(ctx, p->ln_out, NULL, NULL, a.res1, WB(ln1_w), WB(ln1_b), BT, C);
    mlp_sublayer_bwd(ctx, &a, l, (int)BT, p->bwd.g_res);
    ngpt_op_add(ctx, p->bwd.g_res, p->bwd.g_res, p->bwd.g_ln, n);                   /* d(y1) */
    memset(p->bwd.g_ln, 0, n * sizeof(float));
    ngpt_op_norm_bwd(ctx, p->bwd.g_ln, GB(ln1_w), GB(ln1_b), p->bwd.g_res, a.res1, a.ln1_mean,
                          a.ln1_rstd, WB(ln1_w), BT, C);
    memcpy(p->bwd.g_res, p->bwd.g_ln, n * sizeof(float));                      /* d(res1) */
    attn_sublayer_bwd(ctx, &a, l, B, T, p->bwd.g_res, a.x_in);
    ngpt_op_add(ctx, p->bwd.g_res, p->bwd.g_res, p->bwd.g_ln, n);                   /* d(x_in) */
#undef WB
#undef GB
}

void ngpt_context_backward_unchecked(ngpt_context *ctx)
{
    const ngpt_config *cfg = &ctx->cfg;
    const ngpt_layout *lay = &ctx->lay;
    ngpt_plan *p = &ctx->plan;
    const int B = ctx->run.pass.batch, T = ctx->run.pass.seq;
    const int C = cfg->d_model, V = cfg->vocab_size, L = cfg->n_layers;
    const size_t BT = (size_t)B * (size_t)T;
    float *W = p->params;       /* read only here */
    float *G = p->grads;
    const bool frozen = ctx->lora.training;     /* an adapter trains: no gradient of the model */
    float *x_last = ngpt_layer_acts_get(ctx, L - 1).x_out;

    /* loss = mean over BT rows of cross-entropy -> dlogits (BT,V); lm_head
     * (tied: tok_emb): dW (V,C) += dlogits^T head_in; d(head_in) (BT,C) =
     * dlogits W. A chunked loss recomputes each chunk's logits first (the
     * forward's bits) and goes chunk by chunk; then ln_f, where the
     * residual stream's gradient (BT,C) starts */
    const float *head_in = cfg->final_norm ? p->lnf : x_last;
    float *d_head_in = cfg->final_norm ? p->bwd.g_ln : p->bwd.g_res;
    const size_t chunk = ctx->shape.loss_chunk ? (size_t)ctx->shape.loss_chunk : BT;
    const size_t kept = ngpt_targets_kept(p->bwd.targets, BT);     /* the mean's rows */
    const float scale = kept ? 1.0f / (float)kept : 0.0f;
    for (size_t r0 = 0; r0 < BT; r0 += chunk) {
        const size_t n = BT - r0 < chunk ? BT - r0 : chunk;
        if (chunk < BT) ngpt_model_head(ctx, head_in + r0 * C, (int32_t)n);
        ngpt_op_xent_bwd(ctx, p->bwd.g_logits, p->logits, p->bwd.targets + r0, n, V, scale);
        if (cfg->logit_softcap != 0.0f)     /* through the cap, from the capped logits */
            ngpt_op_softcap_bwd(ctx, p->bwd.g_logits, p->logits, n * (size_t)V, cfg->logit_softcap);
        linear_bwd(ctx, 0, NGPT_LINEAR_LM_HEAD, d_head_in + r0 * C, p->bwd.g_logits,
                   head_in + r0 * C, (int)n, C, V);
    }
    if (cfg->final_norm) {
        memset(p->bwd.g_res, 0, BT * C * sizeof(float));
        ngpt_op_norm_bwd(ctx, p->bwd.g_res, frozen ? NULL : G + lay->lnf_w,
                         frozen ? NULL : G + lay->lnf_b, p->bwd.g_ln, x_last, p->lnf_mean,
                         p->lnf_rstd, W + lay->lnf_w, BT, C);
    }

    for (int l = L - 1; l >= 0; l--) {
        /* recompute: the one set of activations holds the last layer's */
        if (ctx->shape.recompute && l < L - 1) ngpt_model_block_again(ctx, l, B, T);
        if (cfg->norm == NGPT_NORM_POST) post_norm_block_bwd(ctx, l, B, T);
        else pre_norm_block_bwd(ctx, l, B, T);
    }

    /* embedding dropout, then the lookups: dE[token_i] += dx_i, rows in order
     * (learned positions: dP[position_i] += dx_i likewise) */
    if (!frozen) {
        drop_bwd(ctx, p->bwd.g_res, p->bwd.g_res, BT * C, L, NGPT_SITE_EMBED);
        if (cfg->pos == NGPT_POS_LEARNED)
            ngpt_op_embed_bwd(ctx, G + lay->pos_emb, p->bwd.g_res, p->pos_ids, BT, C,
                              cfg->context_len);
        if (cfg->emb_scale != 0.0f)     /* the rows were scaled before the positions joined */
            ngpt_op_scale(ctx, p->bwd.g_res, p->bwd.g_res, cfg->emb_scale, BT * C);
        ngpt_op_embed_bwd(ctx, G + lay->tok_emb, p->bwd.g_res, p->bwd.tokens, BT, C, V);
    }
    ctx->run.n_backward++;
}

ngpt_status ngpt_context_grads_zero(ngpt_context *ctx)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_grads_zero: NULL context");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_grads_zero: the context was planned for "
                         "inference; plan it with NGPT_MODE_TRAIN");
    ngpt_context_grads_zero_unchecked(ctx);
    return NGPT_OK;
}

/* The floats a training context trains: the model's, or its adapter's. */
static size_t trained(const ngpt_context *ctx)
{
    return ctx->lora.training ? ctx->lora.train.total : ctx->lay.total;
}

void ngpt_context_grads_zero_unchecked(ngpt_context *ctx)
{
    memset(ctx->plan.grads, 0, trained(ctx) * sizeof(float));
    ctx->run.n_backward = 0;
}

ngpt_status ngpt_context_grads(ngpt_context *ctx, float **grads, size_t *count)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !grads || !count)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_grads: NULL argument");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_grads: the context was planned for "
                         "inference; plan it with NGPT_MODE_TRAIN");
    *grads = ctx->plan.grads;
    *count = trained(ctx);
    return NGPT_OK;
}
