/* context.c — planning, creating and inspecting a context. */
#include <math.h>
#include <sleef.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "fpmode.h"
#include "internal.h"
#include "pool.h"
#include "rng.h"

ngpt_shape ngpt_shape_default(ngpt_mode mode)
{
    ngpt_shape s = {.mode = mode, .batch = mode == NGPT_MODE_TRAIN ? 32 : 1, .seq = 0,
                    .trace = NGPT_TRACE_NONE, .threads = 1};
    return s;
}

/* Validates the shape against the config and resolves seq = 0 to T. */
static ngpt_status shape_resolve(const ngpt_config *cfg, const ngpt_shape *in, ngpt_shape *out)
{
    ngpt_shape s = *in;
    if (s.mode != NGPT_MODE_INFER && s.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.mode must be NGPT_MODE_INFER or NGPT_MODE_TRAIN");
    if (s.batch < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.batch must be >= 1, got %d", (int)s.batch);
    if (s.seq == 0) s.seq = cfg->context_len;
    if (s.seq < 1 || s.seq > cfg->context_len)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.seq must be in 1..T=%d (0 means T), got %d",
                         (int)cfg->context_len, (int)s.seq);
    if ((int64_t)s.batch * s.seq > INT32_MAX)    /* kernels count rows (batch*seq) in int */
        return ngpt_fail(NGPT_ERR_OVERFLOW, "batch*seq = %d*%d overflows a 32-bit int; plan a "
                         "smaller batch or seq", (int)s.batch, (int)s.seq);
    if (s.trace != NGPT_TRACE_NONE && s.trace != NGPT_TRACE_FULL && s.trace != NGPT_TRACE_LAST_ROW)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.trace %d is not an ngpt_trace value",
                         (int)s.trace);
    if (s.threads < 1 || s.threads > 1024)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "shape.threads must be in 1..1024, got %d",
                         (int)s.threads);
    *out = s;
    return NGPT_OK;
}

/* Validates config and shape, resolves the shape and sizes the plan
 * (messages without a prefix: the public callers add theirs). */
static ngpt_status plan_size(const ngpt_config *cfg, const ngpt_shape *shape, ngpt_shape *s,
                             ngpt_plan *plan)
{
    ngpt_status st = ngpt_config_check(cfg);
    if (!st) st = shape_resolve(cfg, shape, s);
    if (!st) st = ngpt_plan_walk(cfg, s, NULL, plan);
    return st;
}

ngpt_status ngpt_arena_size(const ngpt_config *cfg, const ngpt_shape *shape, size_t *bytes)
{
    if (!cfg || !shape || !bytes)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_arena_size: NULL argument");
    ngpt_shape s;
    ngpt_plan plan;
    ngpt_status st = plan_size(cfg, shape, &s, &plan);
    if (!st) *bytes = plan.bytes;
    return ngpt_prefixed("ngpt_arena_size", st);
}

/* sin and cos of pos * theta^(-2i/dim) for pairs i and positions 0..T-1,
 * element (pos, i) at pos * row + i * step: the inverse frequency in
 * double, the angle rounded to float, then sin/cos in float like the
 * original's float32 cache. */
static void angle_table(const ngpt_config *cfg, int pairs, double dim, float *sin_t, float *cos_t,
                        size_t row, size_t step)
{
    for (int i = 0; i < pairs; i++) {
        double inv_freq = Sleef_finz_powd1_u10purecfma((double)cfg->rope_theta, -(2.0 * i) / dim);
        for (int pos = 0; pos < cfg->context_len; pos++) {
            float angle = (float)((double)pos * inv_freq);
            Sleef_float_2 sc = Sleef_finz_sincosf1_u10purecfma(angle);
            cos_t[(size_t)pos * row + (size_t)i * step] = sc.y;
            sin_t[(size_t)pos * row + (size_t)i * step] = sc.x;
        }
    }
}

void ngpt_rope_tables(const ngpt_config *cfg, float *cos_t, float *sin_t)
{
    const int half = cfg->d_model / cfg->n_heads / 2;
    angle_table(cfg, half, (double)(2 * half), sin_t, cos_t, (size_t)half, 1);
}

void ngpt_sinusoid_table(const ngpt_config *cfg, float *pe)
{
    const int half = cfg->d_model / 2;
    angle_table(cfg, half, (double)cfg->d_model, pe, pe + 1, (size_t)cfg->d_model, 2);
}

