/* train_meta.c — a training file's train.* metadata (train_meta.h):
 * written by the saves of a model's and of an adapter's training context,
 * read back by both. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/train_meta.h"
#include "runtime/optim_config.h"

enum { N_META = 16, N_META_OPT = 4 };   /* required, then optional entries */
_Static_assert(N_META + N_META_OPT == NGPT_TRAIN_META, "train.* entries");

void ngpt_train_meta(uint64_t steps, const ngpt_train_state *ts, ngpt_ckpt_meta m[NGPT_TRAIN_META])
{
    const ngpt_optim_config *o = &ts->opt;
    const ngpt_ckpt_meta all[NGPT_TRAIN_META] = {
        {"train.step", NGPT_META_U64, {.u = steps}},
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
    memcpy(m, all, sizeof all);
}

ngpt_status ngpt_train_state_check(const ngpt_train_state *ts)
{
    ngpt_status st = NGPT_RESERVED_CHECK("train_state", ts);
    return st ? st : ngpt_optim_check(&ts->opt);
}

static bool meta_get(const ngpt_ckpt_reader *r, const char *key, uint32_t type, ngpt_ckpt_meta *m)
{
    return ngpt_ckpt_find_meta(r, key, m) && m->type == type;
}

ngpt_status ngpt_train_meta_read(const ngpt_ckpt_reader *r, ngpt_train_state *ts, uint64_t *step)
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

