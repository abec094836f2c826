/* test_resume.c — training 20 steps equals training 10, saving, opening the
 * checkpoint as a model and training 10 more in a training context made
 * from it, bit for bit (parameters and AdamW moments), for the default
 * model and a Llama-like one; model-only files, a fresh optimizer
 * (ngpt_context_optim_reset), and errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>  /* getpid: unique file names when suites run side by side */

#include "test.h"

enum { B = 2, T = 16 };

static const char text[] =
    "Call me Ishmael. Some years ago - never mind how long precisely - having little or no "
    "money in my purse, and nothing particular to interest me on shore, I thought I would "
    "sail about a little and see the watery part of the world. It is a way I have of driving "
    "off the spleen and regulating the circulation.";

static ngpt_context *new_ctx(ngpt_mode mode, int32_t d_model)
{
    ngpt_config c = ngpt_config_default();
    c.context_len = T, c.d_model = d_model, c.n_layers = 2, c.n_heads = 4, c.d_ff = 64;
    ngpt_shape sh = ngpt_shape_default(mode);
    sh.batch = B, sh.seq = T;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &sh, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, 42));
    return ctx;
}

/* A Llama-like model (RMSNorm, SwiGLU, no biases, GQA 3:1, head_dim != C/H,
 * RoPE on halves, untied), for training. */
static ngpt_context *new_llama(void)
{
    ngpt_config c = ngpt_config_default();
    c.context_len = T, c.d_model = 32, c.n_layers = 2, c.d_ff = 64;
    CHECK(test_config_apply(&c, "H=6 kv_heads=2 head_dim=10 norm_type=rms norm_eps=1e-6 "
                                "mlp=swiglu mlp_bias=0 rope_pairs=halves tie_lm_head=0"),
          "%s", ngpt_last_error());
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = B, sh.seq = T;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &sh, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, 42));
    return ctx;
}

/* A training context made from the checkpoint at path (or the size bytes at
 * data), *m its model (close it after the context), *st its training state. */
static ngpt_context *resume(const char *path, const void *data, size_t size, ngpt_model **m,
                            ngpt_train_state *st)
{
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = B, sh.seq = T;
    ngpt_context *ctx = NULL;
    CHECK_OK(path ? ngpt_model_open(m, path) : ngpt_model_open_mem(m, data, size));
    if (*m && st) CHECK_OK(ngpt_model_train_state(*m, st));
    if (*m) CHECK_OK(ngpt_context_init(&ctx, *m, NULL, &sh, NULL, 0));
    return ctx;
}

/* XXH3 of params, and of the whole training state via a save of it. */
static uint64_t run(ngpt_context *ctx, const ngpt_data *d, const ngpt_optim_config *o, int steps)
{
    float loss;
    for (int s = 0; s < steps; s++) CHECK_OK(ngpt_context_train_step(ctx, o, d, 42, B, T, &loss, NULL, NULL));
    uint64_t h = 0;
    ngpt_context_params_checksum(ctx, &h);
    return h;
}

static uint64_t file_hash(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return ngpt_checksum_bytes(buf, n);
}

/* A whole file in a malloc'd buffer, or NULL. */
static void *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = n > 0 ? malloc((size_t)n) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* Two training states field by field (a struct with padding has no memcmp). */
static bool same_state(const ngpt_train_state *a, const ngpt_train_state *b)
{
    const ngpt_optim_config *x = &a->opt, *y = &b->opt;
    return a->seed == b->seed && a->batch == b->batch && a->seq == b->seq &&
           x->lr == y->lr && x->min_lr == y->min_lr && x->warmup == y->warmup &&
           x->total_steps == y->total_steps && x->beta1 == y->beta1 && x->beta2 == y->beta2 &&
           x->eps == y->eps && x->weight_decay == y->weight_decay &&
           x->decay_all == y->decay_all && x->clip == y->clip && x->accum == y->accum &&
           a->best_eval_loss == b->best_eval_loss && a->holdout == b->holdout &&
           a->eval_every == b->eval_every && a->eval_batches == b->eval_batches &&
           a->data_hash == b->data_hash && a->has_state == b->has_state;
}

