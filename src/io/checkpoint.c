/* checkpoint.c — model checkpoints (checkpoint.h): the config in the
 * header's model block, the tensor set a config implies, and the public
 * ngpt_checkpoint_save / _config / _load functions over the container
 * (ckpt_file.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/checkpoint.h"
#include "io/tok_tensor.h"
#include "runtime/config.h"

/* ------------------------------------------------------ the model block */

/* Offsets inside the model block (header offset - 32). */
enum { BLOCK_INTS = 0, BLOCK_DROPOUT = 24, BLOCK_THETA = 28, BLOCK_FLAGS = 32 };

void ngpt_ckpt_config_encode(const ngpt_config *c, unsigned char b[NGPT_CKPT_MODEL_BYTES])
{
    const int32_t ints[6] = {c->vocab_size, c->context_len, c->d_model,
                             c->n_layers,   c->n_heads,     c->d_ff};
    memcpy(b + BLOCK_INTS, ints, sizeof ints);
    memcpy(b + BLOCK_DROPOUT, &c->dropout, 4);
    memcpy(b + BLOCK_THETA, &c->rope_theta, 4);
    b[BLOCK_FLAGS] = c->qkv_bias, b[BLOCK_FLAGS + 1] = c->tie_lm_head;
    b[BLOCK_FLAGS + 2] = c->final_norm;
    b[BLOCK_FLAGS + 3] = (unsigned char)c->norm, b[BLOCK_FLAGS + 4] = (unsigned char)c->pos;
}

static ngpt_status config_decode(const ngpt_ckpt_reader *r, ngpt_config *c)
{
    const unsigned char *b = r->model_block;
    int32_t ints[6];
    memcpy(ints, b + BLOCK_INTS, sizeof ints);
    c->vocab_size = ints[0], c->context_len = ints[1], c->d_model = ints[2];
    c->n_layers = ints[3], c->n_heads = ints[4], c->d_ff = ints[5];
    memcpy(&c->dropout, b + BLOCK_DROPOUT, 4);
    memcpy(&c->rope_theta, b + BLOCK_THETA, 4);
    for (int i = 0; i < 3; i++)
        if (b[BLOCK_FLAGS + i] > 1)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "config flag byte %d of %s is %u, not "
                                  "0 or 1", NGPT_CKPT_MODEL_BLOCK + BLOCK_FLAGS + i, r->src,
                                  b[BLOCK_FLAGS + i]);
    c->qkv_bias = b[BLOCK_FLAGS], c->tie_lm_head = b[BLOCK_FLAGS + 1];
    c->final_norm = b[BLOCK_FLAGS + 2];
    c->norm = (ngpt_norm_placement)b[BLOCK_FLAGS + 3];
    c->pos = (ngpt_pos_encoding)b[BLOCK_FLAGS + 4];
    ngpt_status st = ngpt_config_check(c);
    if (st) {
        char why[400];
        snprintf(why, sizeof why, "%s", ngpt_last_error());
        return ngpt_fail(st == NGPT_ERR_UNSUPPORTED ? st : NGPT_ERR_BAD_FORMAT,
                         "the config stored in %s is not valid: %s", r->src, why);
    }
    return NGPT_OK;
}

/* ----------------------------------------------------- the tensor set */

/* The model tensors are exactly those the config implies; other names must
 * be optim.m.<model tensor> / optim.v.<model tensor> with the same shape. */
static ngpt_status check_tensor_set(const ngpt_ckpt_reader *r, const ngpt_config *cfg)
{
    ngpt_layout lay;
    ngpt_layout_compute(cfg, &lay);
    int32_t n_model = ngpt_layout_tensor_count(cfg);
    char name[NGPT_NAME_MAX];
    ngpt_tensor_info info;
    for (int32_t i = 0; i < n_model; i++) {
        ngpt_layout_tensor(cfg, &lay, i, name, &info);
        int64_t at = ngpt_ckpt_find_tensor(r, name);
        if (at < 0)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s is missing in %s", name,
                                  r->src);
        if (!ngpt_ckpt_tensor_shape_is(r, (uint32_t)at, info.ndim, info.shape))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s does not have the "
                                  "shape (%d%s%.0d) its config implies", name, r->src,
                                  (int)info.shape[0], info.ndim > 1 ? "," : "",
                                  info.ndim > 1 ? (int)info.shape[1] : 0);
    }
    for (uint32_t i = 0; i < r->n_tensors; i++) {
        const char *tname = ngpt_ckpt_tensor_name(r, i);
        if (!strcmp(tname, NGPT_CKPT_TOKENIZER)) {     /* the model's tokenizer (version 2) */
            ngpt_status st = ngpt_ckpt_tokenizer_check(r, i, cfg);
            if (st) return st;
            continue;
        }
        if (ngpt_ckpt_tensor_dtype(r, i) == NGPT_CKPT_BYTES)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s holds bytes; only the "
                             "tokenizer does", tname, r->src);
        const char *base = tname;
        if (!strncmp(tname, "optim.m.", 8) || !strncmp(tname, "optim.v.", 8)) base = tname + 8;
        bool known = false;
        for (int32_t j = 0; j < n_model && !known; j++) {
            ngpt_layout_tensor(cfg, &lay, j, name, &info);
            if (!strcmp(base, name)) {
                known = true;
                if (base != tname && !ngpt_ckpt_tensor_shape_is(r, i, info.ndim, info.shape))
                    return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of %s is not shaped "
                                          "like %s", tname, r->src, name);
            }
        }
        if (!known)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s holds unknown tensor %s", r->src,
                                  tname);
    }
    return NGPT_OK;
}