/* Clears, in a caller's arena, what must start at zero: the context's
 * fields, the parameters (documented), gradients and AdamW moments, the
 * cache lengths. The rest of the arena (activations, scratch, the cache's
 * rows: hundreds of MiB when training) is always written before it is read,
 * so it is left as it is; clearing it all took seconds. */
static void zero_state(ngpt_context *ctx, const ngpt_plan *p, const ngpt_shape *s,
                       const ngpt_config *cfg)
{
    ngpt_layout lay;
    ngpt_layout_compute(cfg, &lay);
    const size_t P = lay.total * sizeof(float);
    memset(ctx, 0, sizeof *ctx);
    memset(p->params, 0, P);
    if (p->grads) memset(p->grads, 0, P);
    if (p->adam_m) memset(p->adam_m, 0, P);
    if (p->adam_v) memset(p->adam_v, 0, P);
    if (p->kv_len) memset(p->kv_len, 0, (size_t)s->batch * sizeof(int32_t));
}

ngpt_status ngpt_context_init(ngpt_context **out, const ngpt_config *cfg, const ngpt_shape *shape,
                      void *arena, size_t arena_bytes)
{
    NGPT_FPMODE_SCOPE;
    if (!out || !cfg || !shape)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_init: NULL argument");
    *out = NULL;
    ngpt_shape s;
    ngpt_plan plan;
    ngpt_status st = ngpt_cpu_check();     /* before anything can reach a kernel */
    if (!st) st = plan_size(cfg, shape, &s, &plan);
    if (st) return ngpt_prefixed("ngpt_context_init", st);

    void *owned = NULL;
    if (arena) {
        if (arena_bytes < plan.bytes)
            return ngpt_fail(NGPT_ERR_ARENA_TOO_SMALL,
                             "ngpt_context_init: the arena holds %zu bytes but this config and "
                             "shape need %zu (size it with ngpt_arena_size)", arena_bytes,
                             plan.bytes);
    } else {
        /* calloc: a large block comes from fresh zero pages, so nothing
         * needs clearing and no page is touched before it is used */
        arena = owned = calloc(1, plan.bytes);
        if (!owned)
            return ngpt_fail(NGPT_ERR_NO_MEMORY, "ngpt_context_init: could not allocate the "
                             "%zu-byte arena; plan a smaller batch or seq, or pass your own buffer",
                             plan.bytes);
        arena_bytes = plan.bytes;
    }
    uintptr_t a = ((uintptr_t)arena + (NGPT_ALIGN - 1)) & ~(uintptr_t)(NGPT_ALIGN - 1);
    unsigned char *base = (unsigned char *)a;
    ngpt_plan carved;
    if ((st = ngpt_plan_walk(cfg, &s, base, &carved))) {
        free(owned);
        return ngpt_prefixed("ngpt_context_init", st);
    }
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
    if (carved.pos_table) ngpt_sinusoid_table(cfg, carved.pos_table);
    /* LayerNorm weights start at 1 so a fresh context is a valid model. */
    for (int l = 0; l < cfg->n_layers; l++)
        for (int c = 0; c < cfg->d_model; c++) {
            ngpt_block_ptr(&ctx->lay, carved.params, l, ctx->lay.ln1_w)[c] = 1.0f;
            ngpt_block_ptr(&ctx->lay, carved.params, l, ctx->lay.ln2_w)[c] = 1.0f;
        }
    if (cfg->final_norm)
        for (int c = 0; c < cfg->d_model; c++) carved.params[ctx->lay.lnf_w + c] = 1.0f;
    /* last: nothing after this can fail, so a failed init never leaves threads */
    if ((st = ngpt_pool_start(carved.pool, carved.pool_workers, s.threads))) {
        free(owned);
        return st;
    }
    *out = ctx;
    return NGPT_OK;
}

void ngpt_context_free(ngpt_context *ctx)
{
    if (!ctx) return;
    ngpt_pool_stop(ctx->plan.pool);
    free(ctx->owned);
}

ngpt_status ngpt_context_config(const ngpt_context *ctx, ngpt_config *cfg)
{
    if (!ctx || !cfg) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_config: NULL argument");
    *cfg = ctx->cfg;
    return NGPT_OK;
}

