/* train_ckpt.c — training checkpoints (docs/FORMAT.md): the model tensors,
 * AdamW moments as optim.m.<name> / optim.v.<name>, and train.* metadata
 * (step, seed, batch shape, optimizer and schedule settings, best eval
 * loss), written by ngpt_context_save_train and read back into a training
 * context made from the file's model (io/context_init.c). The data
 * position needs no state of its own: batch windows are a pure function of
 * (seed, step), so (seed, step) resumes them exactly. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fpmode.h"
#include "io/adapter.h"
#include "io/checkpoint.h"
#include "io/model.h"
#include "io/tmpl_tensor.h"
#include "io/train_ckpt.h"
#include "io/train_meta.h"
#include "runtime/config.h"
#include "runtime/optim_config.h"

typedef struct writer_user {
    const ngpt_context *ctx;
    char name[NGPT_NAME_MAX];
} writer_user;

/* Entries 0..n-1: model; n..2n-1: optim.m.*; 2n..3n-1: optim.v.*; from 3n:
 * the tokenizer and the chat template, those the context has */
static void train_tensor_fn(void *user, size_t i, ngpt_ckpt_tensor *out)
{
    writer_user *u = user;
    const ngpt_context *ctx = u->ctx;
    const size_t n = (size_t)ctx->n_tensors;
    if (i >= 3 * n) {
        ngpt_ckpt_bytes_tensor(ctx, i - 3 * n, out);
        return;
    }
    const float *base = i < n ? ctx->plan.params : i < 2 * n ? ctx->plan.adam_m : ctx->plan.adam_v;
    ngpt_ckpt_model_tensor(ctx, base, (int32_t)(i % n), out);
    if (i >= n) {
        snprintf(u->name, sizeof u->name, "optim.%c.%s", i < 2 * n ? 'm' : 'v', out->name);
        out->name = u->name;
    }
}

ngpt_status ngpt_context_save_train(const ngpt_context *ctx, const char *path, const ngpt_train_state *ts)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !path || !ts)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_save_train: NULL argument");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_save_train: the context was planned "
                         "for inference; save it with ngpt_context_save");
    ngpt_status st = ngpt_train_state_check(ts);
    if (st) return ngpt_prefixed("ngpt_context_save_train", st);
    if (ctx->lora.training)     /* the adapter, its moments and the state */
        return ngpt_prefixed("ngpt_context_save_train", ngpt_adapter_save_training(ctx, path, ts));
    ngpt_ckpt_meta m[NGPT_TRAIN_META];
    ngpt_train_meta(ctx->optim_steps, ts, m);
    writer_user u = {.ctx = ctx};
    unsigned char block[NGPT_CKPT_MODEL_BYTES];
    ngpt_ckpt_config_encode(&ctx->cfg, block);
    return ngpt_prefixed("ngpt_context_save_train",
                         ngpt_ckpt_write(path, block, 3 * (size_t)ctx->n_tensors +
                                         ngpt_ckpt_bytes_count(ctx), train_tensor_fn, &u, m,
                                         NGPT_TRAIN_META));
}

/* The training state of an open model file: read_state's, or for a
 * model-only file (no optim.* tensors) the defaults with has_state false.
 * *has_moments says which; *step is the saved step count (0 without). */
static ngpt_status state_of(const ngpt_ckpt_reader *r, ngpt_train_state *ts, uint64_t *step,
                            bool *has_moments)
{
    *has_moments = ngpt_ckpt_find_tensor(r, "optim.m.tok_emb.weight") >= 0;
    *step = 0;
    *ts = (ngpt_train_state){.opt = ngpt_optim_config_default(), .best_eval_loss = INFINITY,
                             .holdout = 0.1f, .eval_every = 100, .eval_batches = 8};
    return *has_moments ? ngpt_train_meta_read(r, ts, step) : NGPT_OK;
}

ngpt_status ngpt_ckpt_train_restore(ngpt_context *ctx, const ngpt_ckpt_reader *r)
{
    char name[NGPT_NAME_MAX + 8];
    ngpt_train_state s;
    uint64_t step;
    bool has_m;
    ngpt_status st = state_of(r, &s, &step, &has_m);
    if (st || !has_m) return st;
    for (int32_t i = 0; i < ctx->n_tensors; i++)     /* everything checked before a copy */
        for (int mv = 0; mv < 2; mv++) {
            snprintf(name, sizeof name, "optim.%c.%s", mv ? 'v' : 'm', ctx->plan.tensors[i].name);
            if (ngpt_ckpt_find_tensor(r, name) < 0)
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor %s is missing in %s", name,
                                 r->src);
        }
    for (int32_t i = 0; !st && i < ctx->n_tensors; i++) {
        const ngpt_tensor_info *t = &ctx->plan.tensors[i];
        for (int mv = 0; !st && mv < 2; mv++) {
            snprintf(name, sizeof name, "optim.%c.%s", mv ? 'v' : 'm', t->name);
            st = ngpt_ckpt_read_tensor(r, name, t->ndim, t->shape,
                                       (mv ? ctx->plan.adam_v : ctx->plan.adam_m) + t->offset);
        }
    }
    if (!st) ctx->optim_steps = step;
    return st;
}

ngpt_status ngpt_context_optim_reset(ngpt_context *ctx)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_optim_reset: NULL context");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_optim_reset: the context was "
                         "planned for inference, which has no optimizer");
    const size_t n = ctx->lora.training ? ctx->lora.train.total : ctx->lay.total;
    memset(ctx->plan.adam_m, 0, n * sizeof(float));
    memset(ctx->plan.adam_v, 0, n * sizeof(float));
    ctx->optim_steps = 0;
    ctx->run.n_backward = 0;    /* gradients summed so far belong to the old run */
    return NGPT_OK;
}

ngpt_status ngpt_model_train_state(const ngpt_model *m, ngpt_train_state *state)
{
    NGPT_FPMODE_SCOPE;
    if (!m || !state) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_model_train_state: NULL argument");
    ngpt_train_state s;
    uint64_t step;
    bool has_moments;
    ngpt_status st = state_of(ngpt_model_reader(m), &s, &step, &has_moments);
    if (!st) *state = s;
    return ngpt_prefixed("ngpt_model_train_state", st);
}
