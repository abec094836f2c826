/* context_init.c — the one way to make a context (ngpt.h): for a model
 * (an inference context on its shared weights, or a training context that
 * copies them and continues a training checkpoint), for a config (a new
 * model's weights, owned), or for both (a model's weights copied under a
 * config that changes a training setting or quantizes them). */
#include "base/fpmode.h"
#include "io/adapter.h"
#include "io/checkpoint.h"
#include "io/model.h"
#include "io/tmpl_tensor.h"
#include "io/train_ckpt.h"

/* The arguments' one reading: the config the context runs (cfg, or the
 * model's), whether it shares the model's weights, and the shape (the
 * inference default for NULL). */
typedef struct request {
    const ngpt_config *cfg;
    bool shared;
    ngpt_shape shape;
} request;

static ngpt_status read_request(const char *fn, const ngpt_model *model, const ngpt_config *cfg,
                                const ngpt_shape *shape, request *rq)
{
    if (!model && !cfg)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: no model and no config: pass one (or both)", fn);
    rq->cfg = cfg ? cfg : ngpt_model_cfg(model);
    rq->shape = shape ? *shape : ngpt_shape_default(NGPT_MODE_INFER);
    /* an adapter trains on the model's weights as they are: shared, frozen */
    const bool adapter = rq->shape.mode == NGPT_MODE_TRAIN && rq->shape.adapter;
    if (adapter && (!model || cfg))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: shape.adapter trains an adapter on a model's "
                         "weights, frozen: pass the model and no config", fn);
    rq->shared = model && !cfg && (rq->shape.mode == NGPT_MODE_INFER || adapter);
    return NGPT_OK;
}

ngpt_status ngpt_context_arena_size(const ngpt_model *model, const ngpt_config *cfg,
                                    const ngpt_shape *shape, size_t *bytes)
{
    NGPT_FPMODE_SCOPE;
    const char *fn = "ngpt_context_arena_size";
    if (!bytes) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL bytes", fn);
    request rq;
    ngpt_status st = read_request(fn, model, cfg, shape, &rq);
    if (st) return st;
    return ngpt_prefixed(fn, ngpt_context_size(rq.cfg, &rq.shape, rq.shared, bytes));
}

/* A context that owns its weights, given the model's: copied (and
 * quantized for a q8 or q4 cfg), checked against cfg, which may change the
 * dropout and quantize a float32 model, nothing else; a training context
 * also takes a training checkpoint's optimizer state. */
static ngpt_status copy_model(ngpt_context *ctx, const ngpt_model *model)
{
    ngpt_config file = *ngpt_model_cfg(model);
    file.dropout = ctx->cfg.dropout;    /* a training setting, not the weights' */
    const ngpt_ckpt_reader *r = ngpt_model_reader(model);
    ngpt_status st = ngpt_ckpt_load_into(ctx, r, &file);
    if (!st && ctx->shape.mode == NGPT_MODE_TRAIN) st = ngpt_ckpt_train_restore(ctx, r);
    /* a quantized copy keeps its original's identity, which its save records */
    if (!st && ctx->cfg.weights != NGPT_WEIGHTS_F32)
        st = ngpt_model_identity((ngpt_model *)(uintptr_t)model, &ctx->identity);
    return st;
}

ngpt_status ngpt_context_init(ngpt_context **ctx, const ngpt_model *model, const ngpt_config *cfg,
                              const ngpt_shape *shape, void *arena, size_t arena_bytes)
{
    NGPT_FPMODE_SCOPE;
    const char *fn = "ngpt_context_init";
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL ctx", fn);
    *ctx = NULL;
    request rq;
    ngpt_status st = read_request(fn, model, cfg, shape, &rq);
    if (st) return st;
    /* a model's count of contexts and its lazy layout move; nothing else of it */
    ngpt_model *m = (ngpt_model *)(uintptr_t)model;
    ngpt_shared_weights w = {0};
    if (rq.shared && (st = ngpt_model_weights(m, &w))) return ngpt_prefixed(fn, st);
    if (rq.shape.adapter && rq.shape.mode == NGPT_MODE_TRAIN &&
        (st = ngpt_adapter_check_model(rq.shape.adapter, m)))
        return ngpt_prefixed(fn, st);
    ngpt_context *c;
    st = ngpt_context_create(fn, &c, rq.cfg, rq.shared ? &w : NULL, &rq.shape, arena,
                             arena_bytes);
    if (st) return st;
    if (model) c->chat_template = ngpt_ckpt_template_bytes(ngpt_model_reader(model),
                                                           &c->chat_template_size);
    /* a quantized model's identity, which its saves record (the first
     * context finds it: the file's, or one hash of an older file) */
    if (rq.shared && rq.cfg->weights != NGPT_WEIGHTS_F32 && (st = ngpt_model_identity(m, &c->identity))) {
        ngpt_context_free(c);
        return ngpt_prefixed(fn, st);
    }
    if (model && !rq.shared) {
        if ((st = copy_model(c, model))) {
            ngpt_context_free(c);
            return ngpt_prefixed(fn, st);
        }
        c->tokenizer = ngpt_model_tok(model);
        c->model_users = ngpt_model_users(m);
        atomic_fetch_add(c->model_users, 1);
    }
    *ctx = c;
    return NGPT_OK;
}
