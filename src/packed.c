/* packed.c — the Linear weights in gemm_packed's layout (gemm.h) for the
 * cached passes of generation: decode steps (at most 8 rows) take
 * gemm_packed's gemv path, which streams each panel once, instead of packing
 * every weight again for every token; prefills take its blocked path, which
 * then packs no weight block per call (gemm's lane-by-lane packing of a W
 * block was ~12% of a 128-token prefill's instructions).
 *
 * They are a copy of the parameters, kept in infer mode only, and repacked
 * before such a pass when the parameters may have changed since the last
 * packing: ngpt_run_params_changed (init, load) and ngpt_params_data (its
 * pointer can write them) clear run.packed_valid, and ngpt_model_generate
 * clears it when it starts. Full forwards read the parameters themselves.
 *
 * plan.packed_w holds the lm_head (V x C, tied: tok_emb), then per layer qkv, proj,
 * fc1, fc2, each ngpt_packed_w_floats(n, k) floats. */
#include "ops.h"
#include "packed.h"

/* (n outputs, k inputs) of a Linear. */
static void dims(const ngpt_config *c, ngpt_linear which, int *n, int *k)
{
    const int C = c->d_model, F = c->d_ff;
    switch (which) {
    case NGPT_LINEAR_QKV: *n = 3 * C, *k = C; return;
    case NGPT_LINEAR_PROJ: *n = C, *k = C; return;
    case NGPT_LINEAR_FC1: *n = F, *k = C; return;
    case NGPT_LINEAR_FC2: *n = C, *k = F; return;
    default: *n = c->vocab_size, *k = C; return;
    }
}

/* Floats of one Linear packed; false on overflow. */
static bool floats_of(const ngpt_config *c, ngpt_linear which, size_t *f)
{
    int n, k;
    dims(c, which, &n, &k);
    size_t panels = ((size_t)n + NGPT_GEMM_NR - 1) / NGPT_GEMM_NR;
    return ngpt_mul_ok(panels, (size_t)k, f) && ngpt_mul_ok(*f, NGPT_GEMM_NR, f);
}

/* Offset of Linear `which` of `layer` (sizes checked by ngpt_packed_floats). */
static size_t offset_of(const ngpt_config *c, int layer, ngpt_linear which)
{
    if (which == NGPT_LINEAR_LM_HEAD) return 0;
    size_t head = 0, f = 0, per_layer = 0, before = 0;
    floats_of(c, NGPT_LINEAR_LM_HEAD, &head);
    for (int i = 0; i < NGPT_LINEAR_PER_LAYER; i++) {
        floats_of(c, (ngpt_linear)i, &f);
        if (i < (int)which) before += f;
        per_layer += f;
    }
    return head + (size_t)layer * per_layer + before;
}

bool ngpt_packed_floats(const ngpt_config *cfg, size_t *floats)
{
    size_t total, f, per_layer = 0;
    if (!floats_of(cfg, NGPT_LINEAR_LM_HEAD, &total)) return false;
    for (int i = 0; i < NGPT_LINEAR_PER_LAYER; i++)
        if (!floats_of(cfg, (ngpt_linear)i, &f) || !ngpt_add_ok(per_layer, f, &per_layer))
            return false;
    return ngpt_mul_ok(per_layer, (size_t)cfg->n_layers, &f) && ngpt_add_ok(total, f, floats);
}

const float *ngpt_packed_w(const ngpt_context *ctx, int layer, ngpt_linear which)
{
    return ctx->plan.packed_w + offset_of(&ctx->cfg, layer, which);
}

/* The parameters of a Linear, (n, k) row-major. */
static const float *weights_of(const ngpt_context *ctx, int layer, ngpt_linear which)
{
    const ngpt_layout *lay = &ctx->lay;
    const float *W = ctx->plan.params;
    switch (which) {
    case NGPT_LINEAR_QKV: return ngpt_block_ptr(lay, (float *)W, layer, lay->qkv_w);
    case NGPT_LINEAR_PROJ: return ngpt_block_ptr(lay, (float *)W, layer, lay->proj_w);
    case NGPT_LINEAR_FC1: return ngpt_block_ptr(lay, (float *)W, layer, lay->fc1_w);
    case NGPT_LINEAR_FC2: return ngpt_block_ptr(lay, (float *)W, layer, lay->fc2_w);
    default: return W + lay->lm_head;     /* tied: tok_emb */
    }
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
        dims(&ctx->cfg, which, &n, &k);
        ctx->k->pack_w(ctx->plan.packed_w + offset_of(&ctx->cfg, layer, which),
                       weights_of(ctx, layer, which), n, k, k);
    }
}

void ngpt_packed_refresh(ngpt_context *ctx)
{
    if (ctx->run.packed_valid) return;
    const size_t linears = 1 + (size_t)NGPT_LINEAR_PER_LAYER * (size_t)ctx->cfg.n_layers;
    const double per_linear = (double)ctx->lay.total / (double)linears;
    ngpt_par_for(ctx, linears, 1, per_linear, pack_range, ctx);
    ctx->run.packed_valid = true;
}
