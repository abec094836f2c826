/* test_threads.c — every result is the same for 1, 2, 3, 4 and 7 threads
 * (DESIGN §4): parameters, gradients, loss and gradient norm after 3 AdamW
 * steps with dropout and gradient accumulation, eval and train-mode logits,
 * attention traces, sampled and beam-searched text, on the tiny config and
 * (natively) a mid-size one with odd sizes (C = 90, 185 rows) so that every
 * cut falls somewhere different. Each count runs twice: with the default
 * inline threshold and with every job split (inline_below = 0). Also:
 * training resumed with another thread count continues bit for bit, and a
 * thread the system refuses is a clear NGPT_ERR_THREAD. */
/* test-ldflags: -Wl,--wrap=pthread_create */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "test.h"

#include "internal.h"
#include "pool.h"

static const int32_t THREADS[] = {1, 2, 3, 4, 7};
enum { N_THREADS = sizeof THREADS / sizeof THREADS[0] };

/* pthread_create fails once `refuse` more threads have been created (-1: never). */
static int refuse = -1;
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (refuse == 0) return EAGAIN;
    if (refuse > 0) refuse--;
    return __real_pthread_create(t, a, fn, arg);
}

static const char TEXT[] =
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was "
    "the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it "
    "was the season of Light, it was the season of Darkness, it was the spring of hope.";

typedef struct results {
    uint64_t params, grads, loss, norm, eval_loss;      /* training, 3 steps */
    uint64_t logits_eval, logits_train, trace;          /* full forward of the batch */
    uint64_t sampled, beam, cached_trace;               /* generation */
} results;

static uint64_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static ngpt_context *make(const ngpt_config *cfg, ngpt_mode mode, int32_t B, int32_t T,
                          ngpt_trace trace, int32_t threads, bool split_all)
{
    ngpt_shape s = ngpt_shape_default(mode);
    s.batch = B, s.seq = T, s.trace = trace, s.threads = threads;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, cfg, &s, NULL, 0));
    if (!ctx) return NULL;
    if (split_all) ctx->plan.pool->inline_below = 0.0;
    CHECK_OK(ngpt_params_init(ctx, 5));
    return ctx;
}

static uint64_t hash_floats(const float *x, size_t n) { return ngpt_checksum_bytes(x, n * sizeof *x); }

/* 3 AdamW steps of 2 micro-batches each (the last one smaller than planned),
 * then the batch's logits in eval and train mode. */
static void train(const ngpt_config *cfg, int32_t B, int32_t T, int32_t threads, bool split_all,
                  results *r)
{
    ngpt_context *ctx = make(cfg, NGPT_MODE_TRAIN, B, T, NGPT_TRACE_NONE, threads, split_all);
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, TEXT, sizeof TEXT - 1, 0.2f, T));
    if (!ctx || !d) goto out;
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.warmup = 1, o.total_steps = 3, o.accum = 2;
    float loss = 0, norm = 0, eval = 0;
    for (int s = 0; s < 3; s++) {
        int32_t b = s == 2 ? B - 1 : B, t = s == 2 ? T - 3 : T;
        CHECK_OK(ngpt_train_step(ctx, &o, d, 9, b > 0 ? b : 1, t, &loss, NULL, &norm));
    }
    float *g, *p;
    size_t n;
    CHECK_OK(ngpt_params_data(ctx, &p, &n));
    r->params = hash_floats(p, n);
    CHECK_OK(ngpt_grads_data(ctx, &g, &n));
    r->grads = hash_floats(g, n);
    r->loss = bits(loss), r->norm = bits(norm);
    CHECK_OK(ngpt_model_evaluate(ctx, d, 3, 2, B, T, &eval));
    r->eval_loss = bits(eval);
out:
    ngpt_data_free(d);
    ngpt_context_free(ctx);
}

/* A full forward over B windows (eval, then dropout on) with the full trace;
 * sampling (sliding past T) and a beam search of width B. */
static void infer(const ngpt_config *cfg, int32_t B, int32_t T, int32_t threads, bool split_all,
                  results *r)
{
    ngpt_context *ctx = make(cfg, NGPT_MODE_INFER, B, T, NGPT_TRACE_FULL, threads, split_all);
    if (!ctx) return;
    int32_t tok[4096];
    for (int32_t i = 0; i < B * T; i++) tok[i] = (unsigned char)TEXT[(i * 7) % (sizeof TEXT - 1)];
    const float *map;
    size_t n;
    CHECK_OK(ngpt_model_forward(ctx, tok, B, T, NULL, NULL));
    CHECK_OK(ngpt_logits_checksum(ctx, &r->logits_eval));
    CHECK_OK(ngpt_trace_data(ctx, cfg->n_layers - 1, &map, &n));
    r->trace = hash_floats(map, n);
    CHECK_OK(ngpt_dropout_set(ctx, true, 7, 2));
    CHECK_OK(ngpt_model_forward(ctx, tok, B, T, NULL, NULL));
    CHECK_OK(ngpt_logits_checksum(ctx, &r->logits_train));
    CHECK_OK(ngpt_dropout_set(ctx, false, 0, 0));

    int32_t out[64];
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler.temperature = 0.9f, gc.sampler.top_k = 40, gc.sampler.seed = 11;
    gc.max_tokens = T + 9;      /* past the context: the window slides */
    ngpt_generate_result res;
    CHECK_OK(ngpt_model_generate(ctx, &gc, tok, 5, out, 64, NULL, NULL, &res));
    r->sampled = ngpt_checksum_bytes(out, (size_t)res.n_tokens * sizeof *out);
    gc.max_tokens = 6, gc.beam_width = B;
    CHECK_OK(ngpt_model_generate(ctx, &gc, tok + T, 4, out, 64, NULL, NULL, &res));
    r->beam = ngpt_checksum_bytes(out, (size_t)res.n_tokens * sizeof *out);
    CHECK_OK(ngpt_trace_data(ctx, 0, &map, &n));    /* the last decode step's rows */
    r->cached_trace = hash_floats(map, n);
    ngpt_context_free(ctx);
}