int main(void)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char p10[512], p20[512], pmodel[512];
    snprintf(p10, sizeof p10, "%s/ngpt_resume10_%ld.ngpt", dir, (long)getpid());
    snprintf(p20, sizeof p20, "%s/ngpt_resume20_%ld.ngpt", dir, (long)getpid());
    snprintf(pmodel, sizeof pmodel, "%s/ngpt_resume_model_%ld.ngpt", dir, (long)getpid());
    ngpt_data *d;
    CHECK_OK(ngpt_data_open_mem(&d, text, sizeof text - 1, 0.1f, T));
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.min_lr = 1e-4f, o.warmup = 5, o.total_steps = 20, o.accum = 2;
    ngpt_train_state ts = {.seed = 42, .batch = B, .seq = T, .opt = o, .best_eval_loss = 4.5f,
                          .holdout = 0.25f, .eval_every = 7, .eval_batches = 3,
                          .data_hash = 0x0123456789abcdefull};

    ngpt_context *a = new_ctx(NGPT_MODE_TRAIN, 32);
    ngpt_context *b = new_ctx(NGPT_MODE_TRAIN, 32);
    if (!a || !b) return test_summary("test_resume");
    uint64_t h20 = run(a, d, &o, 20);
    CHECK_OK(ngpt_context_save_train(a, p20, &ts));
    run(b, d, &o, 10);
    CHECK_OK(ngpt_context_save_train(b, p10, &ts));
    ngpt_context_free(b);
    ngpt_train_state got, peeked;
    ngpt_config peeked_cfg;
    ngpt_model *mc = NULL;
    ngpt_context *c = resume(p10, NULL, 0, &mc, &got);
    if (!c) return test_summary("test_resume");
    CHECK_OK(ngpt_model_config(mc, &peeked_cfg));
    CHECK(peeked_cfg.d_model == 32, "the checkpoint's config");
    uint64_t steps = 0;
    ngpt_context_step_count(c, &steps);
    CHECK(steps == 10, "restored step %llu", (unsigned long long)steps);
    CHECK(got.has_state && got.seed == 42 && got.batch == B && got.seq == T &&
          got.opt.lr == o.lr && got.opt.min_lr == o.min_lr && got.opt.warmup == 5 &&
          got.opt.total_steps == 20 && got.opt.accum == 2 && got.opt.decay_all &&
          got.opt.beta2 == o.beta2 && got.opt.clip == o.clip && got.best_eval_loss == 4.5f &&
          got.holdout == 0.25f && got.eval_every == 7 && got.eval_batches == 3 &&
          got.data_hash == 0x0123456789abcdefull,
          "training state did not round-trip");
    const ngpt_train_state got10 = got;
    uint64_t h_resumed = run(c, d, &got.opt, 10);
    CHECK_HASH(h_resumed, h20);
    /* moments and step too: the saved files are byte-identical */
    char p20b[600];
    snprintf(p20b, sizeof p20b, "%s.b", p20);
    CHECK_OK(ngpt_context_save_train(c, p20b, &ts));
    CHECK(file_hash(p20) == file_hash(p20b) && file_hash(p20) != 0,
          "checkpoint after 20 steps differs from the resumed one");
    printf("20 steps: params %016" PRIx64 ", resumed at 10: %016" PRIx64 "\n", h20, h_resumed);

    /* a fresh optimizer on the same parameters: zero moments, step 0 */
    uint64_t before_reset = 0, after_reset = 1;
    ngpt_context_params_checksum(c, &before_reset);
    CHECK_OK(ngpt_context_optim_reset(c));
    ngpt_context_step_count(c, &steps);
    ngpt_context_params_checksum(c, &after_reset);
    CHECK(steps == 0 && after_reset == before_reset, "optim_reset: step %llu, parameters %s",
          (unsigned long long)steps, after_reset == before_reset ? "kept" : "changed");
    CHECK_OK(ngpt_context_save_train(c, p20b, &ts));      /* saves zero moments and step 0 */
    ngpt_model *mz = NULL;
    ngpt_context *z = resume(p20b, NULL, 0, &mz, &got);
    if (z) ngpt_context_step_count(z, &steps);
    CHECK(z && got.has_state && steps == 0, "a reset optimizer's checkpoint: step %llu",
          (unsigned long long)steps);
    ngpt_context_free(z);
    ngpt_model_close(mz);

    /* a model-only checkpoint: zero moments and step 0 */
    CHECK_OK(ngpt_context_save(a, pmodel));
    ngpt_model *mb = NULL;
    b = resume(pmodel, NULL, 0, &mb, &got);
    if (b) ngpt_context_step_count(b, &steps);
    CHECK(b && !got.has_state && steps == 0, "model-only: has_state %d step %llu",
          (int)got.has_state, (unsigned long long)steps);
    uint64_t hb = 0;
    if (b) ngpt_context_params_checksum(b, &hb);
    CHECK_HASH(hb, h20);
    /* the same from memory: the bytes of the file, read once */
    size_t size = 0;
    void *bytes = read_all(p10, &size);
    ngpt_model *mm = NULL;
    ngpt_context *m = bytes ? resume(NULL, bytes, size, &mm, &peeked) : NULL;
    if (m) {
        CHECK(same_state(&peeked, &got10), "from memory: the training state differs");
        ngpt_context_step_count(m, &steps);
        CHECK(steps == 10, "from memory: step %llu", (unsigned long long)steps);
        CHECK_HASH(run(m, d, &peeked.opt, 10), h20);
        ngpt_context_free(m);
        CHECK_OK(ngpt_model_close(mm));
        ((unsigned char *)bytes)[size / 2] ^= 1;
        mm = (ngpt_model *)&mm;
        CHECK_STATUS(ngpt_model_open_mem(&mm, bytes, size), NGPT_ERR_CHECKSUM);
        CHECK(mm == NULL, "a damaged buffer opens no model");
    }
    free(bytes);
    /* a training checkpoint is a model file: its inference contexts read the parameters */
    ngpt_model *m20 = NULL;
    CHECK_OK(ngpt_model_open(&m20, p20));
    ngpt_context *inf = NULL;
    if (m20) CHECK_OK(ngpt_context_init(&inf, m20, NULL, NULL, NULL, 0));
    if (inf) {
        ngpt_context_params_checksum(inf, &hb);
        CHECK_HASH(hb, h20);
        CHECK_STATUS(ngpt_context_save_train(inf, p20b, &ts), NGPT_ERR_WRONG_MODE);
        ngpt_context_free(inf);
    }
    /* under another config: refused, naming the field */
    ngpt_config other;
    if (m20) CHECK_OK(ngpt_model_config(m20, &other));
    other.d_model = 64;
    ngpt_shape tsh = ngpt_shape_default(NGPT_MODE_TRAIN);
    tsh.batch = B, tsh.seq = T;
    ngpt_context *wrong = NULL;
    if (m20) CHECK_STATUS(ngpt_context_init(&wrong, m20, &other, &tsh, NULL, 0),
                          NGPT_ERR_CONFIG_MISMATCH);
    CHECK(wrong == NULL, "no context under another config");
    ngpt_model_close(m20);
    /* the Llama switches resume bit for bit too (SwiGLU and RMSNorm backward) */
    ngpt_context *la = new_llama(), *lb = new_llama(), *lc = NULL;
    ngpt_model *ml = NULL;
    if (la && lb) {
        const uint64_t l20 = run(la, d, &o, 20);
        run(lb, d, &o, 10);
        CHECK_OK(ngpt_context_save_train(lb, p10, &ts));
        lc = resume(p10, NULL, 0, &ml, &got);
        if (lc) CHECK_HASH(run(lc, d, &got.opt, 10), l20);
        CHECK(l20 != h20, "the Llama model trained the default one's parameters");
    }
    ngpt_context_free(la), ngpt_context_free(lb), ngpt_context_free(lc);
    ngpt_model_close(ml);
    ngpt_model *none = NULL;
    CHECK_STATUS(ngpt_model_open(&none, "/nonexistent/x.ngpt"), NGPT_ERR_IO);
    CHECK_STATUS(ngpt_context_save_train(c, p20b, NULL), NGPT_ERR_NULL_ARG);
    remove(p10), remove(p20), remove(p20b), remove(pmodel);
    ngpt_context_free(a), ngpt_context_free(b), ngpt_context_free(c);
    ngpt_model_close(mb);
    ngpt_model_close(mc);
    ngpt_data_free(d);
    return test_summary("test_resume");
}