ngpt_status ngpt_context_shape(const ngpt_context *ctx, ngpt_shape *shape)
{
    if (!ctx || !shape) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_shape: NULL argument");
    *shape = ctx->shape;
    return NGPT_OK;
}

ngpt_status ngpt_context_arena_used(const ngpt_context *ctx, size_t *bytes)
{
    if (!ctx || !bytes)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_arena_used: NULL argument");
    *bytes = ctx->plan.bytes;
    return NGPT_OK;
}

ngpt_status ngpt_tensor_count(const ngpt_context *ctx, int32_t *count)
{
    if (!ctx || !count) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tensor_count: NULL argument");
    *count = ctx->n_tensors;
    return NGPT_OK;
}

ngpt_status ngpt_tensor_at(const ngpt_context *ctx, int32_t index, ngpt_tensor_info *info)
{
    if (!ctx || !info) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tensor_at: NULL argument");
    if (index < 0 || index >= ctx->n_tensors)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_tensor_at: index %d is not in 0..%d "
                         "(ngpt_tensor_count)", (int)index, (int)ctx->n_tensors - 1);
    *info = ctx->plan.tensors[index];
    return NGPT_OK;
}

ngpt_status ngpt_tensor_find(const ngpt_context *ctx, const char *name, ngpt_tensor_info *info)
{
    if (!ctx || !name || !info)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tensor_find: NULL argument");
    for (int32_t i = 0; i < ctx->n_tensors; i++)
        if (!strcmp(ctx->plan.tensors[i].name, name)) {
            *info = ctx->plan.tensors[i];
            return NGPT_OK;
        }
    return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_tensor_find: no tensor is named \"%s\" "
                     "(ngpt_tensor_at lists them)", name);
}

ngpt_status ngpt_params_data(ngpt_context *ctx, float **params, size_t *count)
{
    if (!ctx || !params || !count)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_params_data: NULL argument");
    ctx->run.packed_valid = false;      /* the caller may write through the pointer */
    *params = ctx->plan.params;
    *count = ctx->lay.total;
    return NGPT_OK;
}

ngpt_status ngpt_dropout_set(ngpt_context *ctx, bool enabled, uint64_t seed, uint64_t step)
{
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_dropout_set: NULL context");
    ctx->run.dropout.on = enabled;
    ctx->run.dropout.seed = seed;
    ctx->run.dropout.step = step;
    return NGPT_OK;
}

bool ngpt_dropout_active(const ngpt_context *ctx)
{
    return ctx->run.dropout.on && ctx->cfg.dropout > 0.0f;
}

ngpt_dropout_key ngpt_dropout_key_of(const ngpt_context *ctx, int layer, int site)
{
    ngpt_dropout_key key = {ctx->run.dropout.seed, ctx->run.dropout.step,
                            ngpt_rng_site_dropout(layer, site), ctx->cfg.dropout};
    return key;
}

ngpt_status ngpt_params_init(ngpt_context *ctx, uint64_t seed)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_params_init: NULL context");
    float *params = ctx->plan.params;
    for (int32_t t = 0; t < ctx->n_tensors; t++) {
        const ngpt_tensor_info *info = &ctx->plan.tensors[t];
        float *x = params + info->offset;
        const char *name = info->name;
        size_t len = strlen(name);
        bool is_bias = len >= 4 && !strcmp(name + len - 4, "bias");
        bool is_ln = strstr(name, "ln") != NULL && info->ndim == 1;
        if (is_ln && !is_bias) {
            for (size_t i = 0; i < info->count; i++) x[i] = 1.0f;
        } else if (is_bias) {
            memset(x, 0, info->count * sizeof(float));
        } else { /* Linear and Embedding weights ~ N(0, 0.02) */
            for (size_t g = 0; g * 4 < info->count; g++) {
                uint32_t w[4];
                float z[4];
                ngpt_rng_block(seed, NGPT_STREAM_INIT | (uint32_t)t, 0, g, w);
                ngpt_rng_normal4(w, z);
                for (size_t j = 0; j < 4 && g * 4 + j < info->count; j++) x[g * 4 + j] = 0.02f * z[j];
            }
        }
    }
    ngpt_run_params_changed(ctx);
    return NGPT_OK;
}
