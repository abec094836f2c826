/* packed.c — the Linear weights in gemm_packed's layout (gemm.h) for the
 * cached passes of generation: decode steps (at most 8 rows) take
 * gemm_packed's gemv path, which streams each panel once, instead of packing
 * every weight again for every token; prefills take its blocked path, which
 * then packs no weight block per call.
 *
 * They are a copy of the parameters, kept in infer mode only, and repacked
 * before a cached pass when the parameters may have been written since the
 * last packing: every such write bumps run.params_epoch (init, load,
 * ngpt_params_data, whose pointer can write them, and the start of
 * ngpt_model_generate), and this file alone records in run.packed_epoch
 * which epoch the copy was made from. Full forwards read the parameters
 * themselves. */
#include "model/packed.h"
#include "ops/ops.h"

const float *ngpt_packed_w(const ngpt_context *ctx, int layer, ngpt_linear which)
{
    return ctx->plan.packed_w + ngpt_linear_packed_offset(&ctx->cfg, layer, which);
}

/* Linears i0..i1-1 of the list: 0 is the lm_head, then 4 per layer. */
static void pack_range(void *arg, size_t i0, size_t i1, int thread)
{
    ngpt_context *ctx = arg;
    (void)thread;
    for (size_t i = i0; i < i1; i++) {
        const int layer = i ? (int)((i - 1) / NGPT_LINEAR_PER_LAYER) : 0;
        const ngpt_linear which = i ? (ngpt_linear)((i - 1) % NGPT_LINEAR_PER_LAYER)
                                    : NGPT_LINEAR_LM_HEAD;
        int n, k;
        ngpt_linear_dims(&ctx->cfg, which, &n, &k);
        ctx->k->pack_w(ctx->plan.packed_w + ngpt_linear_packed_offset(&ctx->cfg, layer, which),
                       ctx->plan.params + ngpt_linear_weight(&ctx->lay, layer, which), n, k, k);
    }
}

void ngpt_packed_refresh(ngpt_context *ctx)
{
    if (ctx->run.packed_epoch == ctx->run.params_epoch) return;
    const size_t linears = 1 + (size_t)NGPT_LINEAR_PER_LAYER * (size_t)ctx->cfg.n_layers;
    const double per_linear = (double)ctx->lay.total / (double)linears;
    ngpt_par_for(ctx, linears, 1, per_linear, pack_range, ctx);
    ctx->run.packed_epoch = ctx->run.params_epoch;
}
