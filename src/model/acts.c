/* acts.c — the activations as the wiring sees them (acts.h), and in infer
 * mode which of them share a buffer. */
#include <string.h>

#include "model/acts.h"
#include "runtime/config.h"

/* Inference keeps nothing for a backward, so a layer's buffers are shared
 * by values that are never live at once, in the order the wiring
 * (model/forward.c, block) makes them:
 *   - plan.qkv, sized by the plan as the widest of them (B,T,max(3C,d_ff)):
 *     qkv; then, dead after attention, the projection's output (pre-norm;
 *     post-norm has its own branch, which its second sum needs while fc2
 *     runs); then, dead after the residual sum, fc1 and GELU in place
 *     (hidden), read by fc2;
 *   - plan.ln_out: ln1's output, dead once qkv is made; then the attention
 *     output, dead after proj; then ln2's output, read by fc1; then (pre-norm)
 *     fc2's output, whose input is in plan.qkv; and ln_f's output;
 *   - plan.x: the residual stream, updated in place (res1 = x_in = x_out);
 *   - post-norm's second sum (res2) takes the branch (fc2 wrote mlp_out);
 *   - norm=sandwich: post_attn_norm's output takes plan.ln_out (the attention
 *     output is dead after proj), post_mlp_norm's plan.qkv (fc1 and the
 *     hidden layer are dead after fc2). In train mode the branches (its
 *     inputs) are kept per layer in plan.post_x and both outputs take ln_out.
 * Between passes model/kv.c borrows plan.qkv too (ngpt_kv_reorder). */
static bool infer(const ngpt_context *ctx) { return ctx->shape.mode == NGPT_MODE_INFER; }

ngpt_layer_acts ngpt_layer_acts_get(const ngpt_context *ctx, int layer)
{
    const ngpt_plan *p = &ctx->plan;
    const size_t C = (size_t)ctx->cfg.d_model, H = (size_t)ctx->cfg.n_heads;
    const size_t QKV = (size_t)ngpt_cfg_qkv_width(&ctx->cfg), A = H * (size_t)ngpt_cfg_head_dim(&ctx->cfg);
    const size_t F1 = (size_t)ngpt_cfg_fc1_width(&ctx->cfg);
    const bool post = ctx->cfg.norm == NGPT_NORM_POST, gated = ngpt_cfg_gated(&ctx->cfg);
    const size_t norms = ctx->cfg.norm == NGPT_NORM_SANDWICH ? 4 : 2;   /* mean/rstd sets */
    /* Per-layer strides use the planned shape so regions never overlap; the
     * data inside is packed for the actual (B, T). */
    const size_t BT = (size_t)ctx->shape.batch * (size_t)ctx->shape.seq;
    ngpt_layer_acts a;
    /* training with recompute: one set of activations, the blocks' inputs
     * (x) for every layer */
    const size_t l = ctx->shape.recompute ? 0 : (size_t)layer;
    a.att = p->att ? p->att + l * BT * H * (size_t)ctx->shape.seq : NULL;
    a.ln_out = p->ln_out;
    /* qk_norm's inputs: one set in inference (the layers share it) */
    const size_t QKH = (H + (size_t)ngpt_cfg_kv_heads(&ctx->cfg)), lq = infer(ctx) ? 0 : l;
    a.qk_x = p->qk_x ? p->qk_x + lq * BT * QKH * (size_t)ngpt_cfg_head_dim(&ctx->cfg) : NULL;
    a.qk_rstd = p->qk_rstd ? p->qk_rstd + lq * BT * QKH : NULL;
    if (infer(ctx)) {
        a.x_in = a.x_out = a.res1 = p->x;
        a.ln1_mean = p->ln_mean;
        a.ln1_rstd = p->ln_rstd;
        a.qkv = p->qkv;
        a.atty = p->ln_out;
        a.branch = post ? p->branch : p->qkv;
        a.res2 = post ? p->branch : NULL;
        a.fc1 = p->qkv;
        a.hidden = gated ? p->hidden : p->qkv;    /* a gated MLP's is not fc1's image */
        a.mlp_out = post ? p->branch : p->ln_out;
        a.pa_out = p->ln_out;
        a.pm_out = p->qkv;
    } else {
        a.x_in = p->x + (size_t)layer * BT * C;
        a.x_out = p->x + ((size_t)layer + 1) * BT * C;
        a.ln1_mean = p->ln_mean + l * norms * BT;
        a.ln1_rstd = p->ln_rstd + l * norms * BT;
        a.qkv = p->qkv + l * BT * QKV;
        a.atty = p->atty + l * BT * A;
        a.branch = p->branch;
        a.res1 = p->res1 + l * BT * C;
        a.res2 = p->res2 ? p->res2 + l * BT * C : NULL;
        a.fc1 = p->fc1 + l * BT * F1;
        a.hidden = p->hidden;
        a.mlp_out = p->branch;
        if (p->post_x) {    /* sandwich: the branches, kept for the post norms' backward */
            a.branch = p->post_x + l * 2 * BT * C;
            a.mlp_out = a.branch + BT * C;
        }
        a.pa_out = a.pm_out = p->ln_out;
    }
    a.ln2_mean = a.ln1_mean + BT;
    a.ln2_rstd = a.ln1_rstd + BT;
    a.pa_mean = norms == 4 ? a.ln1_mean + 2 * BT : NULL;
    a.pa_rstd = norms == 4 ? a.ln1_rstd + 2 * BT : NULL;
    a.pm_mean = norms == 4 ? a.ln1_mean + 3 * BT : NULL;
    a.pm_rstd = norms == 4 ? a.ln1_rstd + 3 * BT : NULL;
    return a;
}

float *ngpt_acts_lnf(const ngpt_context *ctx)
{
    return infer(ctx) ? ctx->plan.ln_out : ctx->plan.lnf;
}

float *ngpt_acts_positions(const ngpt_context *ctx)
{
    /* before the first layer, when nothing else is live but x */
    return ngpt_layer_acts_get(ctx, 0).branch;
}

#ifdef NGPT_POISON_SHARED
void ngpt_acts_handover(float *buf, size_t n)
{
    const uint32_t nan = 0x7fc0dead;        /* a quiet NaN, recognisable in a debugger */
    for (size_t i = 0; i < n; i++) memcpy(buf + i, &nan, sizeof nan);
}
#endif
