/* test.h — a tiny test harness: CHECK counts, the summary line is what
 * tests/run.sh adds up. Each test file is one program. */
#ifndef NGPT_TEST_H
#define NGPT_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngpt.h"

static int test_passed, test_failed;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (cond) {                                                               \
            test_passed++;                                                        \
        } else {                                                                  \
            test_failed++;                                                        \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

/* A status check that prints the library's message on failure. */
#define CHECK_OK(expr)                                                            \
    do {                                                                          \
        ngpt_status st_ = (expr);                                                 \
        CHECK(st_ == NGPT_OK, "%s -> %s: %s", #expr, ngpt_status_string(st_),     \
              ngpt_last_error());                                                 \
    } while (0)

/* Expects a specific failure status and a non-empty message. */
#define CHECK_STATUS(expr, want)                                                  \
    do {                                                                          \
        ngpt_status st_ = (expr);                                                 \
        CHECK(st_ == (want) && ngpt_last_error()[0] != '\0',                      \
              "%s -> %s (want %s): %s", #expr, ngpt_status_string(st_),           \
              ngpt_status_string(want), ngpt_last_error());                       \
    } while (0)

#define CHECK_HASH(got, want_hex)                                                 \
    CHECK((got) == (uint64_t)(want_hex), "hash %016" PRIx64 " want %016" PRIx64,  \
          (uint64_t)(got), (uint64_t)(want_hex))

/* The tiny config most tests run on (fast enough for qemu):
 * V=256 T=16 C=32 L=2 H=4 d_ff=64, dropout 0.1. */
static inline ngpt_config test_config_tiny(void)
{
    ngpt_config c = ngpt_config_default();
    c.context_len = 16, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.d_ff = 64;
    return c;
}

/* Applies space-separated "key=value" settings (ngpt_config_set), e.g. a
 * model variant "norm=post pos=learned"; false if one is refused. */
static inline bool test_config_apply(ngpt_config *c, const char *settings)
{
    char buf[1024], *save = NULL;
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save))
        if (ngpt_config_set(c, kv) != NGPT_OK) return false;
    return true;
}

/* The same for a LoRA config (ngpt_lora_config_set), e.g. "r=4
 * targets=all-linear"; false if one is refused. */
static inline bool test_lora_apply(ngpt_lora_config *lc, const char *settings)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save))
        if (ngpt_lora_config_set(lc, kv) != NGPT_OK) return false;
    return true;
}

/* A context made from the model file at path by ngpt_context_init (cfg
 * NULL: the model's config, an inference shape sharing its weights; cfg: a
 * copy the context owns; shape NULL: the inference default). *model is
 * the open model, which must outlive the context: test_context_close
 * frees both. NULL, *model NULL and a failure counted if either fails. */
static inline ngpt_context *test_context_open(ngpt_model **model, const char *path,
                                              const ngpt_config *cfg, const ngpt_shape *shape)
{
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_model_open(model, path));
    if (*model) CHECK_OK(ngpt_context_init(&ctx, *model, cfg, shape, NULL, 0));
    if (!ctx) ngpt_model_close(*model), *model = NULL;
    return ctx;
}

/* Frees ctx, then closes the model it was made from (either may be NULL). */
static inline void test_context_close(ngpt_context *ctx, ngpt_model *model)
{
    ngpt_context_free(ctx);
    CHECK_OK(ngpt_model_close(model));
}

/* The config of the model file at path (zeros and a failure counted if it
 * cannot be opened). */
static inline ngpt_config test_file_config(const char *path)
{
    ngpt_config cfg = {0};
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_model_open(&m, path));
    if (m) CHECK_OK(ngpt_model_config(m, &cfg));
    ngpt_model_close(m);
    return cfg;
}

/* Tensor count of a context (0 on error), for loops over the tensors. */
static inline int32_t test_tensor_count(const ngpt_context *ctx)
{
    int32_t n = 0;
    return ngpt_context_tensor_count(ctx, &n) == NGPT_OK ? n : 0;
}

/* A whole file in a malloc'd buffer (*n bytes), or NULL. */
static inline unsigned char *test_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (b && fread(b, 1, (size_t)size, f) == (size_t)size) *n = (size_t)size;
    fclose(f);
    return b;
}

/* The file image of tokenizer t (malloc'd, *size bytes), or NULL. */
static inline uint8_t *test_tokenizer_image(const ngpt_tokenizer *t, size_t *size)
{
    uint8_t *img = NULL;
    *size = 0;
    if (ngpt_tokenizer_save_mem(t, NULL, 0, size) || !(img = malloc(*size)) ||
        ngpt_tokenizer_save_mem(t, img, *size, size)) {
        free(img);
        return NULL;
    }
    return img;
}

/* Whether files a and b hold the same bytes. */
static inline bool test_same_file(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *fa = test_read_file(a, &na), *fb = test_read_file(b, &nb);
    const bool same = fa && fb && na == nb && !memcmp(fa, fb, na);
    free(fa), free(fb);
    return same;
}

/* The model file at path, in a context sharing its weights and in a copy
 * under cfg: each has the parameters checksum want and saves (to scratch)
 * path's bytes again. */
static inline void test_file_round_trip(const char *path, const ngpt_config *cfg, uint64_t want,
                                        const char *scratch, const char *label)
{
    for (int copy = 0; copy < 2; copy++) {
        const char *what = copy ? "copied" : "shared";
        ngpt_model *m = NULL;
        ngpt_context *ctx = test_context_open(&m, path, copy ? cfg : NULL, NULL);
        uint64_t h = 0;
        if (ctx) {
            CHECK_OK(ngpt_context_params_checksum(ctx, &h));
            CHECK(h == want, "[%s] the %s parameters' checksum %016" PRIx64 " want %016" PRIx64,
                  label, what, h, want);
            CHECK_OK(ngpt_context_save(ctx, scratch));
            CHECK(test_same_file(path, scratch), "[%s] the %s model saves other bytes", label,
                  what);
        }
        test_context_close(ctx, m);
    }
}

static inline int test_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, test_passed, test_failed);
    return test_failed != 0;
}

#endif
