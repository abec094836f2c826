/* context.c — planning, creating, inspecting and freeing a context. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/cpu.h"
#include "base/fpmode.h"
#include "base/huge_pages.h"
#include "runtime/config.h"
#include "runtime/context.h"
#include "runtime/pool.h"
#include "runtime/positions.h"

ngpt_shape ngpt_shape_default(ngpt_mode mode)
{
    NGPT_FPMODE_SCOPE;
    ngpt_shape s = {.mode = mode, .batch = mode == NGPT_MODE_TRAIN ? 32 : 1,
                    .trace = NGPT_TRACE_NONE, .threads = 1};
    return s;
}

/* Validates the shape against the config and resolves its defaults: seq 0
 * to T (training) or min(T, NGPT_SEQ_INFER_DEFAULT); logits_rows 0 to
 * every position (training) or 1 + draft_tokens, and NGPT_LOGITS_ALL kept
 * as it is (every position); grammar_depth 0 to NGPT_GRAMMAR_DEPTH_DEFAULT
 * (inference). */
static ngpt_status shape_resolve(const ngpt_config *cfg, const ngpt_shape *in, ngpt_shape *out)
{
    ngpt_shape s = *in;
    ngpt_status st = NGPT_RESERVED_CHECK("shape", &s);
    if (st) return st;
    if (s.mode != NGPT_MODE_INFER && s.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.mode must be NGPT_MODE_INFER or NGPT_MODE_TRAIN");
    const bool train = s.mode == NGPT_MODE_TRAIN;
    if (s.batch == 0) s.batch = train ? 32 : 1;     /* ngpt_shape_default's */
    if (s.threads == 0) s.threads = 1;
    if (s.batch < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.batch must be >= 1 (0: the default), got %d",
                         (int)s.batch);
    if (s.seq == 0)
        s.seq = train || cfg->context_len < NGPT_SEQ_INFER_DEFAULT ? cfg->context_len
                                                                   : NGPT_SEQ_INFER_DEFAULT;
    if (s.seq < 1 || s.seq > cfg->context_len)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.seq must be in 1..T=%d (0: the default), got "
                         "%d", (int)cfg->context_len, (int)s.seq);
    if ((int64_t)s.batch * s.seq > INT32_MAX)    /* kernels count rows (batch*seq) in int */
        return ngpt_fail(NGPT_ERR_OVERFLOW, "batch*seq = %d*%d overflows a 32-bit int; plan a "
                         "smaller batch or seq", (int)s.batch, (int)s.seq);
    if (s.trace != NGPT_TRACE_NONE && s.trace != NGPT_TRACE_FULL && s.trace != NGPT_TRACE_LAST_ROW)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.trace %d is not an ngpt_trace value",
                         (int)s.trace);
    if (s.draft_tokens < 0 || s.draft_tokens > NGPT_DRAFT_TOKENS_MAX || (train && s.draft_tokens))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.draft_tokens must be in 0..%d (inference only), "
                         "got %d", NGPT_DRAFT_TOKENS_MAX, (int)s.draft_tokens);
    if (s.logits_rows == 0) s.logits_rows = train ? NGPT_LOGITS_ALL : 1 + s.draft_tokens;
    if (s.grammar_depth < 0 || s.grammar_depth > NGPT_GRAMMAR_DEPTH_MAX || (train && s.grammar_depth))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.grammar_depth must be in 0..%d (inference only), "
                         "got %d", NGPT_GRAMMAR_DEPTH_MAX, (int)s.grammar_depth);
    if (!train && s.grammar_depth == 0) s.grammar_depth = NGPT_GRAMMAR_DEPTH_DEFAULT;
    if (s.kv_k < NGPT_KV_F32 || s.kv_k > NGPT_KV_Q8 || s.kv_v < NGPT_KV_F32 ||
        s.kv_v > NGPT_KV_Q8 || (train && (s.kv_k || s.kv_v)))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.kv_k and shape.kv_v must be NGPT_KV_F32 (0) or "
                         "NGPT_KV_Q8 (1), inference only; got %d and %d", (int)s.kv_k,
                         (int)s.kv_v);
    if (s.logits_rows < 1 && s.logits_rows != NGPT_LOGITS_ALL)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.logits_rows must be >= 1, 0 (the default) or "
                         "NGPT_LOGITS_ALL (every position), got %d", (int)s.logits_rows);
    if (s.logits_rows != NGPT_LOGITS_ALL && train)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.logits_rows must be 0 or NGPT_LOGITS_ALL in "
                         "train mode (training needs every position's logits), got %d",
                         (int)s.logits_rows);
    if (s.adapter_rank < 0 || s.adapter_rank > NGPT_LORA_RANK_MAX || (train && s.adapter_rank))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.adapter_rank must be in 0..%d (inference "
                         "only), got %d", NGPT_LORA_RANK_MAX, (int)s.adapter_rank);
    if (s.recompute < 0 || s.recompute > 1 || (!train && s.recompute))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.recompute must be 0 or 1 (training only), got "
                         "%d", (int)s.recompute);
    if (s.recompute && s.trace != NGPT_TRACE_NONE)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.recompute keeps one layer's attention at a "
                         "time: plan it without a trace");
    if (s.loss_chunk < 0 || (!train && s.loss_chunk))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.loss_chunk must be >= 0 (training only), got "
                         "%d", (int)s.loss_chunk);
    if (s.loss_chunk >= s.batch * s.seq) s.loss_chunk = 0;     /* every row at once anyway */
    if (s.adapter && !train)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.adapter is the adapter a training context "
                         "trains (NGPT_MODE_TRAIN); an inference context applies adapters with "
                         "ngpt_context_adapters_set (plan shape.adapter_rank)");
    if (s.adapter && !ngpt_lora_same_model(&s.adapter->cfg, cfg))
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "shape.adapter is an adapter of another "
                         "model (its config differs)");
    if (s.threads < 1 || s.threads > 1024)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.threads must be in 1..1024 (0: 1), got %d",
                         (int)s.threads);
    *out = s;
    return NGPT_OK;
}

