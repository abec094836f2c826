/* test_progress.c — the progress callback: generation's prefill reports
 * each pass (tokens), evaluation each batch, a checkpoint write its bytes,
 * rising to the total; the results are bit-identical with and without a
 * callback; a float32 model quantized as a q8 or q4 context copies it
 * reports its weights; returning false cancels with NGPT_ERR_STOPPED and
 * one line, changing nothing (the slot, the loss, the previous file, no
 * context made); a callback is the setting thread's only. */
#include <pthread.h>
#include <string.h>

#include "test.h"

typedef struct log {
    int calls, cancel_at;       /* cancel on call cancel_at (0: never) */
    ngpt_progress_stage stage;
    uint64_t last_done, last_total;
    bool rising;
} log_t;

static bool on_progress(ngpt_progress_stage stage, uint64_t done, uint64_t total, void *user)
{
    log_t *l = user;
    if (l->calls && (done <= l->last_done || total != l->last_total || stage != l->stage))
        l->rising = false;
    l->calls++, l->stage = stage, l->last_done = done, l->last_total = total;
    return l->calls != l->cancel_at;
}

static ngpt_context *make(ngpt_mode mode, int32_t batch, int32_t seq)
{
    ngpt_config c = ngpt_config_default();
    c.context_len = 128, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.d_ff = 64;
    c.dropout = 0.0f;
    ngpt_shape s = ngpt_shape_default(mode);
    s.batch = batch, s.seq = seq;
    ngpt_context *ctx = NULL;
    if (ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0) || ngpt_context_params_init(ctx, 9)) return NULL;
    return ctx;
}

static void prefill(void)
{
    ngpt_context *ctx = make(NGPT_MODE_INFER, 1, 16);
    CHECK(ctx != NULL, "context: %s", ngpt_last_error());
    if (!ctx) return;
    int32_t prompt[100], plain[20], watched[20];
    for (int i = 0; i < 100; i++) prompt[i] = (i * 31 + 7) % 256;
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 20, gc.sampler.seed = 3;
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 100, plain, 20, NULL, NULL, NULL));
    log_t l = {.rising = true};
    ngpt_progress_callback_set(on_progress, &l);
    CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 100, watched, 20, NULL, NULL, NULL));
    CHECK(memcmp(plain, watched, sizeof plain) == 0, "a callback changed the tokens");
    CHECK(l.calls == 7 && l.rising && l.stage == NGPT_PROGRESS_PREFILL && l.last_done == 100 &&
              l.last_total == 100,
          "prefill: %d calls, last %llu of %llu", l.calls, (unsigned long long)l.last_done,
          (unsigned long long)l.last_total);
    /* cancelled on the 3rd pass, with a kept prefix of 50: the slot holds the 50 again */
    gc.keep_cache = true;
    CHECK_OK(ngpt_context_cache_clear(ctx, 0));
    CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, prompt, 16));
    CHECK_OK(ngpt_context_cache_prefill_slot(ctx, 0, prompt + 16, 16));
    l = (log_t){.rising = true, .cancel_at = 3};
    ngpt_generate_result r = {0};
    CHECK_STATUS(ngpt_context_generate(ctx, &gc, prompt, 100, watched, 20, NULL, NULL, &r),
                 NGPT_ERR_STOPPED);
    CHECK(strstr(ngpt_last_error(), "ngpt_context_generate: cancelled by the progress callback") &&
              r.n_generated == 0,
          "%s (%d generated)", ngpt_last_error(), (int)r.n_generated);
    int32_t len = -1;
    CHECK_OK(ngpt_context_cache_len(ctx, 0, &len));
    CHECK(len == 32 && l.calls == 3, "after a cancel the slot holds %d (%d calls)", (int)len,
          l.calls);
    ngpt_progress_callback_set(NULL, NULL);
    ngpt_context_free(ctx);
}

