/* quant_model.h — what the tests of 8- and 4-bit models (test_q8.c,
 * test_q4.c) share, for a model of either weights: made from a seed; the
 * full forward's logits; a file made, opened and saved back byte for byte;
 * cached prefill and decode against the full forward and the float32
 * model; the scenario dirty and threaded against clean; a tensor damaged
 * in a resealed file; the golden of the scenario. */
#ifndef NGPT_TEST_QUANT_MODEL_H
#define NGPT_TEST_QUANT_MODEL_H

#include <math.h>
#include <unistd.h>

#include "io/checkpoint.h"      /* the container, to damage a quantized tensor */
#include "runtime/config.h"     /* ngpt_weights_name */
#include "scenario.h"

/* The test's two scratch files (quant_paths names them). */
static char path[256], path2[256];

static inline void quant_paths(const char *test)
{
    snprintf(path, sizeof path, "/tmp/ngpt_%s_%d.ngpt", test, (int)getpid());
    snprintf(path2, sizeof path2, "/tmp/ngpt_%s_%d_b.ngpt", test, (int)getpid());
}

/* The tiny config with settings sw and weights w. */
static inline ngpt_config quant_config(ngpt_weights w, const char *sw)
{
    ngpt_config c = test_config_tiny();
    CHECK(test_config_apply(&c, sw), "config %s: %s", sw, ngpt_last_error());
    c.weights = w;
    return c;
}

static inline ngpt_context *make(const ngpt_config *c, int batch, int seq, uint64_t seed)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = batch, s.seq = seq;
    s.logits_rows = NGPT_LOGITS_ALL;    /* every position's logits, compared whole */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, c, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, seed));
    return ctx;
}

static inline uint64_t params_hash(const ngpt_context *ctx)
{
    uint64_t h = 0;
    CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    return h;
}

static inline void tokens(int32_t *tok, int n, int V)
{
    for (int i = 0; i < n; i++) tok[i] = (unsigned char)TEXT[(i * 7) % (sizeof TEXT - 1)] % V;
}

/* Logits of a full forward over (b, t) tokens, copied into out. */
static inline void full(ngpt_context *ctx, const int32_t *tok, int b, int t, int V, float *out)
{
    CHECK_OK(ngpt_context_forward(ctx, tok, b, t, NULL, NULL));
    const float *lg = NULL;
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    if (lg) memcpy(out, lg, sizeof(float) * (size_t)b * t * V);
}

/* init quantizes the float32 draw; a context of weights w made from the
 * float32 file quantizes it; a file of weights w's contexts (sharing its
 * weights, or a copy) hold the same weights and save the same bytes; a
 * float32 context of it is refused. */
