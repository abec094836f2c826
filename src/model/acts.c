/* acts.c — one layer's view of the activations (acts.h). */
#include "model/acts.h"
#include "runtime/config.h"

ngpt_layer_acts ngpt_layer_acts_get(const ngpt_context *ctx, int layer)
{
    const ngpt_plan *p = &ctx->plan;
    const bool train = ctx->shape.mode == NGPT_MODE_TRAIN;
    const size_t C = (size_t)ctx->cfg.d_model;
    const size_t H = (size_t)ctx->cfg.n_heads;
    const size_t QKV = (size_t)ngpt_cfg_qkv_width(&ctx->cfg), A = H * (size_t)ngpt_cfg_head_dim(&ctx->cfg);
    const size_t F1 = (size_t)ngpt_cfg_fc1_width(&ctx->cfg);
    /* Per-layer strides use the planned shape so regions never overlap; the
     * data inside is packed for the actual (B, T). */
    const size_t BT = (size_t)ctx->shape.batch * (size_t)ctx->shape.seq;
    const size_t li = train ? (size_t)layer : 0;
    ngpt_layer_acts a;
    a.x_in = p->x + (train ? (size_t)layer : 0) * BT * C;
    a.x_out = p->x + (train ? (size_t)layer + 1 : 0) * BT * C;
    a.ln1_mean = p->ln_mean + li * 2 * BT;
    a.ln2_mean = a.ln1_mean + BT;
    a.ln1_rstd = p->ln_rstd + li * 2 * BT;
    a.ln2_rstd = a.ln1_rstd + BT;
    a.qkv = p->qkv + li * BT * QKV;
    a.att = p->att ? p->att + (size_t)layer * BT * H * (size_t)ctx->shape.seq : NULL;
    a.atty = p->atty + li * BT * A;
    a.res1 = p->res1 + li * BT * C;
    a.res2 = p->res2 ? p->res2 + li * BT * C : NULL;
    a.fc1 = p->fc1 + li * BT * F1;
    a.mlp_out = !train && ctx->cfg.norm == NGPT_NORM_PRE ? p->ln_out : p->branch;
    return a;
}