/* Validates config and shape, resolves the shape and sizes the plan
 * (messages without a prefix: the public callers add theirs). */
static ngpt_status plan_size(const ngpt_config *cfg, const ngpt_shape *shape, bool shared,
                             ngpt_shape *s, ngpt_plan *plan)
{
    ngpt_status st = ngpt_config_check(cfg);
    if (!st) st = shape_resolve(cfg, shape, s);
    if (!st && s->mode == NGPT_MODE_TRAIN && cfg->weights != NGPT_WEIGHTS_F32 && !s->adapter)
        st = ngpt_fail(NGPT_ERR_WRONG_MODE, "a model with %s weights (weights=%s) runs "
                       "inference and LoRA adapters only (shape.adapter); train its float32 "
                       "original (weights=f32) and quantize that (ngpt quantize)",
                       cfg->weights == NGPT_WEIGHTS_Q8 ? "8-bit" : "4-bit",
                       cfg->weights == NGPT_WEIGHTS_Q8 ? "q8" : "q4");
    if (!st) st = ngpt_plan_walk(cfg, s, shared, NULL, plan);
    return st;
}

ngpt_status ngpt_context_size(const ngpt_config *cfg, const ngpt_shape *shape, bool shared,
                              size_t *bytes)
{
    ngpt_shape s;
    ngpt_plan plan;
    ngpt_status st = plan_size(cfg, shape, shared, &s, &plan);
    if (!st) *bytes = plan.bytes;
    return st;
}

/* Clears, in a caller's arena, what must start at zero: the context's
 * fields, the parameters (documented; 8-bit weights too), gradients and
 * AdamW moments, the cache lengths. The rest of the arena (activations, scratch, the cache's
 * rows: hundreds of MiB when training) is always written before it is read,
 * so it is left as it is; clearing it all took seconds. */