static inline void test_made_and_saved(ngpt_weights w, const char *sw)
{
    ngpt_config c = quant_config(w, sw), f = c;
    f.weights = NGPT_WEIGHTS_F32, f.lm_head_q4 = false;
    ngpt_context *fl = make(&f, 1, 0, 5), *a = make(&c, 1, 0, 5), *b = make(&c, 1, 0, 9), *q;
    ngpt_model *m = NULL;
    if (!fl || !a || !b) goto out;
    CHECK_OK(ngpt_context_save(fl, path));
    CHECK(params_hash(a) != params_hash(b), "[%s] seeds 5 and 9 give one model", sw);
    q = test_context_open(&m, path, &c, NULL);
    if (q) CHECK_HASH(params_hash(q), params_hash(a));
    test_context_close(q, m);
    CHECK_OK(ngpt_context_save(a, path));
    CHECK(test_file_config(path).weights == w, "[%s] the file's config is not %s", sw,
          ngpt_weights_name(w));
    test_file_round_trip(path, &c, params_hash(a), path2, sw);
    char want[64];
    snprintf(want, sizeof want, "weights is %s", ngpt_weights_name(w));
    CHECK_OK(ngpt_model_open(&m, path));
    q = NULL;
    CHECK_STATUS(ngpt_context_init(&q, m, &f, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    CHECK(strstr(ngpt_last_error(), want) != NULL, "%s", ngpt_last_error());
    test_context_close(q, m);
out:
    ngpt_context_free(fl);
    ngpt_context_free(a);
    ngpt_context_free(b);
}

/* Prefill then decode, one token at a time and in batches, equal the full
 * forward's rows bit for bit; and the logits are within `near` (of the
 * largest) of the float32 model's. */
static inline void test_cached_equals_full(ngpt_weights w, const char *sw, double near)
{
    ngpt_config c = quant_config(w, sw), f = c;
    f.weights = NGPT_WEIGHTS_F32, f.lm_head_q4 = false;
    const int T = c.context_len, V = c.vocab_size;
    ngpt_context *ctx = make(&c, 2, 0, 5), *fl = make(&f, 2, 0, 5);
    float *want = malloc(sizeof(float) * 2 * T * V), *ref = malloc(sizeof(float) * 2 * T * V);
    int32_t tok[64];
    if (!ctx || !fl || !want || !ref) goto out;
    tokens(tok, 2 * T, V);
    full(ctx, tok, 2, T, V, want);
    full(fl, tok, 2, T, V, ref);
    double err = 0.0, mag = 0.0;
    for (int i = 0; i < 2 * T * V; i++) {
        err = fmax(err, fabs((double)want[i] - ref[i]));
        mag = fmax(mag, fabs((double)ref[i]));
    }
    CHECK(err <= near * mag, "[%s] %s logits differ from f32 by %g (largest %g)", sw,
          ngpt_weights_name(w), err, mag);
    int32_t pre[2 * 5], next[2];
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 5; i++) pre[s * 5 + i] = tok[s * T + i];
    CHECK_OK(ngpt_context_cache_prefill(ctx, pre, 2, 5));
    const float *lg;
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    for (int s = 0; s < 2; s++)
        CHECK(!memcmp(lg + (size_t)s * 5 * V, want + (size_t)s * T * V, sizeof(float) * 5 * V),
              "[%s] prefill of sequence %d differs", sw, s);
    for (int i = 5; i < T; i++) {
        next[0] = tok[i], next[1] = tok[T + i];
        CHECK_OK(ngpt_context_cache_decode(ctx, next, 2));
        CHECK_OK(ngpt_context_logits(ctx, &lg));
        for (int s = 0; s < 2; s++)
            CHECK(!memcmp(lg + (size_t)s * V, want + ((size_t)s * T + i) * V, sizeof(float) * V),
                  "[%s] decode at %d of sequence %d differs", sw, i, s);
    }
out:
    free(want), free(ref);
    ngpt_context_free(ctx);
    ngpt_context_free(fl);
}

/* The inference scenario, dirty arena, 3 threads, every job split. */
static inline void test_scenario(ngpt_weights w, const char *sw)
{
    ngpt_config c = quant_config(w, sw);
    results clean = {0}, r = {0};
    char why[256];
    scenario_infer(&c, 3, c.context_len, (variant){1, false, false}, &clean);
    scenario_infer(&c, 3, c.context_len, (variant){3, true, true}, &r);
    CHECK(!memcmp(&clean, &r, sizeof r), "[%s] dirty arena, 3 threads: %s", sw,
          scenario_diff(&r, &clean, why, sizeof why));
}

/* Rewrites bytes `at` of a tensor's data in a copy of the file, reseals it
 * and expects the open to refuse it, naming the tensor. */
static inline void expect_damaged(const unsigned char *file, size_t n, const char *tensor, size_t at,
                                  const void *bytes, size_t len, const char *why)
{
    unsigned char *b = malloc(n);
    if (!b) return;
    memcpy(b, file, n);
    ngpt_ckpt_reader r;
    CHECK_OK(ngpt_ckpt_open_mem(&r, b, n));
    int64_t i = ngpt_ckpt_find_tensor(&r, tensor);
    size_t data_bytes = 0;
    const unsigned char *d = i >= 0 ? ngpt_ckpt_tensor_data(&r, (uint32_t)i, &data_bytes) : NULL;
    ngpt_ckpt_close(&r);
    if (d && at + len <= data_bytes) {
        memcpy(b + (d - b) + at, bytes, len);
        uint64_t h = ngpt_checksum_bytes(b, n - 8);
        memcpy(b + n - 8, &h, 8);
        ngpt_model *m = NULL;
        CHECK_STATUS(ngpt_model_open_mem(&m, b, n), NGPT_ERR_BAD_FORMAT);
        CHECK(strstr(ngpt_last_error(), tensor) && strstr(ngpt_last_error(), why),
              "%s: %s", why, ngpt_last_error());
        ngpt_model_close(m);
    } else {
        CHECK(false, "%s: no tensor %s", why, tensor);
    }
    free(b);
}

/* The bytes of a model of weights w and config sw (seed 3) saved to path,
 * or NULL. */
static inline unsigned char *saved_model(ngpt_weights w, const char *sw, size_t *n)
{
    ngpt_config c = quant_config(w, sw);
    ngpt_context *ctx = make(&c, 1, 4, 3);
    if (!ctx) return NULL;
    CHECK_OK(ngpt_context_save(ctx, path));
    ngpt_context_free(ctx);
    return test_read_file(path, n);
}

/* Golden: the hash of the inference scenario of a model of weights w,
 * computed by the scalar reference build; every build must give the same. */
static inline void test_golden(ngpt_weights w, const char *sw, uint64_t want)
{
    ngpt_config c = quant_config(w, sw);
    results r = {0};
    scenario_infer(&c, 3, c.context_len, (variant){1, false, false}, &r);
    uint64_t h = ngpt_checksum_bytes(&r, sizeof r);
    CHECK(h == want, "[%s] golden %016" PRIx64 " want %016" PRIx64, sw, h, want);
}

#endif
