/* params.c — the parameters of a context: the tensor table, access to the
 * floats, initialisation (8-bit weights: the float32 draw, quantized), and
 * their checksum. */
#include <string.h>

#include "base/fpmode.h"
#include "base/rng.h"
#include "runtime/context.h"
#include "runtime/weights.h"

ngpt_status ngpt_context_tensor_count(const ngpt_context *ctx, int32_t *count)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !count) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_tensor_count: NULL argument");
    *count = ctx->n_tensors;
    return NGPT_OK;
}

ngpt_status ngpt_context_tensor_at(const ngpt_context *ctx, int32_t index, ngpt_tensor_info *info)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !info) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_tensor_at: NULL argument");
    if (index < 0 || index >= ctx->n_tensors)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_tensor_at: index %d is not in 0..%d "
                         "(ngpt_context_tensor_count)", (int)index, (int)ctx->n_tensors - 1);
    *info = ctx->plan.tensors[index];
    return NGPT_OK;
}

ngpt_status ngpt_context_tensor_find(const ngpt_context *ctx, const char *name, ngpt_tensor_info *info)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !name || !info)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_tensor_find: NULL argument");
    for (int32_t i = 0; i < ctx->n_tensors; i++)
        if (!strcmp(ctx->plan.tensors[i].name, name)) {
            *info = ctx->plan.tensors[i];
            return NGPT_OK;
        }
    return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_context_tensor_find: no tensor is named \"%s\" "
                     "(ngpt_context_tensor_at lists them)", name);
}

ngpt_status ngpt_context_params(ngpt_context *ctx, float **params, size_t *count)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !params || !count)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_params: NULL argument");
    if (ctx->lora.training) {   /* what it trains: the adapter's floats */
        *params = ctx->plan.lora.w;
        *count = ctx->lora.train.total;
        ngpt_run_params_changed(ctx);
        return NGPT_OK;
    }
    if (ctx->model)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_params: the context shares a "
                         "model's weights, which are read only (a context made with a config "
                         "beside the model owns a copy)");
    /* the caller may read or write through the pointer, now or later: the
     * state_dict layout until ngpt_context_prepare */
    ngpt_weights_unpack(ctx);
    ctx->run.params_exposed = true;
    *params = ctx->plan.params;
    *count = ctx->lay.total;
    return NGPT_OK;
}

/* Elements first..first+n-1 of tensor t (count elements in all) as drawn by
 * ngpt_context_params_init: N(0, 0.02) from Philox blocks of 4, block g = element/4
 * (first is a multiple of 4). */
static void draw_normal(float *x, size_t first, size_t n, size_t count, uint64_t seed, int32_t t)
{
    for (size_t g = first / 4; g * 4 < first + n && g * 4 < count; g++) {
        uint32_t w[4];
        float z[4];
        ngpt_rng_block(seed, NGPT_STREAM_INIT | (uint32_t)t, 0, g, w);
        ngpt_rng_normal4(w, z);
        for (size_t j = 0; j < 4; j++) {
            const size_t e = g * 4 + j;
            if (e >= first && e < first + n && e < count) x[e - first] = 0.02f * z[j];
        }
    }
}

ngpt_status ngpt_context_params_init(ngpt_context *ctx, uint64_t seed)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_params_init: NULL context");
    if (ctx->model)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_params_init: the context shares a "
                         "model's weights, which are read only (a context made with a config "
                         "beside the model owns a copy)");
    float *params = ctx->plan.params;
    for (int32_t t = 0; t < ctx->n_tensors; t++) {
        const ngpt_tensor_info *info = &ctx->plan.tensors[t];
        const char *name = info->name;
        size_t len = strlen(name);
        bool is_bias = len >= 4 && !strcmp(name + len - 4, "bias");
        /* the norms' weights: ln1, ln2, ln_f, qk_norm's q_norm, k_norm, and
         * norm=sandwich's post_attn_norm, post_mlp_norm */
        bool is_ln = (strstr(name, "ln") != NULL || strstr(name, "_norm.") != NULL) &&
                     info->ndim == 1;
        if (info->dtype == NGPT_DTYPE_Q8 || info->dtype == NGPT_DTYPE_Q4) {
            /* the float32 model's values, drawn 16 rows at a time, quantized */
            const int n = info->shape[0], k = info->shape[1];
            float *rows = ctx->plan.threads.panel;
            for (int j0 = 0; j0 < n; j0 += NGPT_Q8_NR) {
                const int nr = n - j0 < NGPT_Q8_NR ? n - j0 : NGPT_Q8_NR;
                draw_normal(rows, (size_t)j0 * k, (size_t)nr * k, info->count, seed, t);
                ngpt_weights_quantize(ctx, info->dtype, info->offset, n, k, j0, rows, nr);
            }
            continue;
        }
        float *x = params + info->offset;
        if (is_ln && !is_bias) {     /* a multiplier of 1: w, or (norm_offset) 1 + w */
            const float one = ctx->cfg.norm_offset ? 0.0f : 1.0f;
            for (size_t i = 0; i < info->count; i++) x[i] = one;
        } else if (is_bias) {
            memset(x, 0, info->count * sizeof(float));
        } else { /* Linear and Embedding weights ~ N(0, 0.02) */
            draw_normal(x, 0, info->count, info->count, seed, t);
        }
    }
    ngpt_weights_written(ctx);
    ngpt_run_params_changed(ctx);
    return NGPT_OK;
}

ngpt_status ngpt_context_params_checksum(const ngpt_context *ctx, uint64_t *hash)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !hash) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_params_checksum: NULL argument");
    *hash = ctx->lora.training
                ? ngpt_checksum_bytes(ctx->plan.lora.w, ctx->lora.train.total * sizeof(float))
                : ngpt_weights_checksum(ctx);
    return NGPT_OK;
}