static void zero_state(ngpt_context *ctx, const ngpt_plan *p, const ngpt_shape *s,
                       const ngpt_config *cfg)
{
    ngpt_layout lay;
    ngpt_layout_compute(cfg, &lay);
    const size_t P = lay.total * sizeof(float);
    const size_t TP = s->adapter ? s->adapter->ll.total * sizeof(float) : P;   /* trained */
    memset(ctx, 0, sizeof *ctx);
    if (p->params) memset(p->params, 0, P);
    if (p->grads) memset(p->grads, 0, TP);
    if (p->adam_m) memset(p->adam_m, 0, TP);
    if (p->adam_v) memset(p->adam_v, 0, TP);
    if (p->kv.len) memset(p->kv.len, 0, (size_t)s->batch * sizeof(int32_t));
    if (p->kv.held) memset(p->kv.held, 0, (size_t)s->batch * sizeof(int32_t));
    size_t q8_bytes = 0;
    if (p->q8_w && ngpt_linear_q8_bytes(cfg, &q8_bytes)) memset(p->q8_w, 0, q8_bytes);
}


/* The parameters of a new context, zeros but the LayerNorm weights, which
 * start at 1 so that a fresh context is a valid model. */
static void params_start(const ngpt_config *cfg, const ngpt_layout *lay, float *params)
{
    memset(params, 0, lay->total * sizeof(float));
    for (int l = 0; l < cfg->n_layers; l++)
        for (int c = 0; c < cfg->d_model; c++) {
            ngpt_block_ptr(lay, params, l, lay->ln1_w)[c] = 1.0f;
            ngpt_block_ptr(lay, params, l, lay->ln2_w)[c] = 1.0f;
        }
    if (cfg->final_norm)
        for (int c = 0; c < cfg->d_model; c++) params[lay->lnf_w + c] = 1.0f;
}

