/* adapter_file.c — LoRA adapters as objects and files (ngpt.h, "LoRA
 * adapters"; docs/FORMAT.md, "Adapter files"): allocated, written, read
 * back and checked, closed. An adapter file is a checkpoint container: the
 * model block is its model's config, lora.* metadata its LoRA config and
 * its model's identity, and its tensors each adapted layer's A and B by
 * module (blocks.<l>.<module>.lora_A (r, in), .lora_B (rows, r), float32),
 * with optim.m.* / optim.v.* twins and train.* metadata in a training
 * file. io/adapter.c makes them for a model and applies them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "io/adapter.h"
#include "io/checkpoint.h"
#include "io/train_meta.h"
#include "kernels.h"
#include "runtime/optim_config.h"

/* A new adapter of cfg and lc (layout ll) with room for its floats and,
 * with moments, AdamW's two; every float zero. NULL: out of memory. */
ngpt_adapter *ngpt_adapter_alloc(const ngpt_config *cfg, const ngpt_lora_config *lc,
                                 const ngpt_lora_layout *ll, bool moments)
{
    ngpt_adapter *ad = calloc(1, sizeof *ad);
    const size_t sets = moments ? 3 : 1, n = ll->total ? ll->total : 1;
    if (!ad || n > SIZE_MAX / sizeof(float) / sets - 16) {
        free(ad);
        return NULL;
    }
    const size_t bytes = (sets * n * sizeof(float) + 63) & ~(size_t)63;
    float *w = aligned_alloc(64, bytes);
    if (!w) {
        free(ad);
        return NULL;
    }
    memset(w, 0, bytes);
    ad->lc = *lc;
    ad->ll = *ll;
    ad->cfg = *cfg;
    ad->w = w;
    ad->owned = w;
    if (moments) ad->adam_m = w + n, ad->adam_v = w + 2 * n;
    atomic_init(&ad->users, 0);
    return ad;
}

ngpt_status ngpt_adapter_pack(ngpt_adapter *ad)
{
    const ngpt_lora_layout *ll = &ad->ll;
    const size_t bytes = (ll->packed_total * sizeof(float) + 63) & ~(size_t)63;
    ad->packed = aligned_alloc(64, bytes ? bytes : 64);
    if (!ad->packed) return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate the adapter's "
                                      "packed copy (%zu bytes)", bytes);
    const int r = ll->rank;
    for (int l = 0, on = 0; l < ll->n_layers; l++) {
        if (!ngpt_lora_layer_on(ll, l)) continue;
        const float *w = ad->w + ngpt_lora_layer_offset(ll, l);
        float *p = ad->packed + (size_t)on++ * ll->packed_layer;
        for (int i = 0; i < ll->n_modules; i++) {
            const ngpt_lora_module *m = &ll->mod[i];
            ngpt_kernels_active.pack_w(p + m->pa, w + m->a, r, m->in, m->in);
            ngpt_kernels_active.pack_w(p + m->pb, w + m->b, m->rows, r, r);
        }
    }
    return NGPT_OK;
}

static void adapter_free(ngpt_adapter *ad)
{
    if (!ad) return;
    free(ad->packed);
    if (ad->file) ngpt_ckpt_close(ad->file);
    free(ad->file);
    free(ad->owned);
    free(ad);
}

static size_t adapted_layers(const ngpt_lora_layout *ll)
{
    return ngpt_lora_layers_below(ll, ll->n_layers);
}

/* Tensor i of an adapter file's float sets (0: the adapter, 1: optim.m, 2:
 * optim.v), each adapted layer's modules' A then B: its name, shape and
 * offset in the set's floats. */
typedef struct adapter_tensor {
    char name[NGPT_NAME_MAX];
    int32_t shape[2];
    size_t offset, count;
    int set;
} adapter_tensor;

