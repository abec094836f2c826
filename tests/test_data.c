/* test_data.c — the byte-level loader: file errors, splits, windows, and
 * evaluation (loss, determinism, bits per byte). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>  /* getpid: unique file names when suites run side by side */

#include "test.h"

enum { T = 16 };

static void write_file(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(bytes, 1, n, f);
    fclose(f);
}

static char big[4000];

static void check_files(void)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char empty[512], shortf[512], good[512], good2[512];
    snprintf(empty, sizeof empty, "%s/ngpt_test_empty_%ld", dir, (long)getpid());
    snprintf(shortf, sizeof shortf, "%s/ngpt_test_short_%ld", dir, (long)getpid());
    snprintf(good, sizeof good, "%s/ngpt_test_good_%ld", dir, (long)getpid());
    snprintf(good2, sizeof good2, "%s/ngpt_test_good2_%ld", dir, (long)getpid());
    write_file(empty, "", 0);
    write_file(shortf, big, T);                    /* one byte short of a window */
    write_file(good, big, 3000);
    write_file(good2, big + 3000, 1000);

    ngpt_data *d = NULL;
    const char *missing[] = {"/nonexistent/ngpt/data.txt"};
    CHECK_STATUS(ngpt_data_open(&d, missing, 1, 0.1f, T), NGPT_ERR_IO);
    CHECK(strstr(ngpt_last_error(), "/nonexistent/ngpt/data.txt") != NULL, "%s", ngpt_last_error());
    const char *e[] = {good, empty};
    CHECK_STATUS(ngpt_data_open(&d, e, 2, 0.1f, T), NGPT_ERR_BAD_ARG);
    CHECK(strstr(ngpt_last_error(), "empty") != NULL, "%s", ngpt_last_error());
    const char *s[] = {shortf};
    CHECK_STATUS(ngpt_data_open(&d, s, 1, 0.1f, T), NGPT_ERR_BAD_ARG);
    CHECK(strstr(ngpt_last_error(), "shorter") != NULL, "%s", ngpt_last_error());
    const char *g1[] = {good};
    CHECK_STATUS(ngpt_data_open(&d, g1, 1, 1.0f, T), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_data_open(&d, g1, 0, 0.1f, T), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_data_open(&d, g1, 1, 0.1f, 2999), NGPT_ERR_BAD_ARG);  /* split too short */
    CHECK_STATUS(ngpt_data_open(NULL, g1, 1, 0.1f, T), NGPT_ERR_NULL_ARG);
    CHECK(d == NULL, "output set on failure");

    const char *two[] = {good, good2};
    CHECK_OK(ngpt_data_open(&d, two, 2, 0.1f, T));
    size_t tr = 0, ev = 0;
    CHECK_OK(ngpt_data_sizes(d, &tr, &ev));
    CHECK(tr == 3600 && ev == 400, "sizes %zu %zu", tr, ev);
    int32_t tok[4 * T], tgt[4 * T], tok2[4 * T], tgt2[4 * T];
    for (int split = 0; split < 2; split++) {
        for (uint64_t idx = 0; idx < 20; idx++) {
            CHECK_OK(ngpt_data_batch(d, (ngpt_split)split, 42, idx, 4, T, tok, tgt));
            for (int b = 0; b < 4; b++) {
                /* find the window in the split and check the shift */
                size_t lo = split ? 3600 : 0, hi = split ? 4000 : 3600, at = SIZE_MAX;
                for (size_t st = lo; st + T < hi + 0 && at == SIZE_MAX; st++) {
                    int same = 1;
                    for (int t = 0; t < T && same; t++) same = tok[b * T + t] == (uint8_t)big[st + t];
                    if (same && tgt[b * T + T - 1] == (uint8_t)big[st + T]) at = st;
                }
                CHECK(at != SIZE_MAX, "split %d batch %llu row %d is not a window of the split",
                      split, (unsigned long long)idx, b);
                for (int t = 0; t + 1 < T; t++)
                    CHECK(tgt[b * T + t] == tok[b * T + t + 1], "targets are not tokens shifted");
            }
        }
    }
    CHECK_OK(ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 42, 5, 4, T, tok, tgt));
    CHECK_OK(ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 42, 5, 4, T, tok2, tgt2));
    CHECK(!memcmp(tok, tok2, sizeof tok), "same (seed, index) gave different windows");
    CHECK_OK(ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 42, 6, 4, T, tok2, tgt2));
    CHECK(memcmp(tok, tok2, sizeof tok) != 0, "different indices gave the same windows");
    CHECK_STATUS(ngpt_data_batch(d, (ngpt_split)7, 42, 0, 4, T, tok, tgt), NGPT_ERR_BAD_ARG);
    ngpt_data_free(d);
    remove(empty), remove(shortf), remove(good), remove(good2);
}

static void check_eval(void)
{
    ngpt_config cfg = ngpt_config_default();
    cfg.context_len = T, cfg.d_model = 32, cfg.n_layers = 2, cfg.n_heads = 4, cfg.d_ff = 64;
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_INFER);
    sh.batch = 4;
    sh.logits_rows = NGPT_LOGITS_ALL;       /* the loss needs every position's logits */
    ngpt_context *ctx;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &sh, NULL, 0));
    if (!ctx) return;
    CHECK_OK(ngpt_context_params_init(ctx, 42));
    ngpt_data *d;
    CHECK_OK(ngpt_data_open_mem(&d, big, sizeof big, 0.1f, T));
    float l1 = 0, l2 = 0;
    CHECK_OK(ngpt_context_evaluate(ctx, d, 1, 3, 4, T, &l1));
    CHECK_OK(ngpt_context_evaluate(ctx, d, 1, 3, 4, T, &l2));
    CHECK(l1 == l2, "evaluation is not repeatable: %g %g", (double)l1, (double)l2);
    /* an untrained model is close to uniform over 256 bytes: ln 256 = 5.545 */
    CHECK(fabsf(l1 - 5.5452f) < 0.05f, "untrained eval loss %g", (double)l1);
    /* the mean of 3 one-batch evaluations' losses in double equals the 3-batch result */
    int32_t tok[4 * T], tgt[4 * T];
    double sum = 0;
    for (int i = 0; i < 3; i++) {
        float l;
        ngpt_data_batch(d, NGPT_SPLIT_EVAL, 1, (uint64_t)i, 4, T, tok, tgt);
        ngpt_context_forward(ctx, tok, 4, T, tgt, &l);
        sum += l;
    }
    CHECK(l1 == (float)(sum / 3), "eval %g, by hand %g", (double)l1, sum / 3);
    CHECK_STATUS(ngpt_context_evaluate(ctx, d, 1, 0, 4, T, &l1), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_evaluate(ctx, d, 1, 1, 5, T, &l1), NGPT_ERR_EXCEEDS_PLAN);
    ngpt_data_free(d);
    ngpt_context_free(ctx);
}

int main(void)
{
    uint32_t x = 1;   /* English-like bytes are not needed: any fixed bytes do */
    for (size_t i = 0; i < sizeof big; i++) {
        x = x * 1664525u + 1013904223u;
        big[i] = (char)(32 + (x >> 25) % 90);
    }
    check_files();
    check_eval();
    return test_summary("test_data");
}
