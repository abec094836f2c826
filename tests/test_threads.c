/* test_threads.c — every result is the same for 1, 2, 3, 4 and 7 threads
 * (docs/DESIGN.md §4): parameters, gradients, loss and gradient norm after 3 AdamW
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

#include "scenario.h"

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

static void sweep(const char *name, const ngpt_config *cfg, int32_t B, int32_t T)
{
    results base, r;
    char diff[256];
    scenario_run(cfg, B, T, (variant){1, false, false}, &base);
    for (int i = 0; i < N_THREADS; i++)
        for (int split_all = 0; split_all < 2; split_all++) {
            scenario_run(cfg, B, T, (variant){THREADS[i], split_all, false}, &r);
            CHECK(!memcmp(&r, &base, sizeof r), "%s, %d threads%s: %s", name, (int)THREADS[i],
                  split_all ? " (every job split)" : "", scenario_diff(&r, &base, diff, sizeof diff));
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
    void *arena1;
    ngpt_context *one = scenario_make(cfg, NGPT_MODE_TRAIN, B, T, NGPT_TRACE_NONE,
                                      (variant){1, false, false}, &arena1), *three = NULL;
    ngpt_model *m = NULL;
    if (!d || !one) goto out;
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.warmup = 1, o.total_steps = 3;
    ngpt_train_state ts = {.seed = 9, .batch = B, .seq = T, .opt = o, .best_eval_loss = 9.0f,
                          .holdout = 0.2f, .eval_every = 1, .eval_batches = 1};
    float loss;
    for (int s = 0; s < 2; s++) CHECK_OK(ngpt_context_train_step(one, &o, d, 9, B, T, &loss, NULL, NULL));
    CHECK_OK(ngpt_context_save_train(one, p2, &ts));
    CHECK_OK(ngpt_context_train_step(one, &o, d, 9, B, T, &loss, NULL, NULL));
    CHECK_OK(ngpt_context_save_train(one, p3a, &ts));
    /* the training context made from the checkpoint resumes it, on 3 threads, every job split */
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = B, s.seq = T, s.threads = 3;
    CHECK_OK(ngpt_model_open(&m, p2));
    if (m) CHECK_OK(ngpt_context_init(&three, m, NULL, &s, NULL, 0));
    if (!three) goto out;
    three->plan.threads.pool->inline_below = 0.0;
    CHECK_OK(ngpt_context_train_step(three, &o, d, 9, B, T, &loss, NULL, NULL));
    CHECK_OK(ngpt_context_save_train(three, p3b, &ts));
    size_t na = 0, nb = 0;
    unsigned char *a = test_read_file(p3a, &na), *b = test_read_file(p3b, &nb);
    CHECK(a && b && na == nb && na > 0 && !memcmp(a, b, na),
          "resumed with 3 threads: the checkpoint after step 3 differs from 1 thread's");
    free(a);
    free(b);
out:
    remove(p2), remove(p3a), remove(p3b);
    scenario_free(one, arena1);
    ngpt_context_free(three);
    ngpt_model_close(m);
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
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, cfg, &s, NULL, 0), NGPT_ERR_THREAD);
    CHECK(ctx == NULL, "no context on failure");
    CHECK(strstr(ngpt_last_error(), "thread 4 of 5") != NULL, "names the thread: %s",
          ngpt_last_error());
    refuse = -1;
    CHECK_OK(ngpt_context_init(&ctx, NULL, cfg, &s, NULL, 0));
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