static void tensor_at(const ngpt_lora_layout *ll, size_t i, adapter_tensor *t)
{
    const size_t per_set = adapted_layers(ll) * (size_t)ll->n_modules * 2;
    const size_t j = i % per_set, pair = j / 2;
    const int l = ngpt_lora_adapted_layer(ll, pair / (size_t)ll->n_modules);
    const ngpt_lora_module *m = &ll->mod[pair % (size_t)ll->n_modules];
    const bool b = j % 2;
    t->set = (int)(i / per_set);
    snprintf(t->name, sizeof t->name, "%sblocks.%d.%s.lora_%c",
             t->set == 0 ? "" : t->set == 1 ? "optim.m." : "optim.v.", l, m->name, b ? 'B' : 'A');
    t->shape[0] = b ? m->rows : ll->rank;
    t->shape[1] = b ? ll->rank : m->in;
    t->offset = ngpt_lora_layer_offset(ll, l) + (b ? m->b : m->a);
    t->count = (size_t)t->shape[0] * (size_t)t->shape[1];
}

/* ------------------------------------------------------------ writing */

typedef struct writer {
    const ngpt_lora_layout *ll;
    const float *set[3];
    adapter_tensor t;
} writer;

static void writer_tensor(void *user, size_t i, ngpt_ckpt_tensor *out)
{
    writer *w = user;
    tensor_at(w->ll, i, &w->t);
    *out = (ngpt_ckpt_tensor){.name = w->t.name, .ndim = 2, .dtype = NGPT_CKPT_F32,
                              .data = w->set[w->t.set] + w->t.offset};
    out->shape[0] = w->t.shape[0];
    out->shape[1] = w->t.shape[1];
}

enum { N_LORA_META = 7 };

/* Writes an adapter file: cfg's model block, lc, the model's identity,
 * the floats w, and with ts (not NULL) the moments m, v and the state. */
static ngpt_status write_file(const char *path, const ngpt_config *cfg, const ngpt_lora_config *lc,
                              const ngpt_lora_layout *ll, uint64_t base, const float *w,
                              const float *m, const float *v, uint64_t steps,
                              const ngpt_train_state *ts)
{
    ngpt_ckpt_meta meta[N_LORA_META + NGPT_TRAIN_META] = {
        {NGPT_META_LORA_RANK, NGPT_META_U64, {.u = (uint64_t)lc->rank}},
        {"lora.alpha", NGPT_META_F64, {.f = lc->alpha}},
        {"lora.rslora", NGPT_META_U64, {.u = lc->rslora}},
        {"lora.targets", NGPT_META_U64, {.u = lc->targets}},
        {"lora.layers", NGPT_META_U64, {.u = lc->layers}},
        {"lora.dropout", NGPT_META_F64, {.f = lc->dropout}},
        {"lora.base", NGPT_META_U64, {.u = base}},
    };
    if (ts) ngpt_train_meta(steps, ts, meta + N_LORA_META);
    writer wr = {.ll = ll, .set = {w, m, v}};
    unsigned char block[NGPT_CKPT_MODEL_BYTES];
    ngpt_ckpt_config_encode(cfg, block);
    const size_t per_set = adapted_layers(ll) * (size_t)ll->n_modules * 2;
    return ngpt_ckpt_write(path, block, per_set * (ts ? 3 : 1), writer_tensor, &wr, meta,
                           N_LORA_META + (ts ? NGPT_TRAIN_META : 0));
}

ngpt_status ngpt_adapter_save(const ngpt_adapter *ad, const char *path)
{
    NGPT_FPMODE_SCOPE;
    if (!ad || !path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_adapter_save: NULL argument");
    return ngpt_prefixed("ngpt_adapter_save", write_file(path, &ad->cfg, &ad->lc, &ad->ll,
                                                         ad->base, ad->w, NULL, NULL, 0, NULL));
}

ngpt_status ngpt_adapter_save_training(const ngpt_context *ctx, const char *path,
                                       const ngpt_train_state *ts)
{
    const ngpt_adapter *from = ctx->shape.adapter;
    return write_file(path, &from->cfg, &from->lc, &ctx->lora.train, from->base,
                      ctx->plan.lora.w, ctx->plan.adam_m, ctx->plan.adam_v, ctx->optim_steps, ts);
}

/* ------------------------------------------------------------ reading */

static ngpt_status meta_of(const ngpt_ckpt_reader *r, const char *key, uint32_t type,
                           ngpt_ckpt_meta *e)
{
    if (ngpt_ckpt_find_meta(r, key, e) && e->type == type) return NGPT_OK;
    return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the adapter %s lacks %s (or it has the wrong type)",
                     r->src, key);
}

