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
#include "io/checkpoint.h"
#include "io/model.h"
#include "io/tmpl_tensor.h"
#include "io/train_ckpt.h"
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

enum { N_META = 16, N_META_OPT = 4 };   /* required, then optional entries */

ngpt_status ngpt_context_save_train(const ngpt_context *ctx, const char *path, const ngpt_train_state *ts)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !path || !ts)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_save_train: NULL argument");
    if (ctx->shape.mode != NGPT_MODE_TRAIN)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_save_train: the context was planned "
                         "for inference; save it with ngpt_context_save");
    ngpt_status st = NGPT_RESERVED_CHECK("train_state", ts);
    if (!st) st = ngpt_optim_check(&ts->opt);
    if (st) return ngpt_prefixed("ngpt_context_save_train", st);
    const ngpt_optim_config *o = &ts->opt;
    ngpt_ckpt_meta m[N_META + N_META_OPT] = {
        {"train.step", NGPT_META_U64, {.u = ctx->optim_steps}},
        {"train.seed", NGPT_META_U64, {.u = ts->seed}},
        {"train.batch", NGPT_META_I64, {.i = ts->batch}},
        {"train.seq", NGPT_META_I64, {.i = ts->seq}},
        {"train.lr", NGPT_META_F64, {.f = o->lr}},
        {"train.min_lr", NGPT_META_F64, {.f = o->min_lr}},
        {"train.warmup", NGPT_META_I64, {.i = o->warmup}},
        {"train.total_steps", NGPT_META_I64, {.i = o->total_steps}},
        {"train.beta1", NGPT_META_F64, {.f = o->beta1}},
        {"train.beta2", NGPT_META_F64, {.f = o->beta2}},
        {"train.eps", NGPT_META_F64, {.f = o->eps}},
        {"train.weight_decay", NGPT_META_F64, {.f = o->weight_decay}},
        {"train.decay_all", NGPT_META_U64, {.u = o->decay_all}},
        {"train.clip", NGPT_META_F64, {.f = o->clip}},
        {"train.accum", NGPT_META_I64, {.i = o->accum}},
        {"train.best_eval_loss", NGPT_META_F64, {.f = ts->best_eval_loss}},
        {"train.holdout", NGPT_META_F64, {.f = ts->holdout}},
        {"train.eval_every", NGPT_META_I64, {.i = ts->eval_every}},
        {"train.eval_batches", NGPT_META_I64, {.i = ts->eval_batches}},
        {"train.data_hash", NGPT_META_U64, {.u = ts->data_hash}},
    };
    writer_user u = {.ctx = ctx};
    unsigned char block[NGPT_CKPT_MODEL_BYTES];
    ngpt_ckpt_config_encode(&ctx->cfg, block);
    return ngpt_prefixed("ngpt_context_save_train",
                         ngpt_ckpt_write(path, block, 3 * (size_t)ctx->n_tensors +
                                         ngpt_ckpt_bytes_count(ctx), train_tensor_fn, &u, m,
                                         N_META + N_META_OPT));
}

static bool meta_get(const ngpt_ckpt_reader *r, const char *key, uint32_t type, ngpt_ckpt_meta *m)
{
    return ngpt_ckpt_find_meta(r, key, m) && m->type == type;
}

/* Reads train.* into ts; false (with a message) if any is missing or bad. */
static ngpt_status read_state(const ngpt_ckpt_reader *r, ngpt_train_state *ts, uint64_t *step)
{
    static const struct { const char *key; uint32_t type; } want[N_META] = {
        {"train.step", NGPT_META_U64}, {"train.seed", NGPT_META_U64},
        {"train.batch", NGPT_META_I64}, {"train.seq", NGPT_META_I64},
        {"train.lr", NGPT_META_F64}, {"train.min_lr", NGPT_META_F64},
        {"train.warmup", NGPT_META_I64}, {"train.total_steps", NGPT_META_I64},
        {"train.beta1", NGPT_META_F64}, {"train.beta2", NGPT_META_F64},
        {"train.eps", NGPT_META_F64}, {"train.weight_decay", NGPT_META_F64},
        {"train.decay_all", NGPT_META_U64}, {"train.clip", NGPT_META_F64},
        {"train.accum", NGPT_META_I64}, {"train.best_eval_loss", NGPT_META_F64}};
    ngpt_ckpt_meta v[N_META];
    for (int i = 0; i < N_META; i++)
        if (!meta_get(r, want[i].key, want[i].type, &v[i]))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the training state in %s lacks %s (or it has "
                             "the wrong type)", r->src, want[i].key);
    ngpt_train_state s = {0};
    *step = v[0].value.u;
    s.seed = v[1].value.u;
    s.batch = (int32_t)v[2].value.i;
    s.seq = (int32_t)v[3].value.i;
    s.opt.lr = (float)v[4].value.f;
    s.opt.min_lr = (float)v[5].value.f;
    s.opt.warmup = v[6].value.i;
    s.opt.total_steps = v[7].value.i;
    s.opt.beta1 = (float)v[8].value.f;
    s.opt.beta2 = (float)v[9].value.f;
    s.opt.eps = (float)v[10].value.f;
    s.opt.weight_decay = (float)v[11].value.f;
    s.opt.decay_all = v[12].value.u != 0;
    s.opt.clip = (float)v[13].value.f;
    s.opt.accum = (int32_t)v[14].value.i;
    s.best_eval_loss = (float)v[15].value.f;
    s.holdout = 0.1f, s.eval_every = 100, s.eval_batches = 8;
    ngpt_ckpt_meta e;
    if (meta_get(r, "train.holdout", NGPT_META_F64, &e)) s.holdout = (float)e.value.f;
    if (meta_get(r, "train.eval_every", NGPT_META_I64, &e)) s.eval_every = (int32_t)e.value.i;
    if (meta_get(r, "train.eval_batches", NGPT_META_I64, &e)) s.eval_batches = (int32_t)e.value.i;
    if (meta_get(r, "train.data_hash", NGPT_META_U64, &e)) s.data_hash = e.value.u;
    if (!(s.holdout >= 0.0f && s.holdout < 1.0f) || s.eval_every < 0 || s.eval_batches < 1)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "train.holdout, train.eval_every or "
                         "train.eval_batches in %s is out of range", r->src);
    s.has_state = true;
    if (s.batch != v[2].value.i || s.seq != v[3].value.i || s.batch < 1 || s.seq < 1)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "train.batch or train.seq in %s is out of range",
                         r->src);
    if (ngpt_optim_check(&s.opt)) {
        char why[400];
        snprintf(why, sizeof why, "%s", ngpt_last_error());
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the optimizer settings in %s are not valid: %s",
                         r->src, why);
    }
    *ts = s;
    return NGPT_OK;
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
    return *has_moments ? read_state(r, ts, step) : NGPT_OK;
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
    for (int32_t i = 0; i < ctx->n_tensors; i++) {
        const ngpt_tensor_info *t = &ctx->plan.tensors[i];
        memset(ctx->plan.adam_m + t->offset, 0, t->count * sizeof(float));
        memset(ctx->plan.adam_v + t->offset, 0, t->count * sizeof(float));
    }
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
