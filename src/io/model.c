/* model.c — ngpt_model (io/model.h): a checkpoint opened, verified and
 * mapped once; its config, tokenizer and training state answered from
 * memory; its weights laid out once for every inference context: used in
 * place in the mapped file where it holds them as contexts read them (the
 * quantized Linears; a float32 model's parameters when the file stores
 * them back to back, Linears packed: params_in_place), else the float32
 * parameters copied once into a 64-byte-aligned block with the Linears
 * packed (what each context used to do in its own arena), when the first
 * context is made. Immutable after that but for the count of its contexts
 * (an atomic). The public questions to a checkpoint file and the loads of
 * one into a context (ngpt_checkpoint_config, ngpt_checkpoint_load and
 * their _mem forms, ngpt_checkpoint_load_model) go through one. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "base/fpmode.h"
#include "io/checkpoint.h"
#include "io/model.h"
#include "io/tok_tensor.h"
#include "runtime/config.h"
#include "runtime/weights.h"
#include "tokenizer/tokenizer.h"

struct ngpt_model {
    ngpt_ckpt_reader r;
    char *path;                 /* r.src's copy, or NULL */
    void *copy;                 /* an unaligned buffer copied to 64-byte alignment, or NULL */
    ngpt_config cfg;
    ngpt_tokenizer *tok;        /* NULL: the file carries none */
    bool for_contexts;          /* opened by ngpt_model_open(_mem): contexts may use it */
    /* laid out by the first context (lock held), so that a model used only
     * for its config, tokenizer or a load into a context of its own
     * (ngpt quantize) copies nothing; unchanged after */
    pthread_mutex_t lock;
    float *params;              /* the parameters copied (owned), or NULL */
    const float *weights;       /* the parameters contexts read: params, or in the file; NULL
                                 * until laid out (weights) */
    const int8_t **q8_linear;   /* (1 + 4L) the quantized Linears in r, or NULL */
    atomic_int contexts;        /* live contexts made from the model */
};

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* The float32 parameters in place in the file, or NULL: a float32 model
 * whose file holds every tensor where the layout puts it relative to the
 * first (each a multiple of 16 floats, so the 64-byte padding between them
 * is empty: every real model's shapes) and every Linear packed, as an
 * importer or an inference context's save writes it. */
static const float *params_in_place(const ngpt_model *m, const ngpt_layout *lay)
{
    if (m->cfg.weights != NGPT_WEIGHTS_F32) return NULL;
    const unsigned char *base = NULL;
    const int32_t n = ngpt_layout_tensor_count(&m->cfg);
    for (int32_t i = 0; i < n; i++) {
        char name[NGPT_NAME_MAX];
        ngpt_tensor_info t;
        size_t size;
        ngpt_layout_tensor(&m->cfg, lay, i, name, &t);
        const uint32_t at = (uint32_t)ngpt_ckpt_find_tensor(&m->r, name);
        const unsigned char *data = ngpt_ckpt_tensor_data(&m->r, at, &size);
        const bool linear = ngpt_weights_linear_index(&m->cfg, lay, t.offset) >= 0;
        if (i == 0) base = data - t.offset * sizeof(float);
        if (data != base + t.offset * sizeof(float) ||
            ngpt_ckpt_tensor_dtype(&m->r, at) != (linear ? NGPT_CKPT_F32_PACKED : NGPT_CKPT_F32))
            return NULL;
    }
    return (uintptr_t)base % 64 == 0 ? (const float *)(const void *)base : NULL;
}

/* The parameters: in place in the file (params_in_place), or float32
 * tensors copied from it (an f32 model's Linears packed as they are
 * copied, or copied as they are when the file holds them packed);
 * quantized Linears pointed at in place. */
static ngpt_status lay_out_weights(ngpt_model *m)
{
    ngpt_status st = ngpt_cpu_check();     /* packing runs a kernel */
    if (st) return st;
    ngpt_layout lay;
    ngpt_layout_compute(&m->cfg, &lay);     /* checked by config_decode */
    if ((m->weights = params_in_place(m, &lay))) return NGPT_OK;
    size_t bytes;
    if (!ngpt_mul_ok(lay.total, sizeof(float), &bytes) || bytes > SIZE_MAX - 64)
        return ngpt_fail(NGPT_ERR_OVERFLOW, "the parameters of %s overflow size_t", m->r.src);
    m->params = aligned_alloc(64, align64(bytes ? bytes : 1));
    const int n_linear = 1 + NGPT_LINEAR_PER_LAYER * m->cfg.n_layers;
    if (m->cfg.weights != NGPT_WEIGHTS_F32)
        m->q8_linear = calloc((size_t)n_linear, sizeof *m->q8_linear);
    if (!m->params || (m->cfg.weights != NGPT_WEIGHTS_F32 && !m->q8_linear)) {
        free(m->params), free(m->q8_linear);
        m->params = NULL, m->q8_linear = NULL;      /* the next context tries again */
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate the %zu bytes of the "
                         "parameters of %s", bytes, m->r.src);
    }
    const int32_t n = ngpt_layout_tensor_count(&m->cfg);
    for (int32_t i = 0; i < n; i++) {
        char name[NGPT_NAME_MAX];
        ngpt_tensor_info t;
        ngpt_layout_tensor(&m->cfg, &lay, i, name, &t);
        /* (shapes and dtypes checked at open: check_tensor_set) */
        size_t size;
        const uint32_t at = (uint32_t)ngpt_ckpt_find_tensor(&m->r, name);
        const unsigned char *data = ngpt_ckpt_tensor_data(&m->r, at, &size);
        if (ngpt_ckpt_tensor_dtype(&m->r, at) == NGPT_CKPT_F32_PACKED) {
            memcpy(m->params + t.offset, data, size);   /* packed already */
        } else if (t.dtype == NGPT_DTYPE_F32 && m->cfg.weights == NGPT_WEIGHTS_F32) {
            /* 64-byte aligned in the mapping: packed straight from the file */
            ngpt_weights_copy_packed(&ngpt_kernels_active, &m->cfg, &lay, m->params, t.offset,
                                     (const float *)(const void *)data, t.count);
        } else if (t.dtype == NGPT_DTYPE_F32) {
            memcpy(m->params + t.offset, data, size);
        } else {
            for (int l = 0; l < n_linear; l++)
                if (ngpt_linear_q8_span(&m->cfg, l, &size) == t.offset)
                    m->q8_linear[l] = (const int8_t *)data;
        }
    }
    m->weights = m->params;
    return NGPT_OK;
}