/* The LoRA config and the model's identity in r's metadata. */
static ngpt_status read_lora(const ngpt_ckpt_reader *r, ngpt_lora_config *lc, uint64_t *base)
{
    ngpt_ckpt_meta e[N_LORA_META];
    static const struct { const char *key; uint32_t type; } want[N_LORA_META] = {
        {NGPT_META_LORA_RANK, NGPT_META_U64}, {"lora.alpha", NGPT_META_F64},
        {"lora.rslora", NGPT_META_U64},       {"lora.targets", NGPT_META_U64},
        {"lora.layers", NGPT_META_U64},       {"lora.dropout", NGPT_META_F64},
        {"lora.base", NGPT_META_U64}};
    for (int i = 0; i < N_LORA_META; i++) {
        ngpt_status st = meta_of(r, want[i].key, want[i].type, &e[i]);
        if (st) return st;
    }
    *lc = (ngpt_lora_config){.alpha = (float)e[1].value.f, .rslora = e[2].value.u != 0,
                             .layers = e[4].value.u, .dropout = (float)e[5].value.f};
    const bool fits = e[0].value.u <= NGPT_LORA_RANK_MAX && e[2].value.u <= 1 &&
                      e[3].value.u <= UINT32_MAX && (double)lc->alpha == e[1].value.f &&
                      (double)lc->dropout == e[5].value.f;
    lc->rank = (int32_t)e[0].value.u;
    lc->targets = (uint32_t)e[3].value.u;
    *base = e[6].value.u;
    ngpt_status st = fits ? ngpt_lora_check(lc) : NGPT_ERR_BAD_FORMAT;
    if (st) {
        char why[300] = "a value out of range";
        if (fits) snprintf(why, sizeof why, "%s", ngpt_last_error());
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the LoRA config in %s is not valid: %s", r->src,
                         why);
    }
    return NGPT_OK;
}

/* Every tensor of r is one of the adapter's (sets of them), float32 and
 * shaped as the layout says, and every one is there. */
static ngpt_status check_tensors(const ngpt_ckpt_reader *r, const ngpt_lora_layout *ll, int sets)
{
    const size_t n = adapted_layers(ll) * (size_t)ll->n_modules * 2 * (size_t)sets;
    adapter_tensor t;
    for (size_t i = 0; i < n; i++) {
        tensor_at(ll, i, &t);
        const int64_t at = ngpt_ckpt_find_tensor(r, t.name);
        if (at < 0)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s is missing in the adapter %s",
                             t.name, r->src);
        if (!ngpt_ckpt_tensor_shape_is(r, (uint32_t)at, 2, t.shape) ||
            ngpt_ckpt_tensor_dtype(r, (uint32_t)at) != NGPT_CKPT_F32)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s of the adapter %s is not float32 "
                             "of shape (%d,%d), as its LoRA config and model make it", t.name,
                             r->src, (int)t.shape[0], (int)t.shape[1]);
    }
    if (r->n_tensors != n) {    /* each expected one found once: the others are unknown */
        for (uint32_t i = 0; i < r->n_tensors; i++) {
            bool known = false;
            for (size_t j = 0; j < n && !known; j++) {
                tensor_at(ll, j, &t);
                known = !strcmp(t.name, ngpt_ckpt_tensor_name(r, i));
            }
            if (!known)
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the adapter %s holds unknown tensor %s",
                                 r->src, ngpt_ckpt_tensor_name(r, i));
        }
    }
    return NGPT_OK;
}

