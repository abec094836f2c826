/* adapter.c — LoRA adapters and models (ngpt.h, "LoRA adapters"): one
 * made for a model, checked against the model it trains on or applies to
 * (its config and identity), and handed to an inference context. Their
 * files: io/adapter_file.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "base/rng.h"
#include "io/adapter.h"
#include "io/model.h"
#include "model/kv.h"
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

ngpt_status ngpt_context_adapters_set(ngpt_context *ctx, const ngpt_adapter *const *ads,
                                      const float *scales, int32_t n)
{
    NGPT_FPMODE_SCOPE;
    const char *fn = "ngpt_context_adapters_set";
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL context", fn);
    if (n < 0 || n > NGPT_ADAPTERS_MAX)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: n must be in 0..%d, got %d", fn,
                         NGPT_ADAPTERS_MAX, (int)n);
    if (n > 0 && (!ads || !scales)) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL adapters or scales", fn);
    if (ctx->shape.mode != NGPT_MODE_INFER)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "%s: a training context trains one adapter "
                         "(shape.adapter); adapters are applied by inference contexts", fn);
    uint64_t id = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!ads[i]) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: adapter %d is NULL", fn, (int)i);
        if (!isfinite(scales[i]))
            return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: scale %d is %g, not finite", fn, (int)i,
                             (double)scales[i]);
        if (ads[i]->ll.rank > ctx->shape.adapter_rank)
            return ngpt_fail(NGPT_ERR_EXCEEDS_PLAN, "%s: adapter %d has rank %d but the context "
                             "was planned for ranks up to %d; plan shape.adapter_rank >= %d", fn,
                             (int)i, (int)ads[i]->ll.rank, (int)ctx->shape.adapter_rank,
                             (int)ads[i]->ll.rank);
        ngpt_status st = i == 0 ? context_identity(ctx, &id) : NGPT_OK;
        if (!st) st = check_against(ads[i], &ctx->cfg, id);
        if (st) {
            char why[300];
            snprintf(why, sizeof why, "%s", ngpt_last_error());
            return ngpt_fail(st, "%s: adapter %d: %s", fn, (int)i, why);
        }
    }
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