ngpt_status ngpt_context_create(const char *fn, ngpt_context **out, const ngpt_config *cfg,
                                const ngpt_shared_weights *shared, const ngpt_shape *shape,
                                void *arena, size_t arena_bytes)
{
    *out = NULL;
    ngpt_shape s;
    ngpt_plan plan;
    ngpt_status st = ngpt_cpu_check();     /* before anything can reach a kernel */
    if (!st) st = plan_size(cfg, shape, shared != NULL, &s, &plan);
    if (!st && s.adapter && !shared)
        st = ngpt_fail(NGPT_ERR_BAD_ARG, "shape.adapter: an adapter trains on a model's "
                       "weights, frozen: make the context from the model alone (no config)");
    if (st) return ngpt_prefixed(fn, st);

    void *owned = NULL;
    if (arena) {
        if (arena_bytes < plan.bytes)
            return ngpt_fail(NGPT_ERR_ARENA_TOO_SMALL,
                             "%s: the arena holds %zu bytes but this config and shape need %zu "
                             "(size it with ngpt_context_arena_size)", fn, arena_bytes,
                             plan.bytes);
    } else {
        /* calloc: a large block comes from fresh zero pages, so nothing
         * needs clearing and no page is touched before it is used */
        arena = owned = calloc(1, plan.bytes);
        if (!owned)
            return ngpt_fail(NGPT_ERR_NO_MEMORY, "%s: could not allocate the %zu-byte arena; "
                             "plan a smaller batch or seq, or pass your own buffer", fn,
                             plan.bytes);
        ngpt_huge_pages_advise(owned, plan.bytes);      /* its weights stream at every step */
        arena_bytes = plan.bytes;
    }
    uintptr_t a = ((uintptr_t)arena + (NGPT_ALIGN - 1)) & ~(uintptr_t)(NGPT_ALIGN - 1);
    unsigned char *base = (unsigned char *)a;
    ngpt_plan carved;
    if ((st = ngpt_plan_walk(cfg, &s, shared != NULL, base, &carved))) {
        free(owned);
        return ngpt_prefixed(fn, st);
    }
    /* The KV cache is written a row per layer and token: in huge pages the
     * first token cleared all of it (every layer's first row is in another
     * 2 MiB page), up to 0.3 s before the first token on a VM */
    if (owned && carved.kv.k) ngpt_huge_pages_decline(carved.kv.k, carved.kv.span);
    if (shared) carved.params = shared->params;   /* read only: see context.h */
    ngpt_context *ctx = (ngpt_context *)base;
    if (owned) memset(ctx, 0, sizeof *ctx);
    else zero_state(ctx, &carved, &s, cfg);
    ctx->cfg = *cfg;
    ctx->shape = s;
    ngpt_layout_compute(cfg, &ctx->lay);
    ctx->plan = carved;
    ctx->k = &ngpt_kernels_active;
    ctx->owned = owned;
    ctx->n_tensors = ngpt_layout_tensor_count(cfg);
    for (int32_t i = 0; i < ctx->n_tensors; i++)
        ngpt_layout_tensor(cfg, &ctx->lay, i, carved.tensor_names + (size_t)i * NGPT_NAME_MAX,
                           &carved.tensors[i]);
    ngpt_rope_tables(cfg, carved.rope_cos, carved.rope_sin);
    if (carved.rope_local_cos) ngpt_rope_local_tables(cfg, carved.rope_local_cos, carved.rope_local_sin);
    if (carved.pos_table) ngpt_sinusoid_table(cfg, carved.pos_table);
    if (shared) {   /* the model's weights, laid out and packed once */
        ctx->model = shared->model;
        ctx->q8_linear = shared->q8_linear;
        ctx->model_users = shared->users;
        ctx->tokenizer = shared->tokenizer;
        ctx->run.weights_packed = cfg->weights == NGPT_WEIGHTS_F32;
    } else {
        params_start(cfg, &ctx->lay, carved.params);
    }
    if (s.adapter) {    /* its copy, trained; and its moments and steps when it has them */
        const ngpt_adapter *ad = s.adapter;
        const size_t n = ad->ll.total * sizeof(float);
        ctx->lora.training = true;
        ctx->lora.train = ad->ll;
        memcpy(carved.lora.w, ad->w, n);
        if (ad->adam_m) {
            memcpy(carved.adam_m, ad->adam_m, n);
            memcpy(carved.adam_v, ad->adam_v, n);
            ctx->optim_steps = ad->steps;
        }
    }
    ngpt_run_params_changed(ctx);       /* new parameters, in the state_dict layout */
    /* last: nothing after this can fail, so a failed init never leaves threads */
    if ((st = ngpt_pool_start(carved.threads.pool, carved.threads.workers, s.threads))) {
        free(owned);
        return st;
    }
    if (shared) atomic_fetch_add(shared->users, 1);
    if (s.adapter) atomic_fetch_add(&((ngpt_adapter *)(uintptr_t)s.adapter)->users, 1);
    *out = ctx;
    return NGPT_OK;
}

void ngpt_context_free(ngpt_context *ctx)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return;
    ngpt_pool_stop(ctx->plan.threads.pool);
    if (ctx->model_users) atomic_fetch_sub(ctx->model_users, 1);
    ngpt_lora_release(ctx);
    free(ctx->owned);
}

ngpt_status ngpt_context_config(const ngpt_context *ctx, ngpt_config *cfg)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !cfg) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_config: NULL argument");
    *cfg = ctx->cfg;
    return NGPT_OK;
}

ngpt_status ngpt_context_shape(const ngpt_context *ctx, ngpt_shape *shape)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !shape) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_shape: NULL argument");
    *shape = ctx->shape;
    return NGPT_OK;
}

ngpt_status ngpt_context_arena_used(const ngpt_context *ctx, size_t *bytes)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !bytes)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_arena_used: NULL argument");
    *bytes = ctx->plan.bytes;
    return NGPT_OK;
}

