/* params.c — the parameters of a context: the tensor table, access to the
 * floats, initialisation, and their checksum. */
#include <string.h>

#include "base/fpmode.h"
#include "base/rng.h"
#include "runtime/context.h"

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
    ctx->run.params_exposed = true;     /* the caller may write through the pointer, */
    ngpt_run_params_written(ctx);       /* now or later */
    *params = ctx->plan.params;
    *count = ctx->lay.total;
    return NGPT_OK;
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

ngpt_status ngpt_params_checksum(const ngpt_context *ctx, uint64_t *hash)
{
    if (!ctx || !hash) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_params_checksum: NULL argument");
    *hash = ngpt_checksum_bytes(ctx->plan.params, ctx->lay.total * sizeof(float));
    return NGPT_OK;
}
