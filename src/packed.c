/* packed.c — the packed copies of the Linear weights (plan.packed, inference
 * contexts): every product x W^T of the forward reads them through
 * gemm_packed instead of repacking W in every call (gemm.h's layout: panels
 * of 16 output columns, each a contiguous k x 16 block). They are made from
 * plan.params by ngpt_params_pack: when the parameters are set
 * (ngpt_params_init, a checkpoint load) and, after anything that may have
 * changed plan.params behind them (ngpt_params_data), by the next pass
 * (run.packed_stale). Training contexts have none: at B*T rows the blocked
 * gemm's own packing of W is a small part of a product, and the optimizer
 * changes W every step. */
#include "internal.h"

void ngpt_params_pack(ngpt_context *ctx)
{
    float *pk = ctx->plan.packed;
    ctx->run.packed_stale = false;
    if (!pk) return;
    const ngpt_layout *lay = &ctx->lay;
    float *W = ctx->plan.params;
    const int V = ctx->cfg.vocab_size, C = ctx->cfg.d_model, F = ctx->cfg.d_ff;
    ctx->k->pack_w(pk + lay->pk_lm_head, W + lay->tok_emb, V, C, C);     /* tied lm_head */
    for (int l = 0; l < ctx->cfg.n_layers; l++) {
        ctx->k->pack_w(ngpt_packed_ptr(lay, pk, l, lay->pk_qkv),
                       ngpt_block_ptr(lay, W, l, lay->qkv_w), 3 * C, C, C);
        ctx->k->pack_w(ngpt_packed_ptr(lay, pk, l, lay->pk_proj),
                       ngpt_block_ptr(lay, W, l, lay->proj_w), C, C, C);
        ctx->k->pack_w(ngpt_packed_ptr(lay, pk, l, lay->pk_fc1),
                       ngpt_block_ptr(lay, W, l, lay->fc1_w), F, C, C);
        ctx->k->pack_w(ngpt_packed_ptr(lay, pk, l, lay->pk_fc2),
                       ngpt_block_ptr(lay, W, l, lay->fc2_w), C, F, F);
    }
}