static void evaluate(void)
{
    ngpt_context *ctx = make(NGPT_MODE_TRAIN, 2, 16);
    CHECK(ctx != NULL, "context: %s", ngpt_last_error());
    if (!ctx) return;
    char text[4000];
    for (size_t i = 0; i < sizeof text; i++) text[i] = (char)('a' + (i * 7 + i / 13) % 26);
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, text, sizeof text, 0.5f, 16));
    float plain = 0, watched = 0, kept = 42.0f;
    CHECK_OK(ngpt_context_evaluate(ctx, d, 1, 5, 2, 16, &plain));
    log_t l = {.rising = true};
    ngpt_progress_callback_set(on_progress, &l);
    CHECK_OK(ngpt_context_evaluate(ctx, d, 1, 5, 2, 16, &watched));
    CHECK(plain == watched && l.calls == 5 && l.rising && l.last_done == 5 &&
              l.stage == NGPT_PROGRESS_EVALUATE,
          "evaluate: %g vs %g, %d calls", (double)plain, (double)watched, l.calls);
    l = (log_t){.rising = true, .cancel_at = 2};
    CHECK_STATUS(ngpt_context_evaluate(ctx, d, 1, 5, 2, 16, &kept), NGPT_ERR_STOPPED);
    CHECK(kept == 42.0f && strstr(ngpt_last_error(), "ngpt_context_evaluate: cancelled"),
          "a cancelled evaluation wrote %g: %s", (double)kept, ngpt_last_error());
    ngpt_progress_callback_set(NULL, NULL);
    ngpt_data_free(d);
    ngpt_context_free(ctx);
}

static const char *path = "build/tests/test_progress.ngpt";

static void *save_on_thread(void *ctx)
{
    return (void *)(intptr_t)ngpt_context_save(ctx, path);
}

static void write_file(void)
{
    ngpt_context *ctx = make(NGPT_MODE_INFER, 1, 16), *other = make(NGPT_MODE_INFER, 1, 16);
    CHECK(ctx && other, "contexts");
    if (!ctx || !other) return;
    CHECK_OK(ngpt_context_params_init(other, 10));
    CHECK_OK(ngpt_context_save(ctx, path));
    size_t n0 = 0, n1 = 0;
    unsigned char *before = test_read_file(path, &n0);
    log_t l = {.rising = true};
    ngpt_progress_callback_set(on_progress, &l);
    CHECK_OK(ngpt_context_save(ctx, path));
    unsigned char *same = test_read_file(path, &n1);
    CHECK(before && same && n0 == n1 && memcmp(before, same, n0) == 0,
          "a callback changed the file");
    CHECK(l.calls > 1 && l.rising && l.stage == NGPT_PROGRESS_WRITE && l.last_done == l.last_total &&
              l.last_total < n0,
          "write: %d calls, %llu of %llu", l.calls, (unsigned long long)l.last_done,
          (unsigned long long)l.last_total);
    l = (log_t){.rising = true, .cancel_at = 2};
    CHECK_STATUS(ngpt_context_save(other, path), NGPT_ERR_STOPPED);
    CHECK(strstr(ngpt_last_error(), "ngpt_context_save: cancelled by the progress callback") &&
              strstr(ngpt_last_error(), "unchanged"),
          "%s", ngpt_last_error());
    free(same);
    same = test_read_file(path, &n1);
    CHECK(same && n0 == n1 && memcmp(before, same, n0) == 0, "a cancelled save changed the file");
    /* another thread's call does not report to this thread's callback */
    l = (log_t){.rising = true, .cancel_at = 1};
    pthread_t t;
    void *st = (void *)1;
    CHECK(pthread_create(&t, NULL, save_on_thread, other) == 0, "thread");
    pthread_join(t, &st);
    CHECK(st == NULL && l.calls == 0, "another thread's save: status %d, %d calls here",
          (int)(intptr_t)st, l.calls);
    ngpt_progress_callback_set(NULL, NULL);
    free(before);
    free(same);
    remove(path);
    ngpt_context_free(ctx);
    ngpt_context_free(other);
}

/* A q8 or q4 context made from a model (cfg: the model's but for its
 * weights): a float32 model is quantized as it is copied. */