ngpt_status ngpt_ckpt_open_model(ngpt_ckpt_reader *r, const char *path, const void *data,
                                 size_t size, ngpt_config *cfg)
{
    ngpt_status st = path ? ngpt_ckpt_open_file(r, path) : ngpt_ckpt_open_mem(r, data, size);
    if (st) return st;
    if ((st = config_decode(r, cfg)) || (st = check_tensor_set(r, cfg))) ngpt_ckpt_close(r);
    return st;
}

/* ------------------------------------------------------------ saving */

void ngpt_ckpt_model_tensor(const ngpt_context *ctx, const float *base, int32_t i,
                            ngpt_ckpt_tensor *out)
{
    const ngpt_tensor_info *info = &ctx->plan.tensors[i];
    ngpt_ckpt_tensor t = {.name = info->name, .ndim = info->ndim, .data = base + info->offset};
    t.shape[0] = info->shape[0];
    t.shape[1] = info->ndim > 1 ? info->shape[1] : 0;
    *out = t;
}

static void model_tensor_fn(void *user, size_t i, ngpt_ckpt_tensor *out)
{
    const ngpt_context *ctx = user;
    if (i == (size_t)ctx->n_tensors) ngpt_ckpt_tokenizer_tensor(ctx, out);    /* the last */
    else ngpt_ckpt_model_tensor(ctx, ctx->plan.params, (int32_t)i, out);
}

ngpt_status ngpt_checkpoint_save(const ngpt_context *ctx, const char *path)
{
    if (!ctx || !path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_save: NULL argument");
    unsigned char block[NGPT_CKPT_MODEL_BYTES];
    ngpt_ckpt_config_encode(&ctx->cfg, block);
    return ngpt_prefixed("ngpt_checkpoint_save",
                         ngpt_ckpt_write(path, block, (size_t)ctx->n_tensors +
                                         (ctx->tokenizer != NULL), model_tensor_fn,
                                         (void *)ctx, NULL, 0));
}

/* ----------------------------------------------------------- loading */

static ngpt_status read_config(const char *path, const void *data, size_t size, ngpt_config *cfg)
{
    ngpt_ckpt_reader r;
    ngpt_status st = ngpt_ckpt_open_model(&r, path, data, size, cfg);
    if (!st) ngpt_ckpt_close(&r);
    return st;
}

ngpt_status ngpt_checkpoint_config_mem(const void *data, size_t size, ngpt_config *cfg)
{
    if (!data || !cfg)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_config_mem: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_config_mem", read_config(NULL, data, size, cfg));
}

ngpt_status ngpt_checkpoint_config(const char *path, ngpt_config *cfg)
{
    if (!path || !cfg) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_config: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_config", read_config(path, NULL, 0, cfg));
}

/* Opens, checks the config against the context's, and copies every model
 * tensor; the reader is verified, so this cannot fail halfway and leave
 * the parameters half-loaded. */
static ngpt_status load(ngpt_context *ctx, const char *path, const void *data, size_t size)
{
    ngpt_ckpt_reader r;
    ngpt_config cfg;
    ngpt_status st = ngpt_ckpt_open_model(&r, path, data, size, &cfg);
    if (st) return st;
    st = ngpt_config_compare(&ctx->cfg, &cfg);
    if (!st) st = ngpt_ckpt_tokenizer_agrees(&r, ctx);
    for (int32_t i = 0; !st && i < ctx->n_tensors; i++) {
        const ngpt_tensor_info *t = &ctx->plan.tensors[i];
        st = ngpt_ckpt_read_tensor(&r, t->name, t->ndim, t->shape, ctx->plan.params + t->offset);
    }
    if (!st) ngpt_run_params_changed(ctx);
    ngpt_ckpt_close(&r);
    return st;
}

ngpt_status ngpt_checkpoint_load_mem(ngpt_context *ctx, const void *data, size_t size)
{
    if (!ctx || !data)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_load_mem: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_load_mem", load(ctx, NULL, data, size));
}

ngpt_status ngpt_checkpoint_load(ngpt_context *ctx, const char *path)
{
    if (!ctx || !path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_load: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_load", load(ctx, path, NULL, 0));
}