size_t ngpt_model_copied_bytes(const ngpt_model *m)
{
    ngpt_layout lay;
    ngpt_layout_compute(&m->cfg, &lay);
    return m->params ? lay.total * sizeof(float) : 0;
}

ngpt_status ngpt_model_open_internal(ngpt_model **out, const char *path, const void *data,
                                     size_t size, bool weights)
{
    *out = NULL;
    ngpt_model *m = calloc(1, sizeof *m);
    if (!m) return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate a model");
    atomic_init(&m->contexts, 0);
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot create a model's lock");
    }
    m->for_contexts = weights;
    ngpt_status st = NGPT_OK;
    if (path && !(m->path = strdup(path)))
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate a model");
    if (!st && !path && weights && (uintptr_t)data % 64 != 0 && size > 0) {
        /* the quantized weights are read in place: 64-byte aligned, as mapped */
        if (!(m->copy = aligned_alloc(64, align64(size))))
            st = ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate %zu bytes to align the "
                           "checkpoint in memory", size);
        else data = memcpy(m->copy, data, size);
    }
    if (!st) st = ngpt_ckpt_open_model(&m->r, m->path, data, size, &m->cfg);
    const int64_t at = st ? -1 : ngpt_ckpt_find_tensor(&m->r, NGPT_CKPT_TOKENIZER);
    if (at >= 0) {
        char src[600];
        snprintf(src, sizeof src, "the tokenizer in %s", m->r.src);
        size_t n;
        const unsigned char *p = ngpt_ckpt_tensor_data(&m->r, (uint32_t)at, &n);
        st = ngpt_tok_parse(&m->tok, p, n, src);
    }
    if (!st && weights) st = ngpt_cpu_check();     /* what its contexts will need */
    if (st) {
        ngpt_model_destroy(m);
        return st;
    }
    *out = m;
    return NGPT_OK;
}

void ngpt_model_destroy(ngpt_model *m)
{
    if (!m) return;
    ngpt_ckpt_close(&m->r);
    ngpt_tokenizer_free(m->tok);
    free(m->params);
    free(m->q8_linear);
    free(m->copy);
    free(m->path);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

const ngpt_ckpt_reader *ngpt_model_reader(const ngpt_model *m) { return &m->r; }
const ngpt_config *ngpt_model_cfg(const ngpt_model *m) { return &m->cfg; }

ngpt_tokenizer *ngpt_model_take_tokenizer(ngpt_model *m)
{
    ngpt_tokenizer *t = m->tok;
    m->tok = NULL;
    return t;
}

/* ------------------------------------------------------ public functions */

ngpt_status ngpt_model_open(ngpt_model **m, const char *path)
{
    NGPT_FPMODE_SCOPE;
    if (!m) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_open: NULL argument");
    *m = NULL;
    if (!path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_open: NULL path");
    return ngpt_prefixed("ngpt_model_open", ngpt_model_open_internal(m, path, NULL, 0, true));
}

ngpt_status ngpt_model_open_mem(ngpt_model **m, const void *data, size_t size)
{
    NGPT_FPMODE_SCOPE;
    if (!m) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_open_mem: NULL argument");
    *m = NULL;
    if (!data) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_open_mem: NULL data");
    return ngpt_prefixed("ngpt_model_open_mem", ngpt_model_open_internal(m, NULL, data, size, true));
}

ngpt_status ngpt_model_close(ngpt_model *m)
{
    NGPT_FPMODE_SCOPE;
    if (!m) return NGPT_OK;
    const int live = atomic_load(&m->contexts);
    if (live > 0)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_model_close: %d context%s still use%s the "
                         "model; free %s first (ngpt_context_free)", live, live == 1 ? "" : "s",
                         live == 1 ? "s" : "", live == 1 ? "it" : "them");
    ngpt_model_destroy(m);
    return NGPT_OK;
}

ngpt_status ngpt_model_config(const ngpt_model *m, ngpt_config *cfg)
{
    NGPT_FPMODE_SCOPE;
    if (!m || !cfg) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_config: NULL argument");
    *cfg = m->cfg;
    return NGPT_OK;
}

ngpt_status ngpt_model_tokenizer(const ngpt_model *m, const ngpt_tokenizer **tok)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_tokenizer: NULL argument");
    *tok = NULL;
    if (!m) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_tokenizer: NULL model");
    *tok = m->tok;
    return NGPT_OK;
}

