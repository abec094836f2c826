/* adapter.c — LoRA adapters and models (ngpt.h, "LoRA adapters"): one
 * made for a model, checked against the model it trains on or applies to
 * (its config and identity), handed to an inference context, or merged
 * into a context's own float32 weights. Their files: io/adapter_file.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "base/rng.h"
#include "io/adapter.h"
#include "io/model.h"
#include "model/kv.h"
#include "runtime/derived.h"
#include "runtime/weights.h"

/* ------------------------------------------------------------ creating */

ngpt_status ngpt_adapter_create(ngpt_adapter **out, const ngpt_model *model,
                                const ngpt_lora_config *lc, uint64_t seed)
{
    NGPT_FPMODE_SCOPE;
    const char *fn = "ngpt_adapter_create";
    if (!out) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL adapter", fn);
    *out = NULL;
    if (!model || !lc) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL model or config", fn);
    const ngpt_config *cfg = ngpt_model_cfg(model);
    ngpt_lora_layout ll;
    uint64_t base = 0;
    ngpt_status st = ngpt_lora_layout_compute(cfg, lc, &ll);
    if (!st) st = ngpt_model_identity((ngpt_model *)(uintptr_t)model, &base);
    if (st) return ngpt_prefixed(fn, st);
    ngpt_adapter *ad = ngpt_adapter_alloc(cfg, lc, &ll, false);
    if (!ad) return ngpt_fail(NGPT_ERR_NO_MEMORY, "%s: cannot allocate the adapter", fn);
    ad->base = base;
    /* A uniform in +-1/sqrt(in) (PEFT's kaiming_uniform_ with a = sqrt(5)),
     * a pure function of (seed, layer, module, element); B stays zero */
    float *w = (float *)(uintptr_t)ad->w;
    for (int l = 0; l < ll.n_layers; l++) {
        if (!ngpt_lora_layer_on(&ll, l)) continue;
        for (int i = 0; i < ll.n_modules; i++) {
            const ngpt_lora_module *m = &ll.mod[i];
            float *a = w + ngpt_lora_layer_offset(&ll, l) + m->a;
            const uint32_t stream = NGPT_STREAM_LORA | (uint32_t)l << 4 | (uint32_t)m->kind;
            const float bound = (float)(1.0 / sqrt((double)m->in));
            const size_t n = (size_t)ll.rank * (size_t)m->in;
            for (size_t e = 0; e < n; e += 4) {
                uint32_t words[4];
                ngpt_rng_block(seed, stream, 0, e / 4, words);
                for (size_t k = 0; k < 4 && e + k < n; k++)
                    a[e + k] = (2.0f * ngpt_rng_uniform(words[k]) - 1.0f) * bound;
            }
        }
    }
    if ((st = ngpt_adapter_pack(ad))) {
        ngpt_adapter_close(ad);
        return ngpt_prefixed(fn, st);
    }
    *out = ad;
    return NGPT_OK;
}

/* ------------------------------------------------------------ applying */

/* The identity of ctx's model: its model's (a context of one: computed
 * once, there), the one it copied, or its own parameters' checksum. */
static ngpt_status context_identity(const ngpt_context *ctx, uint64_t *id)
{
    if (ctx->model) return ngpt_model_identity((ngpt_model *)(uintptr_t)ctx->model, id);
    *id = ctx->identity ? ctx->identity : ngpt_weights_checksum(ctx);
    return NGPT_OK;
}

/* ad against a model of cfg whose identity is id. */
static ngpt_status check_against(const ngpt_adapter *ad, const ngpt_config *cfg, uint64_t id)
{
    if (!ngpt_lora_same_model(&ad->cfg, cfg))
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "the adapter was made for a model of "
                         "another config");
    if (ad->base != id)
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "the adapter was made for another model of "
                         "this config (its identity %016llx, this model's %016llx: other "
                         "weights)", (unsigned long long)ad->base, (unsigned long long)id);
    return NGPT_OK;
}

