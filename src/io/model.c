/* model.c — ngpt_model (io/model.h): a model file opened, verified and
 * mapped once; its config, tokenizer, chat template and training state
 * answered from memory; its weights laid out once for every inference context: used in
 * place in the mapped file where it holds them as contexts read them (the
 * quantized Linears; a float32 model's parameters when the file stores
 * them back to back, Linears packed: params_in_place), else the float32
 * parameters copied once into a 64-byte-aligned block with the Linears
 * packed (what each context used to do in its own arena), when the first
 * inference context is made. Immutable after that but for the count of its
 * contexts (an atomic). io/context_init.c makes contexts of it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "base/fpmode.h"
#include "base/huge_pages.h"
#include "io/checkpoint.h"
#include "io/model.h"
#include "io/tmpl_tensor.h"
#include "io/tok_tensor.h"
#include "runtime/config.h"
#include "runtime/weights.h"
#include "template/template.h"
#include "tokenizer/tokenizer.h"

struct ngpt_model {
    ngpt_ckpt_reader r;
    char *path;                 /* r.src's copy, or NULL */
    void *copy;                 /* an unaligned buffer copied to 64-byte alignment, or NULL */
    ngpt_config cfg;
    ngpt_tokenizer *tok;        /* NULL: the file carries none */
    /* laid out by the first context (lock held), so that a model used only
     * for its config, tokenizer or a load into a context of its own
     * (ngpt quantize) copies nothing; unchanged after */
    pthread_mutex_t lock;
    float *params;              /* the parameters copied (owned), or NULL */
    const float *weights;       /* the parameters contexts read: params, or in the file; NULL
                                 * until laid out (weights) */
    const int8_t **q8_linear;   /* (1 + 4L) the quantized Linears in r, or NULL */
    atomic_int contexts;        /* live contexts made from the model */
    /* its identity (ngpt_model_identity), found on first use (lock held) */
    bool identity_known;
    uint64_t identity;
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
    if (m->params) ngpt_huge_pages_advise(m->params, bytes);    /* before the copy touches it */
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

static void model_destroy(ngpt_model *m);

/* Opens path (or data/size when path is NULL): every check a load makes,
 * the tokenizer built; bare messages. */
static ngpt_status model_open(ngpt_model **out, const char *path, const void *data, size_t size)
{
    *out = NULL;
    ngpt_model *m = calloc(1, sizeof *m);
    if (!m) return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate a model");
    atomic_init(&m->contexts, 0);
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot create a model's lock");
    }
    ngpt_status st = NGPT_OK;
    if (path && !(m->path = strdup(path)))
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate a model");
    if (!st && !path && (uintptr_t)data % 64 != 0 && size > 0) {
        /* the quantized weights are read in place: 64-byte aligned, as mapped */
        if (!(m->copy = aligned_alloc(64, align64(size))))
            st = ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate %zu bytes to align the "
                           "checkpoint in memory", size);
        else
            ngpt_huge_pages_advise(m->copy, size), data = memcpy(m->copy, data, size);
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
    if (!st) st = ngpt_cpu_check();     /* what its contexts will need */
    if (st) {
        model_destroy(m);
        return st;
    }
    *out = m;
    return NGPT_OK;
}

static void model_destroy(ngpt_model *m)
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


/* ------------------------------------------------------ public functions */

ngpt_status ngpt_model_open(ngpt_model **m, const char *path)
{
    NGPT_FPMODE_SCOPE;
    if (!m) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_open: NULL argument");
    *m = NULL;
    if (!path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_open: NULL path");
    return ngpt_prefixed("ngpt_model_open", model_open(m, path, NULL, 0));
}

ngpt_status ngpt_model_open_mem(ngpt_model **m, const void *data, size_t size)
{
    NGPT_FPMODE_SCOPE;
    if (!m) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_open_mem: NULL argument");
    *m = NULL;
    if (!data) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_open_mem: NULL data");
    return ngpt_prefixed("ngpt_model_open_mem", model_open(m, NULL, data, size));
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
    model_destroy(m);
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

ngpt_status ngpt_model_template(const ngpt_model *model, ngpt_template **t)
{
    NGPT_FPMODE_SCOPE;
    if (!t) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_template: NULL argument");
    *t = NULL;
    if (!model) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_template: NULL model");
    const ngpt_ckpt_reader *r = &model->r;
    size_t size;
    const void *data = ngpt_ckpt_template_bytes(r, &size);
    if (!data) return NGPT_OK;
    char src[600];
    snprintf(src, sizeof src, "the chat template in %s", r->src);
    return ngpt_prefixed("ngpt_model_template", ngpt_tmpl_from_config(t, data, size, src));
}

ngpt_status ngpt_model_weights(ngpt_model *m, ngpt_shared_weights *w)
{
    pthread_mutex_lock(&m->lock);
    ngpt_status st = m->weights ? NGPT_OK : lay_out_weights(m);
    pthread_mutex_unlock(&m->lock);
    if (!st) *w = (ngpt_shared_weights){m, (float *)(uintptr_t)m->weights, m->q8_linear, m->tok,
                                        &m->contexts};
    return st;
}

ngpt_status ngpt_model_identity(ngpt_model *m, uint64_t *id)
{
    pthread_mutex_lock(&m->lock);
    ngpt_status st = NGPT_OK;
    if (!m->identity_known) {
        ngpt_ckpt_meta e;
        if (ngpt_ckpt_find_meta(&m->r, NGPT_META_IDENTITY, &e) && e.type == NGPT_META_U64) {
            m->identity = e.value.u;
        } else if (!(st = m->weights ? NGPT_OK : lay_out_weights(m))) {
            m->identity = ngpt_weights_checksum_of(&m->cfg, m->weights,
                                                   m->cfg.weights == NGPT_WEIGHTS_F32, NULL,
                                                   m->q8_linear);
        }
        m->identity_known = !st;
    }
    const uint64_t v = m->identity;
    pthread_mutex_unlock(&m->lock);
    if (!st) *id = v;
    return st;
}

atomic_int *ngpt_model_users(ngpt_model *m) { return &m->contexts; }
const ngpt_tokenizer *ngpt_model_tok(const ngpt_model *m) { return m->tok; }