static void sweep(const char *name, const ngpt_config *cfg, int32_t B, int32_t T)
{
    results base = {0};
    train(cfg, B, T, 1, false, &base);
    infer(cfg, B, T, 1, false, &base);
    for (int i = 0; i < N_THREADS; i++)
        for (int split_all = 0; split_all < 2; split_all++) {
            results r = {0};
            train(cfg, B, T, THREADS[i], split_all, &r);
            infer(cfg, B, T, THREADS[i], split_all, &r);
            CHECK(!memcmp(&r, &base, sizeof r),
                  "%s, %d threads%s: params %d grads %d loss %d norm %d eval %d logits %d/%d "
                  "trace %d sampled %d beam %d cached trace %d (1 = same as 1 thread)",
                  name, (int)THREADS[i], split_all ? " (every job split)" : "",
                  r.params == base.params, r.grads == base.grads, r.loss == base.loss,
                  r.norm == base.norm, r.eval_loss == base.eval_loss,
                  r.logits_eval == base.logits_eval, r.logits_train == base.logits_train,
                  r.trace == base.trace, r.sampled == base.sampled, r.beam == base.beam,
                  r.cached_trace == base.cached_trace);
        }
    printf("%s: params %016" PRIx64 " logits %016" PRIx64 " sampled %016" PRIx64
           " for every thread count\n", name, base.params, base.logits_eval, base.sampled);
}

/* 2 steps with 1 thread, saved, resumed with 3 threads for 1 more step ==
 * 3 steps with 1 thread: parameters, moments and step (the saved files). */
static void resume_other_count(const ngpt_config *cfg)
{
    enum { B = 3, T = 16 };
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char p2[512], p3a[512], p3b[512];
    snprintf(p2, sizeof p2, "%s/ngpt_threads2_%ld.ngpt", dir, (long)getpid());
    snprintf(p3a, sizeof p3a, "%s/ngpt_threads3a_%ld.ngpt", dir, (long)getpid());
    snprintf(p3b, sizeof p3b, "%s/ngpt_threads3b_%ld.ngpt", dir, (long)getpid());
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, TEXT, sizeof TEXT - 1, 0.2f, T));
    ngpt_context *one = make(cfg, NGPT_MODE_TRAIN, B, T, NGPT_TRACE_NONE, 1, false);
    ngpt_context *three = make(cfg, NGPT_MODE_TRAIN, B, T, NGPT_TRACE_NONE, 3, true);
    if (!d || !one || !three) goto out;
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.warmup = 1, o.total_steps = 3;
    ngpt_train_state ts = {.seed = 9, .batch = B, .seq = T, .opt = o, .best_eval_loss = 9.0f,
                          .holdout = 0.2f, .eval_every = 1, .eval_batches = 1};
    float loss;
    for (int s = 0; s < 2; s++) CHECK_OK(ngpt_train_step(one, &o, d, 9, B, T, &loss, NULL, NULL));
    CHECK_OK(ngpt_checkpoint_save_train(one, p2, &ts));
    CHECK_OK(ngpt_train_step(one, &o, d, 9, B, T, &loss, NULL, NULL));
    CHECK_OK(ngpt_checkpoint_save_train(one, p3a, &ts));
    CHECK_OK(ngpt_checkpoint_load_train(three, p2, NULL));
    CHECK_OK(ngpt_train_step(three, &o, d, 9, B, T, &loss, NULL, NULL));
    CHECK_OK(ngpt_checkpoint_save_train(three, p3b, &ts));
    size_t na = 0, nb = 0;
    unsigned char *a = test_read_file(p3a, &na), *b = test_read_file(p3b, &nb);
    CHECK(a && b && na == nb && na > 0 && !memcmp(a, b, na),
          "resumed with 3 threads: the checkpoint after step 3 differs from 1 thread's");
    free(a);
    free(b);
out:
    remove(p2), remove(p3a), remove(p3b);
    ngpt_context_free(one);
    ngpt_context_free(three);
    ngpt_data_free(d);
}

/* pthread_create refusing the 3rd worker: NGPT_ERR_THREAD naming it, the two
 * started ones joined, and a later init works again. */
static void refused_thread(const ngpt_config *cfg)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = 5;
    ngpt_context *ctx = NULL;
    refuse = 2;
    CHECK_STATUS(ngpt_context_init(&ctx, cfg, &s, NULL, 0), NGPT_ERR_THREAD);
    CHECK(ctx == NULL, "no context on failure");
    CHECK(strstr(ngpt_last_error(), "thread 4 of 5") != NULL, "names the thread: %s",
          ngpt_last_error());
    refuse = -1;
    CHECK_OK(ngpt_context_init(&ctx, cfg, &s, NULL, 0));
    ngpt_context_free(ctx);
    CHECK(strcmp(ngpt_status_string(NGPT_ERR_THREAD), "thread start failed") == 0, "status name");
}

int main(void)
{
    ngpt_config tiny = test_config_tiny();
    sweep("tiny", &tiny, 3, 16);
#if defined(__x86_64__)     /* natively only: too slow for the ARM runs under qemu */
    ngpt_config mid = ngpt_config_default();
    mid.context_len = 40, mid.d_model = 90, mid.n_heads = 5, mid.n_layers = 2, mid.d_ff = 200;
    sweep("mid (C=90, 5x37 rows)", &mid, 5, 37);
#endif
    resume_other_count(&tiny);
    refused_thread(&tiny);
    return test_summary("test_threads");
}