/* Whether each float set's n tensors lie back to back in r's data as the
 * layout places them (every tensor a multiple of 16 floats, so the 64-byte
 * padding between them is empty: real models' shapes), 64-byte aligned:
 * then set[s] is where set s starts. */
static bool floats_in_place(const ngpt_ckpt_reader *r, const ngpt_lora_layout *ll, size_t n,
                            const float *set[3])
{
    adapter_tensor t;
    for (size_t i = 0; i < n; i++) {
        tensor_at(ll, i, &t);
        size_t bytes;
        const unsigned char *data =
            ngpt_ckpt_tensor_data(r, (uint32_t)ngpt_ckpt_find_tensor(r, t.name), &bytes);
        const unsigned char *start = data - t.offset * sizeof(float);
        if (!set[t.set]) set[t.set] = (const float *)(const void *)start;
        if ((const unsigned char *)set[t.set] != start || (uintptr_t)start % 64) return false;
    }
    return true;
}

/* An adapter from r, a verified container; file (not NULL: r itself,
 * allocated) lets its floats stay in place, the adapter then owning it. */
static ngpt_status adapter_read(ngpt_adapter **out, const ngpt_ckpt_reader *r,
                                ngpt_ckpt_reader *file)
{
    ngpt_ckpt_meta e;
    if (!ngpt_ckpt_find_meta(r, NGPT_META_LORA_RANK, &e))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a LoRA adapter (it has no %s): a "
                         "model? open it with ngpt_model_open", r->src, NGPT_META_LORA_RANK);
    ngpt_config cfg;
    ngpt_lora_config lc;
    ngpt_lora_layout ll;
    uint64_t base;
    ngpt_status st = ngpt_ckpt_config_decode(r, &cfg);
    if (!st) st = read_lora(r, &lc, &base);
    if (!st && (st = ngpt_lora_layout_compute(&cfg, &lc, &ll))) {
        char why[300];
        snprintf(why, sizeof why, "%s", ngpt_last_error());
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "the LoRA config in %s does not fit its model: %s",
                       r->src, why);
    }
    if (st) return st;
    char first[NGPT_NAME_MAX + 16];
    adapter_tensor t;
    tensor_at(&ll, 0, &t);
    snprintf(first, sizeof first, "optim.m.%s", t.name);
    const bool moments = ll.total > 0 && ngpt_ckpt_find_tensor(r, first) >= 0;
    ngpt_train_state ts = {0};
    uint64_t steps = 0;
    if (moments) st = ngpt_train_meta_read(r, &ts, &steps);
    if (!st) st = check_tensors(r, &ll, moments ? 3 : 1);
    if (st) return st;
    const size_t n = adapted_layers(&ll) * (size_t)ll.n_modules * 2 * (moments ? 3 : 1);
    const float *in_place[3] = {NULL, NULL, NULL};
    const bool mapped = file && floats_in_place(r, &ll, n, in_place);
    ngpt_adapter *ad = mapped ? calloc(1, sizeof *ad) : ngpt_adapter_alloc(&cfg, &lc, &ll, moments);
    if (!ad) return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate the adapter of %s", r->src);
    ad->base = base;
    ad->steps = steps;
    ad->state = ts;
    if (mapped) {   /* the file's floats, used where they are: it stays open */
        ad->lc = lc, ad->ll = ll, ad->cfg = cfg;
        ad->w = in_place[0], ad->adam_m = in_place[1], ad->adam_v = in_place[2];
        atomic_init(&ad->users, 0);
        ad->file = file;
        if ((st = ngpt_adapter_pack(ad))) {
            ad->file = NULL;    /* the caller closes it */
            adapter_free(ad);
            return st;
        }
        *out = ad;
        return NGPT_OK;
    }
    float *sets[3] = {(float *)(uintptr_t)ad->w, (float *)(uintptr_t)ad->adam_m,
                      (float *)(uintptr_t)ad->adam_v};
    for (size_t i = 0; !st && i < n; i++) {
        tensor_at(&ll, i, &t);
        st = ngpt_ckpt_read_tensor(r, t.name, 2, t.shape, sets[t.set] + t.offset);
    }
    if (!st) st = ngpt_adapter_pack(ad);
    if (st) {
        adapter_free(ad);
        return st;
    }
    *out = ad;
    return NGPT_OK;
}