ngpt_status ngpt_adapter_check_model(const ngpt_adapter *ad, ngpt_model *m)
{
    uint64_t id;
    ngpt_status st = ngpt_model_identity(m, &id);
    return st ? st : check_against(ad, ngpt_model_cfg(m), id);
}

/* What adapters_set and adapters_merge are given: a context, 0..8
 * adapters and their scales. Messages name fn. */
static ngpt_status check_args(const char *fn, const ngpt_context *ctx,
                              const ngpt_adapter *const *ads, const float *scales, int32_t n)
{
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL context", fn);
    if (n < 0 || n > NGPT_ADAPTERS_MAX)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: n must be in 0..%d, got %d", fn,
                         NGPT_ADAPTERS_MAX, (int)n);
    if (n > 0 && (!ads || !scales)) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL adapters or scales", fn);
    return NGPT_OK;
}

/* Each adapter given, with a finite scale, of rank <= max_rank and of
 * ctx's model. Messages name fn. */
static ngpt_status check_each(const char *fn, const ngpt_context *ctx,
                              const ngpt_adapter *const *ads, const float *scales, int32_t n,
                              int32_t max_rank)
{
    uint64_t id = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!ads[i]) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: adapter %d is NULL", fn, (int)i);
        if (!isfinite(scales[i]))
            return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: scale %d is %g, not finite", fn, (int)i,
                             (double)scales[i]);
        if (ads[i]->ll.rank > max_rank)
            return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "%s: adapter %d has rank %d but the context "
                             "was planned for ranks up to %d; plan shape.adapter_rank >= %d", fn,
                             (int)i, (int)ads[i]->ll.rank, (int)max_rank, (int)ads[i]->ll.rank);
        ngpt_status st = i == 0 ? context_identity(ctx, &id) : NGPT_OK;
        if (!st) st = check_against(ads[i], &ctx->cfg, id);
        if (st) {
            char why[300];
            snprintf(why, sizeof why, "%s", ngpt_last_error());
            return ngpt_fail(st, "%s: adapter %d: %s", fn, (int)i, why);
        }
    }
    return NGPT_OK;
}

ngpt_status ngpt_context_adapters_set(ngpt_context *ctx, const ngpt_adapter *const *ads,
                                      const float *scales, int32_t n)
{
    NGPT_FPMODE_SCOPE;
    const char *fn = "ngpt_context_adapters_set";
    ngpt_status st = check_args(fn, ctx, ads, scales, n);
    if (st) return st;
    if (ctx->shape.mode != NGPT_MODE_INFER)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "%s: a training context trains one adapter "
                         "(shape.adapter); adapters are applied by inference contexts", fn);
    if ((st = check_each(fn, ctx, ads, scales, n, ctx->shape.adapter_rank))) return st;
    for (int32_t i = 0; i < n; i++) atomic_fetch_add(&((ngpt_adapter *)(uintptr_t)ads[i])->users, 1);
    ngpt_lora_release(ctx);
    for (int32_t i = 0; i < n; i++) {
        ctx->lora.ads[i] = ads[i];
        ctx->lora.scale[i] = scales[i];
    }
    ctx->lora.n = n;
    /* what the cache holds was made under the adapters before */
    for (int32_t s = 0; s < ctx->shape.batch; s++) ngpt_kv_clear(ctx, s);
    ngpt_run_params_changed(ctx);
    return NGPT_OK;
}

/* ------------------------------------------------------------ merging */

/* Layer l's Linear `which` (W (out, in), state_dict layout): each row any
 * adapter's module covers gains s[i] (B A)[row] of each, summed in double
 * onto the weight and rounded once; row: 2 in doubles of scratch. */