static ngpt_status make_q(ngpt_context **ctx, const ngpt_model *m, ngpt_weights w)
{
    ngpt_config c;
    ngpt_status st = ngpt_model_config(m, &c);
    if (st) return st;
    c.weights = w;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = 1, s.seq = 16;
    *ctx = NULL;
    return ngpt_context_init(ctx, m, &c, &s, NULL, 0);
}

/* A q8 or q4 context made from a float32 model quantizes its weights as it
 * copies them: reported as they are done (NGPT_PROGRESS_QUANTIZE), the
 * same parameters with or without a callback; a cancel makes no context
 * and the next init gives the same parameters. */
static void quantize(void)
{
    const char *f32 = "build/tests/test_progress_f32.ngpt";
    ngpt_context *src = make(NGPT_MODE_INFER, 1, 16);
    CHECK(src != NULL, "context");
    if (!src) return;
    CHECK_OK(ngpt_context_save(src, f32));
    ngpt_context_free(src);
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_model_open(&m, f32));
    if (!m) return;
    /* Linears: V*C (tied lm_head) + L * (3C*C + C*C + 2*C*d_ff) */
    const uint64_t weights = 256 * 32 + 2 * (3 * 32 * 32 + 32 * 32 + 2 * 32 * 64);
    for (int q4 = 0; q4 < 2; q4++) {
        const ngpt_weights w = q4 ? NGPT_WEIGHTS_Q4 : NGPT_WEIGHTS_Q8;
        ngpt_context *plain = NULL, *watched = NULL, *copied = NULL;
        uint64_t want = 0, got = 0;
        CHECK_OK(make_q(&plain, m, w));
        CHECK_OK(ngpt_context_params_checksum(plain, &want));
        log_t l = {.rising = true};
        ngpt_progress_callback_set(on_progress, &l);
        CHECK_OK(make_q(&watched, m, w));
        CHECK_OK(ngpt_context_params_checksum(watched, &got));
        CHECK(got == want, "%s: a callback changed the parameters", q4 ? "q4" : "q8");
        CHECK(l.calls > 10 && l.rising && l.stage == NGPT_PROGRESS_QUANTIZE &&
                  l.last_done == weights && l.last_total == weights,
              "%s: %d calls, last %llu of %llu (want %llu)", q4 ? "q4" : "q8", l.calls,
              (unsigned long long)l.last_done, (unsigned long long)l.last_total,
              (unsigned long long)weights);
        ngpt_context_free(watched);
        l = (log_t){.rising = true, .cancel_at = 3};
        CHECK_STATUS(make_q(&watched, m, w), NGPT_ERR_STOPPED);
        CHECK(strstr(ngpt_last_error(), "ngpt_context_init: cancelled by the progress callback") &&
                  !strchr(ngpt_last_error(), '\n'),
              "%s", ngpt_last_error());
        CHECK(watched == NULL, "%s: a cancelled init made a context", q4 ? "q4" : "q8");
        l = (log_t){.rising = true};
        CHECK_OK(make_q(&watched, m, w));
        CHECK_OK(ngpt_context_params_checksum(watched, &got));
        CHECK(got == want, "%s: making it again after a cancel", q4 ? "q4" : "q8");
        /* a model already quantized is copied: nothing to report */
        const char *q8 = "build/tests/test_progress_q.ngpt";
        CHECK_OK(ngpt_context_save(plain, q8));
        ngpt_model *qm = NULL;
        CHECK_OK(ngpt_model_open(&qm, q8));
        l = (log_t){.rising = true, .cancel_at = 1};
        if (qm) CHECK_OK(make_q(&copied, qm, w));
        CHECK(l.calls == 0, "%s: copying a quantized model reported %d times", q4 ? "q4" : "q8",
              l.calls);
        ngpt_progress_callback_set(NULL, NULL);
        ngpt_context_free(plain);
        ngpt_context_free(watched);
        ngpt_context_free(copied);
        ngpt_model_close(qm);
        remove(q8);
    }
    ngpt_model_close(m);
    remove(f32);
}

int main(void)
{
    prefill();
    evaluate();
    write_file();
    quantize();
    return test_summary("test_progress");
}