static ngpt_status adapter_open(const char *fn, ngpt_adapter **out, const char *path,
                                const void *data, size_t size)
{
    if (!out) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL adapter", fn);
    *out = NULL;
    if (!path && !data) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL path or data", fn);
    ngpt_ckpt_reader *r = calloc(1, sizeof *r);
    if (!r) return ngpt_fail(NGPT_ERR_NO_MEMORY, "%s: cannot allocate a reader", fn);
    ngpt_status st = path ? ngpt_ckpt_open_file(r, path) : ngpt_ckpt_open_mem(r, data, size);
    if (st) {
        free(r);
        return ngpt_prefixed(fn, st);
    }
    /* a file's mapping can stay; the caller's memory is copied from */
    st = adapter_read(out, r, path ? r : NULL);
    if (st || (*out)->file != r) {
        ngpt_ckpt_close(r);
        free(r);
    }
    return ngpt_prefixed(fn, st);
}

ngpt_status ngpt_adapter_open(ngpt_adapter **ad, const char *path)
{
    NGPT_FPMODE_SCOPE;
    return adapter_open("ngpt_adapter_open", ad, path, NULL, 0);
}

ngpt_status ngpt_adapter_open_mem(ngpt_adapter **ad, const void *data, size_t size)
{
    NGPT_FPMODE_SCOPE;
    if (!data && ad) *ad = NULL;
    if (!data) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_adapter_open_mem: NULL data");
    return adapter_open("ngpt_adapter_open_mem", ad, NULL, data, size);
}

ngpt_status ngpt_adapter_close(ngpt_adapter *ad)
{
    NGPT_FPMODE_SCOPE;
    if (!ad) return NGPT_OK;
    const int live = atomic_load(&ad->users);
    if (live > 0)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_adapter_close: %d context%s still use%s the "
                         "adapter; free %s (or set other adapters) first", live,
                         live == 1 ? "" : "s", live == 1 ? "s" : "", live == 1 ? "it" : "them");
    adapter_free(ad);
    return NGPT_OK;
}

ngpt_status ngpt_adapter_lora_config(const ngpt_adapter *ad, ngpt_lora_config *lc)
{
    NGPT_FPMODE_SCOPE;
    if (!ad || !lc) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_adapter_lora_config: NULL argument");
    *lc = ad->lc;
    return NGPT_OK;
}

ngpt_status ngpt_adapter_describe(const ngpt_adapter *ad, ngpt_adapter_info *info)
{
    NGPT_FPMODE_SCOPE;
    if (!ad || !info) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_adapter_describe: NULL argument");
    *info = (ngpt_adapter_info){.config = ad->cfg, .base = ad->base, .floats = ad->ll.total,
                                .steps = ad->steps, .scale = ad->ll.scale,
                                .layers = (int32_t)adapted_layers(&ad->ll)};
    for (int32_t i = 0; i < ad->ll.n_modules; i++) info->modules |= ad->ll.mod[i].target;
    return NGPT_OK;
}

ngpt_status ngpt_adapter_train_state(const ngpt_adapter *ad, ngpt_train_state *state)
{
    NGPT_FPMODE_SCOPE;
    if (!ad || !state)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_adapter_train_state: NULL argument");
    if (ad->adam_m) {
        *state = ad->state;
        return NGPT_OK;
    }
    *state = (ngpt_train_state){.opt = ngpt_optim_config_default(), .best_eval_loss = INFINITY,
                                .holdout = 0.1f, .eval_every = 100, .eval_batches = 8};
    return NGPT_OK;
}