static void merge_linear(float *W, int out, int in, const ngpt_adapter *const *ads,
                         const double *s, int32_t n, int l, ngpt_linear which, double *row)
{
    double *d = row + in;
    for (int j = 0; j < out; j++) {
        float *w = W + (size_t)j * (size_t)in;
        bool touched = false;
        for (int32_t i = 0; i < n; i++) {
            const ngpt_lora_layout *ll = &ads[i]->ll;
            for (int q = 0; ngpt_lora_layer_on(ll, l) && q < ll->n_modules; q++) {
                const ngpt_lora_module *m = &ll->mod[q];
                if (m->linear != which || j < m->row0 || j >= m->row0 + m->rows) continue;
                if (!touched)
                    for (int k = 0; k < in; k++) row[k] = w[k];
                touched = true;
                const float *lw = ads[i]->w + ngpt_lora_layer_offset(ll, l);
                const float *B = lw + m->b + (size_t)(j - m->row0) * (size_t)ll->rank;
                for (int k = 0; k < in; k++) d[k] = 0.0;
                for (int r = 0; r < ll->rank; r++) {
                    const float *a = lw + m->a + (size_t)r * (size_t)in;
                    for (int k = 0; k < in; k++) d[k] += (double)B[r] * a[k];
                }
                for (int k = 0; k < in; k++) row[k] += s[i] * d[k];
            }
        }
        if (touched)
            for (int k = 0; k < in; k++) w[k] = (float)row[k];
    }
}

ngpt_status ngpt_context_adapters_merge(ngpt_context *ctx, const ngpt_adapter *const *ads,
                                        const float *scales, int32_t n)
{
    NGPT_FPMODE_SCOPE;
    const char *fn = "ngpt_context_adapters_merge";
    ngpt_status st = check_args(fn, ctx, ads, scales, n);
    if (st) return st;
    if (ctx->model)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "%s: the context shares its model's read-only "
                         "weights; make one with a config beside the model (it owns a copy)", fn);
    if (ctx->cfg.weights != NGPT_WEIGHTS_F32)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: the context holds %s weights; merge into "
                         "the float32 model, then quantize", fn,
                         ctx->cfg.weights == NGPT_WEIGHTS_Q8 ? "8-bit" : "4-bit");
    if (ctx->lora.training || ctx->lora.n)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "%s: the context %s adapters; merge in a context "
                         "that applies none", fn, ctx->lora.training ? "trains" : "applies");
    if ((st = check_each(fn, ctx, ads, scales, n, NGPT_LORA_RANK_MAX))) return st;
    double s[NGPT_ADAPTERS_MAX];
    for (int32_t i = 0; i < n; i++) {
        /* alpha / r (rslora: alpha / sqrt(r)) in double, as peft's scaling */
        const ngpt_lora_config *lc = &ads[i]->lc;
        s[i] = (double)scales[i] * (double)lc->alpha /
               (lc->rslora ? sqrt((double)lc->rank) : (double)lc->rank);
    }
    if (n == 0) return NGPT_OK;
    const ngpt_config *cfg = &ctx->cfg;
    const int C = cfg->d_model, A = ngpt_cfg_attn_width(cfg), F = cfg->d_ff;
    const int widest = C > A ? (C > F ? C : F) : (A > F ? A : F);
    double *row = malloc(2 * (size_t)widest * sizeof *row);
    if (!row) return ngpt_fail(NGPT_ERR_NO_MEMORY, "%s: out of memory", fn);
    ngpt_weights_unpack(ctx);
    const struct { ngpt_linear which; int out, in; } linears[] = {
        {NGPT_LINEAR_QKV, ngpt_cfg_qkv_width(cfg), C}, {NGPT_LINEAR_PROJ, C, A},
        {NGPT_LINEAR_FC1, ngpt_cfg_fc1_width(cfg), C}, {NGPT_LINEAR_FC2, C, F},
    };
    for (int l = 0; l < cfg->n_layers; l++)
        for (size_t k = 0; k < sizeof linears / sizeof linears[0]; k++)
            merge_linear(ctx->plan.params + ngpt_linear_weight(&ctx->lay, l, linears[k].which),
                         linears[k].out, linears[k].in, ads, s, n, l, linears[k].which, row);
    free(row);
    if (ngpt_kv_planned(ctx)) ngpt_kv_clear(ctx, -1);     /* made by the old weights */
    ngpt_run_params_changed(ctx);
    return NGPT_OK;
}