/* A model's contexts run inference on its weights; training owns its own. */
static ngpt_status model_shape_check(const ngpt_shape *shape)
{
    if (shape->mode == NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "a training context owns its weights: plan it "
                         "with ngpt_context_init and load it with ngpt_checkpoint_load_model");
    return NGPT_OK;
}

ngpt_status ngpt_model_arena_size(const ngpt_model *m, const ngpt_shape *shape, size_t *bytes)
{
    NGPT_FPMODE_SCOPE;
    if (!m || !shape || !bytes)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_arena_size: NULL argument");
    ngpt_status st = model_shape_check(shape);
    if (!st) st = ngpt_context_size(&m->cfg, shape, true, bytes);
    return ngpt_prefixed("ngpt_model_arena_size", st);
}

ngpt_status ngpt_context_init_model(ngpt_context **ctx, const ngpt_model *m,
                                    const ngpt_shape *shape, void *arena, size_t arena_bytes)
{
    NGPT_FPMODE_SCOPE;
    if (ctx) *ctx = NULL;
    if (!ctx || !m || !shape)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_init_model: NULL argument");
    ngpt_status st = model_shape_check(shape);
    if (!st && !m->for_contexts)
        st = ngpt_fail(NGPT_ERR_BAD_ARG, "the model was not opened by ngpt_model_open");
    ngpt_model *mm = (ngpt_model *)m;   /* its count of contexts and its lazy layout move */
    if (!st) {
        pthread_mutex_lock(&mm->lock);
        if (!mm->weights) st = lay_out_weights(mm);
        pthread_mutex_unlock(&mm->lock);
    }
    if (st) return ngpt_prefixed("ngpt_context_init_model", st);
    const ngpt_shared_weights w = {m, (float *)(uintptr_t)m->weights, m->q8_linear, m->tok,
                                   &mm->contexts};
    return ngpt_context_create("ngpt_context_init_model", ctx, &m->cfg, &w, shape, arena,
                               arena_bytes);
}

/* -------------------------------- the per-question checkpoint functions */

/* Wrappers over a model opened without its weights laid out: one open,
 * map and verification per call, as before ngpt_model. */
static ngpt_status read_config(const char *path, const void *data, size_t size, ngpt_config *cfg)
{
    ngpt_model *m;
    ngpt_status st = ngpt_model_open_internal(&m, path, data, size, false);
    if (st) return st;
    *cfg = m->cfg;
    ngpt_model_destroy(m);
    return NGPT_OK;
}

ngpt_status ngpt_checkpoint_config_mem(const void *data, size_t size, ngpt_config *cfg)
{
    NGPT_FPMODE_SCOPE;
    if (!data || !cfg)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_config_mem: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_config_mem", read_config(NULL, data, size, cfg));
}

ngpt_status ngpt_checkpoint_config(const char *path, ngpt_config *cfg)
{
    NGPT_FPMODE_SCOPE;
    if (!path || !cfg) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_config: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_config", read_config(path, NULL, 0, cfg));
}

/* ngpt_checkpoint_load from a file (path) or memory: a model opened for
 * the one load. */
static ngpt_status load_from(ngpt_context *ctx, const char *path, const void *data, size_t size)
{
    if (ctx->model)     /* refused before the file is read */
        return ngpt_ckpt_load_into(ctx, NULL, NULL);
    ngpt_model *m;
    ngpt_status st = ngpt_model_open_internal(&m, path, data, size, false);
    if (st) return st;
    st = ngpt_ckpt_load_into(ctx, &m->r, &m->cfg);
    ngpt_model_destroy(m);
    return st;
}

ngpt_status ngpt_checkpoint_load_model(ngpt_context *ctx, const ngpt_model *m)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !m) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_load_model: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_load_model", ngpt_ckpt_load_into(ctx, &m->r, &m->cfg));
}

ngpt_status ngpt_checkpoint_load_mem(ngpt_context *ctx, const void *data, size_t size)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !data)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_load_mem: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_load_mem", load_from(ctx, NULL, data, size));
}

ngpt_status ngpt_checkpoint_load(ngpt_context *ctx, const char *path)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_load: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_load", load_from(ctx, path, NULL, 0));
}
