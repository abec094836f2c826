/* test_public_api.c — bad input to every function of include/ngpt.h: NULL
 * pointers, bad sizes, ids, lengths, modes and states. Each call must
 * return a failing status with a fresh message (never crash, never abort
 * the host app) and change nothing. The test also reads include/ngpt.h and
 * fails when a declared function is not called here, so a function added
 * later gets its bad-input test. And the abort hook for internal
 * invariants: called with file, line and message, then NGPT_ERR_INTERNAL. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "public_decls.h"
#include "test.h"

/* True if the message starts with "<the function called in expr>: " and
 * the prefix is not repeated (ngpt.h, Conventions: one prefix, the public
 * function the user called). */
static bool prefixed_by_call(const char *expr, const char *msg)
{
    const char *call = strstr(expr, "ngpt_");
    size_t n = call ? strcspn(call, "(") : 0;
    if (!call || call[n] != '(' || strncmp(msg, call, n) != 0 || strncmp(msg + n, ": ", 2) != 0)
        return false;
    return strstr(msg + n + 2, ": ngpt_") == NULL && strncmp(msg + n + 2, "ngpt_", 5) != 0;
}

/* Sets a sentinel message, runs expr, and expects status `want` with a new
 * message (so a message left over by an earlier failure does not count)
 * that starts with the called function's name. */
#define SENTINEL "sentinel message"
#define REJECTS(expr, want)                                                        \
    do {                                                                           \
        ngpt_fail(NGPT_ERR_BAD_ARG, SENTINEL);                                     \
        ngpt_status st_ = (expr);                                                  \
        CHECK(st_ == (want) && ngpt_last_error()[0] != '\0' &&                     \
                  strcmp(ngpt_last_error(), SENTINEL) != 0 &&                      \
                  prefixed_by_call(#expr, ngpt_last_error()),                      \
              "%s -> %s (want %s): \"%s\"", #expr, ngpt_status_string(st_),        \
              ngpt_status_string(want), ngpt_last_error());                        \
    } while (0)

static ngpt_config tiny(void)
{
    ngpt_config c = ngpt_config_default();
    c.context_len = 8, c.d_model = 8, c.n_layers = 1, c.n_heads = 2, c.d_ff = 16;
    return c;
}

static ngpt_context *make(ngpt_mode mode, int32_t batch)
{
    ngpt_config c = tiny();
    ngpt_shape s = ngpt_shape_default(mode);
    s.batch = batch;
    s.logits_rows = NGPT_LOGITS_ALL;    /* losses on the inference context too */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, 1));
    return ctx;
}

static uint64_t phash(ngpt_context *ctx)
{
    uint64_t h = 0;
    ngpt_context_params_checksum(ctx, &h);
    return h;
}

static void status_and_info(void)
{
    CHECK(strcmp(ngpt_status_string((ngpt_status)-1), "unknown status") == 0, "negative status");
    CHECK(strcmp(ngpt_status_string(NGPT_STATUS_COUNT), "unknown status") == 0, "status count");
    CHECK(strcmp(ngpt_status_string((ngpt_status)1000), "unknown status") == 0, "large status");
    for (int s = 0; s < NGPT_STATUS_COUNT; s++)
        CHECK(ngpt_status_string((ngpt_status)s)[0] != '\0', "status %d has a name", s);
    CHECK(ngpt_last_error() != NULL, "last_error never NULL");
    CHECK(ngpt_build_info() != NULL && strstr(ngpt_build_info(), "ngpt") != NULL, "build_info");
    CHECK(ngpt_stop_reason_string((ngpt_stop_reason)-1) != NULL, "stop reason -1");
    CHECK(ngpt_stop_reason_string((ngpt_stop_reason)99) != NULL, "stop reason 99");
    CHECK(ngpt_checksum_bytes(NULL, 0) == ngpt_checksum_bytes("", 0), "checksum of nothing");
    CHECK(ngpt_checksum_bytes(NULL, 16) == 0, "checksum(NULL, 16) is 0, not a crash");
}

static void config_functions(void)
{
    ngpt_config c = ngpt_config_default(), before = c;
    REJECTS(ngpt_config_validate(NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_config_set(NULL, "V=3"), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_config_set(&c, NULL), NGPT_ERR_NULL_ARG);
    const char *bad[] = {"", "=", "V", "=5", "V=", "V=x", "V=1x", "V= 1", "V=99999999999",
                         "dropout=nan", "dropout=1e99", "qkv_bias=2", "norm=mid", "pos=",
                         "a_key_longer_than_thirty_one_characters=1", "V==1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) REJECTS(ngpt_config_set(&c, bad[i]), NGPT_ERR_BAD_CONFIG);
    CHECK(!memcmp(&c, &before, sizeof c), "rejected strings leave the config unchanged");
    char buf[8] = "xxxxxxx";
    ngpt_config_format(NULL, buf, sizeof buf);
    CHECK(buf[0] == '\0', "format(NULL config) gives an empty string");
    ngpt_config_format(&c, NULL, 10);       /* no crash */
    ngpt_config_format(&c, buf, 0);         /* nothing written */
    ngpt_config_format(&c, buf, 1);
    CHECK(buf[0] == '\0', "format into 1 byte");
    size_t n;
    REJECTS(ngpt_config_param_count(NULL, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_config_param_count(&c, NULL), NGPT_ERR_NULL_ARG);
    c.n_heads = 3;
    REJECTS(ngpt_config_param_count(&c, &n), NGPT_ERR_BAD_CONFIG);
}

static void planning(void)
{
    ngpt_config c = tiny();
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    size_t bytes;
    REJECTS(ngpt_context_arena_size(NULL, NULL, &s, &bytes), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_arena_size(NULL, &c, &s, NULL), NGPT_ERR_NULL_ARG);
    ngpt_shape reserved = s;
    reserved.reserved[sizeof reserved.reserved / sizeof reserved.reserved[0] - 1] = 1;   /* a field of a newer header */
    const ngpt_shape bad[] = {
        reserved,
        {.mode = (ngpt_mode)7, .batch = 1, .threads = 1},
        {.mode = NGPT_MODE_INFER, .batch = -4, .threads = 1},
        {.mode = NGPT_MODE_INFER, .batch = 1, .seq = 9, .threads = 1},
        {.mode = NGPT_MODE_INFER, .batch = 1, .seq = -1, .threads = 1},
        {.mode = NGPT_MODE_INFER, .batch = 1, .trace = (ngpt_trace)5, .threads = 1},
        {.mode = NGPT_MODE_TRAIN, .batch = 1, .threads = 100000},
        {.mode = NGPT_MODE_INFER, .batch = 1, .threads = 1, .logits_rows = -2},
        {.mode = NGPT_MODE_TRAIN, .batch = 1, .threads = 1, .logits_rows = 1},
        {.mode = NGPT_MODE_INFER, .batch = 1, .threads = 1, .draft_tokens = -1},
        {.mode = NGPT_MODE_INFER, .batch = 1, .threads = 1, .draft_tokens = NGPT_DRAFT_TOKENS_MAX + 1},
        {.mode = NGPT_MODE_TRAIN, .batch = 1, .threads = 1, .draft_tokens = 1},
        {.mode = NGPT_MODE_INFER, .batch = 1, .threads = 1, .grammar_depth = -1},
        {.mode = NGPT_MODE_INFER, .batch = 1, .threads = 1, .grammar_depth = NGPT_GRAMMAR_DEPTH_MAX + 1},
        {.mode = NGPT_MODE_TRAIN, .batch = 1, .threads = 1, .grammar_depth = 8},
        {.mode = NGPT_MODE_INFER, .batch = 1, .threads = 1, .kv_k = 2},
        {.mode = NGPT_MODE_INFER, .batch = 1, .threads = 1, .kv_v = -1},
        {.mode = NGPT_MODE_TRAIN, .batch = 1, .threads = 1, .kv_k = NGPT_KV_Q8},
    };
    ngpt_context *ctx = (ngpt_context *)&c;     /* must be overwritten with NULL on failure */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        REJECTS(ngpt_context_arena_size(NULL, &c, &bad[i], &bytes), NGPT_ERR_BAD_ARG);
        REJECTS(ngpt_context_init(&ctx, NULL, &c, &bad[i], NULL, 0), NGPT_ERR_BAD_ARG);
        CHECK(ctx == NULL, "no context on failure");
    }
    REJECTS(ngpt_context_init(NULL, NULL, &c, &s, NULL, 0), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_init(&ctx, NULL, NULL, &s, NULL, 0), NGPT_ERR_NULL_ARG);
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &s, &bytes));
    size_t by_default, zeros;   /* NULL shape, and a shape of zeros: the inference default */
    CHECK(ngpt_context_arena_size(NULL, &c, NULL, &by_default) == NGPT_OK && by_default == bytes,
          "a NULL shape plans the default (%zu, %zu bytes)", by_default, bytes);
    CHECK(ngpt_context_arena_size(NULL, &c, &(ngpt_shape){.mode = NGPT_MODE_INFER}, &zeros) ==
              NGPT_OK && zeros == bytes, "zeros are the defaults (%zu, %zu bytes)", zeros, bytes);
    unsigned char small[64];
    REJECTS(ngpt_context_init(&ctx, NULL, &c, &s, small, sizeof small), NGPT_ERR_ARENA_TOO_SMALL);
    REJECTS(ngpt_context_init(&ctx, NULL, &c, &s, small, 0), NGPT_ERR_ARENA_TOO_SMALL);
    ngpt_config bad_cfg = c;
    bad_cfg.d_model = 0;
    REJECTS(ngpt_context_init(&ctx, NULL, &bad_cfg, &s, NULL, 0), NGPT_ERR_BAD_CONFIG);
    CHECK(ctx == NULL, "no context on failure");
    bad_cfg = c;
    bad_cfg.reserved[0] = 7;
    REJECTS(ngpt_context_init(&ctx, NULL, &bad_cfg, &s, NULL, 0), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_config_validate(&bad_cfg), NGPT_ERR_BAD_ARG);
    CHECK(ctx == NULL, "no context on failure");
    ngpt_context_free(NULL);
    size_t used;
    int32_t count;
    REJECTS(ngpt_context_arena_used(NULL, &used), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_prepare(NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_tensor_count(NULL, &count), NGPT_ERR_NULL_ARG);
}

static void context_functions(ngpt_context *ctx)
{
    ngpt_config c;
    ngpt_shape s;
    REJECTS(ngpt_context_config(NULL, &c), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_config(ctx, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_shape(NULL, &s), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_shape(ctx, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_params_init(NULL, 1), NGPT_ERR_NULL_ARG);
    ngpt_tensor_info info;
    int32_t n = 0;
    REJECTS(ngpt_context_tensor_count(ctx, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_arena_used(ctx, NULL), NGPT_ERR_NULL_ARG);
    CHECK_OK(ngpt_context_tensor_count(ctx, &n));
    REJECTS(ngpt_context_tensor_at(NULL, 0, &info), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_tensor_at(ctx, 0, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_tensor_at(ctx, -1, &info), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_tensor_at(ctx, n, &info), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_tensor_at(ctx, INT32_MAX, &info), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_tensor_find(NULL, "ln_f.bias", &info), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_tensor_find(ctx, NULL, &info), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_tensor_find(ctx, "ln_f.bias", NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_tensor_find(ctx, "", &info), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_tensor_find(ctx, "blocks.99.ln1.weight", &info), NGPT_ERR_BAD_ARG);
    float *p;
    size_t count;
    REJECTS(ngpt_context_params(NULL, &p, &count), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_params(ctx, NULL, &count), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_params(ctx, &p, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_dropout_set(NULL, true, 1, 2), NGPT_ERR_NULL_ARG);
    uint64_t h;
    REJECTS(ngpt_context_params_checksum(NULL, &h), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_params_checksum(ctx, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_logits_checksum(NULL, &h), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_logits_checksum(ctx, NULL), NGPT_ERR_NULL_ARG);
}

static void forward_functions(ngpt_context *ctx)
{
    const float *logits;
    size_t count;
    uint64_t h;
    /* before any forward */
    REJECTS(ngpt_context_logits(ctx, &logits), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_logits_checksum(ctx, &h), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_trace(ctx, 0, &logits, &count), NGPT_ERR_WRONG_MODE);
    int32_t tok[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, bad[4] = {1, 256, 2, 3}, neg[2] = {-1, 0};
    float loss;
    REJECTS(ngpt_context_forward(NULL, tok, 1, 4, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_forward(ctx, NULL, 1, 4, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_forward(ctx, tok, 0, 4, NULL, NULL), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_forward(ctx, tok, 1, 0, NULL, NULL), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_forward(ctx, tok, -1, 4, NULL, NULL), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_forward(ctx, tok, 1, -5, NULL, NULL), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_forward(ctx, tok, 1, 9, NULL, NULL), NGPT_ERR_TOO_LONG);
    REJECTS(ngpt_context_forward(ctx, tok, 1, INT32_MAX, NULL, NULL), NGPT_ERR_TOO_LONG);
    REJECTS(ngpt_context_forward(ctx, tok, 2, 4, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    REJECTS(ngpt_context_forward(ctx, tok, INT32_MAX, 1, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    REJECTS(ngpt_context_forward(ctx, bad, 1, 4, NULL, NULL), NGPT_ERR_BAD_TOKEN);
    REJECTS(ngpt_context_forward(ctx, neg, 1, 2, NULL, NULL), NGPT_ERR_BAD_TOKEN);
    REJECTS(ngpt_context_forward(ctx, tok, 1, 4, bad, &loss), NGPT_ERR_BAD_TOKEN);
    REJECTS(ngpt_context_logits(ctx, &logits), NGPT_ERR_WRONG_MODE);   /* still none */
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, 4, NULL, NULL));
    REJECTS(ngpt_context_logits(NULL, &logits), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_logits(ctx, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_trace(NULL, 0, &logits, &count), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_trace(ctx, 0, NULL, &count), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_trace(ctx, 0, &logits, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_trace(ctx, -1, &logits, &count), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_trace(ctx, 1, &logits, &count), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_trace(ctx, 0, &logits, &count), NGPT_ERR_WRONG_MODE);   /* no trace planned */
}

/* The model object: NULLs, missing, garbage, truncated and damaged files
 * and buffers, a model under its contexts, its weights refused to writers. */
static void model_functions(ngpt_context *ctx, const char *path, const char *longpath)
{
    ngpt_model *m = (ngpt_model *)1;
    ngpt_config c;
    ngpt_train_state ts;
    const ngpt_tokenizer *tok;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    size_t bytes;
    ngpt_context *mctx = (ngpt_context *)1;
    REJECTS(ngpt_model_open(NULL, path), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_model_open(&m, NULL), NGPT_ERR_NULL_ARG);
    CHECK(m == NULL, "a refused open leaves no model");
    REJECTS(ngpt_model_open(&m, ""), NGPT_ERR_IO);
    REJECTS(ngpt_model_open(&m, "/"), NGPT_ERR_IO);
    REJECTS(ngpt_model_open(&m, longpath), NGPT_ERR_IO);
    REJECTS(ngpt_model_open(&m, "/etc/passwd"), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_model_open_mem(NULL, "x", 1), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_model_open_mem(&m, NULL, 1), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_model_open_mem(&m, "x", 0), NGPT_ERR_BAD_FORMAT);
    static const unsigned char zeros[4096];
    REJECTS(ngpt_model_open_mem(&m, zeros, sizeof zeros), NGPT_ERR_BAD_FORMAT);
    CHECK(m == NULL, "a refused open leaves no model");
    CHECK_OK(ngpt_context_save(ctx, path));
    size_t size = 0;
    unsigned char *file = test_read_file(path, &size);
    CHECK(file != NULL, "read %s", path);
    if (file) {
        REJECTS(ngpt_model_open_mem(&m, file, size - 1), NGPT_ERR_BAD_FORMAT);  /* truncated */
        file[size / 2] ^= 1;                                                  /* damaged */
        REJECTS(ngpt_model_open_mem(&m, file, size), NGPT_ERR_CHECKSUM);
        free(file);
    }
    REJECTS(ngpt_model_config(NULL, &c), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_model_tokenizer(NULL, &tok), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_model_train_state(NULL, &ts), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_arena_size(NULL, NULL, &s, &bytes), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_init(&mctx, NULL, NULL, &s, NULL, 0), NGPT_ERR_NULL_ARG);
    CHECK(mctx == NULL, "a refused init leaves no context");
    CHECK(ngpt_model_close(NULL) == NGPT_OK, "closing NULL is a no-op");
    if (ngpt_model_open(&m, path) != NGPT_OK) {
        CHECK(0, "ngpt_model_open(%s): %s", path, ngpt_last_error());
        return;
    }
    REJECTS(ngpt_model_config(m, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_model_tokenizer(m, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_model_train_state(m, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_arena_size(m, NULL, &s, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_init(NULL, m, NULL, &s, NULL, 0), NGPT_ERR_NULL_ARG);
    /* cfg beside a model: its config but for dropout and a float32 model's weights */
    ngpt_config other;
    CHECK_OK(ngpt_model_config(m, &other));
    other.d_ff *= 2;
    REJECTS(ngpt_context_init(&mctx, m, &other, &s, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    CHECK(mctx == NULL, "a refused init leaves no context");
    CHECK_OK(ngpt_model_config(m, &other));
    other.weights = NGPT_WEIGHTS_Q8;
    ngpt_shape train = ngpt_shape_default(NGPT_MODE_TRAIN);
    train.batch = 1;
    REJECTS(ngpt_context_init(&mctx, m, &other, &train, NULL, 0), NGPT_ERR_WRONG_MODE);
    ngpt_shape bad = s;
    bad.seq = -1;
    REJECTS(ngpt_context_init(&mctx, m, NULL, &bad, NULL, 0), NGPT_ERR_BAD_ARG);
    unsigned char small[64];
    REJECTS(ngpt_context_init(&mctx, m, NULL, &s, small, sizeof small), NGPT_ERR_ARENA_TOO_SMALL);
    if (ngpt_context_init(&mctx, m, NULL, &s, NULL, 0) == NGPT_OK) {
        float *p;
        size_t n;
        REJECTS(ngpt_context_params(mctx, &p, &n), NGPT_ERR_WRONG_MODE);
        REJECTS(ngpt_context_params_init(mctx, 1), NGPT_ERR_WRONG_MODE);
        REJECTS(ngpt_context_tokenizer_set(mctx, NULL), NGPT_ERR_WRONG_MODE);
        REJECTS(ngpt_model_close(m), NGPT_ERR_WRONG_MODE);      /* still in use */
        ngpt_context_free(mctx);
    }
    if (ngpt_context_init(&mctx, m, NULL, &train, NULL, 0) == NGPT_OK) {   /* a copy it owns */
        REJECTS(ngpt_context_tokenizer_set(mctx, NULL), NGPT_ERR_WRONG_MODE);
        REJECTS(ngpt_model_close(m), NGPT_ERR_WRONG_MODE);      /* it outlives every context */
        ngpt_context_free(mctx);
    }
    CHECK(ngpt_model_close(m) == NGPT_OK, "close: %s", ngpt_last_error());
    remove(path);
}

static void checkpoint_functions(ngpt_context *ctx, const char *path)
{
    ngpt_model *m = NULL;
    uint64_t before = phash(ctx);
    REJECTS(ngpt_context_save(NULL, path), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_save(ctx, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_save(ctx, ""), NGPT_ERR_IO);
    char longpath[5000];
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[sizeof longpath - 1] = '\0';
    REJECTS(ngpt_context_save(ctx, longpath), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_model_open_mem(&m, "NGPTCKPT", 8), NGPT_ERR_BAD_FORMAT);
    size_t file_bytes;
    ngpt_config size_cfg = ngpt_config_default();
    REJECTS(ngpt_config_file_size(NULL, NULL, &file_bytes), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_config_file_size(&size_cfg, NULL, NULL), NGPT_ERR_NULL_ARG);
    size_cfg.d_model = 0;
    REJECTS(ngpt_config_file_size(&size_cfg, NULL, &file_bytes), NGPT_ERR_BAD_CONFIG);
    CHECK_HASH(phash(ctx), before);
    model_functions(ctx, path, longpath);
}

static void training_functions(ngpt_context *train, ngpt_context *infer, const char *path)
{
    float *g, lr;
    size_t count;
    uint64_t steps;
    ngpt_optim_config opt = ngpt_optim_config_default(), o;
    REJECTS(ngpt_context_backward(NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_backward(infer), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_backward(train), NGPT_ERR_WRONG_MODE);     /* no forward with targets yet */
    int32_t tok[4] = {1, 2, 3, 4};
    CHECK_OK(ngpt_context_forward(train, tok, 1, 4, NULL, NULL));
    REJECTS(ngpt_context_backward(train), NGPT_ERR_WRONG_MODE);     /* that forward had no targets */
    REJECTS(ngpt_context_grads_zero(NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_grads_zero(infer), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_grads(NULL, &g, &count), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_grads(train, NULL, &count), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_grads(train, &g, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_grads(infer, &g, &count), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_optim_config_validate(NULL), NGPT_ERR_NULL_ARG);
    o = opt, o.lr = -1.0f; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.lr = NAN; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.min_lr = INFINITY; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.beta1 = 1.0f; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.beta2 = -0.1f; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.eps = 0.0f; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.warmup = -1; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.total_steps = -5; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.weight_decay = NAN; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.clip = NAN; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    o = opt, o.accum = 0; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_optim_config_lr(NULL, 0, &lr), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_optim_config_lr(&opt, 0, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_optim_config_lr(&opt, -1, &lr), NGPT_ERR_BAD_ARG);
    o = opt, o.eps = -1.0f; REJECTS(ngpt_optim_config_lr(&o, 0, &lr), NGPT_ERR_BAD_ARG);
    CHECK_OK(ngpt_optim_config_lr(&opt, INT64_MAX, &lr));
    CHECK(lr == opt.min_lr, "lr at the last step is min_lr: %g", (double)lr);
    uint64_t before = phash(train);
    REJECTS(ngpt_context_optim_step(NULL, &opt, 1e-3f, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_optim_step(train, NULL, 1e-3f, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_optim_step(infer, &opt, 1e-3f, NULL), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_optim_step(train, &opt, 1e-3f, NULL), NGPT_ERR_WRONG_MODE);   /* no backward */
    CHECK_OK(ngpt_context_forward(train, tok, 1, 3, tok + 1, NULL));
    CHECK_OK(ngpt_context_backward(train));
    REJECTS(ngpt_context_optim_step(train, &opt, NAN, NULL), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_optim_step(train, &opt, -1.0f, NULL), NGPT_ERR_BAD_ARG);
    o = opt, o.beta1 = 2.0f; REJECTS(ngpt_context_optim_step(train, &o, 1e-3f, NULL), NGPT_ERR_BAD_ARG);
    CHECK_HASH(phash(train), before);
    REJECTS(ngpt_context_optim_skip(NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_optim_skip(infer), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_step_count(NULL, &steps), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_step_count(train, NULL), NGPT_ERR_NULL_ARG);

    /* data */
    ngpt_data *d = (ngpt_data *)&opt;
    const char *paths[2] = {path, NULL};
    static const char text[] = "abcdefghijklmnopqrstuvwxyz0123456789 the quick brown fox";
    REJECTS(ngpt_data_open(NULL, paths, 1, 0.1f, 4), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_open(&d, NULL, 1, 0.1f, 4), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_open(&d, paths, 0, 0.1f, 4), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open(&d, paths, -1, 0.1f, 4), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open(&d, paths, 2, 0.1f, 4), NGPT_ERR_NULL_ARG);     /* paths[1] NULL */
    const char *missing[1] = {"/nonexistent/ngpt-data.txt"};
    REJECTS(ngpt_data_open(&d, missing, 1, 0.1f, 4), NGPT_ERR_IO);
    REJECTS(ngpt_data_open(&d, paths, 1, 1.0f, 4), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open(&d, paths, 1, -0.1f, 4), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open(&d, paths, 1, NAN, 4), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open(&d, paths, 1, 0.1f, 0), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open(&d, paths, 1, 0.1f, INT32_MAX), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open_mem(NULL, text, sizeof text, 0.1f, 4), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_open_mem(&d, NULL, 10, 0.1f, 4), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_open_mem(&d, text, 0, 0.1f, 4), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open_mem(&d, text, 5, 0.1f, 4), NGPT_ERR_BAD_ARG);    /* shorter than a window */
    REJECTS(ngpt_data_open_mem(&d, text, sizeof text, 0.1f, -3), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open_mem(&d, text, sizeof text, 2.0f, 4), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_open_mem(&d, text, sizeof text, 0.5f, INT32_MAX), NGPT_ERR_BAD_ARG);
    ngpt_data_free(NULL);
    d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, text, sizeof text - 1, 0.25f, 4));
    size_t tr, ev;
    int32_t tokens[8], targets[8];
    REJECTS(ngpt_data_sizes(NULL, &tr, &ev), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_sizes(d, NULL, &ev), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_sizes(d, &tr, NULL), NGPT_ERR_NULL_ARG);
    uint64_t dh;
    REJECTS(ngpt_data_checksum(NULL, &dh), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_checksum(d, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_batch(NULL, NGPT_SPLIT_TRAIN, 1, 0, 2, 4, tokens, targets), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 1, 0, 2, 4, NULL, targets), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 1, 0, 2, 4, tokens, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_data_batch(d, (ngpt_split)2, 1, 0, 2, 4, tokens, targets), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 1, 0, 0, 4, tokens, targets), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 1, 0, 2, -4, tokens, targets), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_batch(d, NGPT_SPLIT_EVAL, 1, 0, 1, 100, tokens, targets), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_data_batch(d, NGPT_SPLIT_EVAL, 1, 0, 1, INT32_MAX, tokens, targets), NGPT_ERR_BAD_ARG);

    /* steps and evaluation */
    float loss;
    before = phash(train);
    REJECTS(ngpt_context_train_step(NULL, &opt, d, 1, 1, 4, &loss, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_train_step(train, NULL, d, 1, 1, 4, &loss, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_train_step(train, &opt, NULL, 1, 1, 4, &loss, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_train_step(train, &opt, d, 1, 1, 4, NULL, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_train_step(infer, &opt, d, 1, 1, 4, &loss, NULL, NULL), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_train_step(train, &opt, d, 1, 0, 4, &loss, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    REJECTS(ngpt_context_train_step(train, &opt, d, 1, 3, 4, &loss, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    REJECTS(ngpt_context_train_step(train, &opt, d, 1, 1, 9, &loss, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    o = opt, o.accum = -2; REJECTS(ngpt_context_train_step(train, &o, d, 1, 1, 4, &loss, NULL, NULL), NGPT_ERR_BAD_ARG);
    CHECK_HASH(phash(train), before);
    REJECTS(ngpt_context_evaluate(NULL, d, 1, 1, 1, 4, &loss), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_evaluate(train, NULL, 1, 1, 1, 4, &loss), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_evaluate(train, d, 1, 1, 1, 4, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_evaluate(train, d, 1, 0, 1, 4, &loss), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_evaluate(train, d, 1, -1, 1, 4, &loss), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_evaluate(train, d, 1, 1, 5, 4, &loss), NGPT_ERR_EXCEEDS_PLAN);
    REJECTS(ngpt_context_evaluate(infer, d, 1, 1, 1, 100, &loss), NGPT_ERR_EXCEEDS_PLAN);
    /* data bytes that are not token ids of a model with a smaller vocabulary
     * ('a' = 97 and up in both splits): checked once per call, not per token */
    ngpt_config small_cfg = tiny();
    small_cfg.vocab_size = 64;
    ngpt_shape small_shape = ngpt_shape_default(NGPT_MODE_TRAIN);
    small_shape.batch = 1;
    ngpt_context *small = NULL;
    CHECK_OK(ngpt_context_init(&small, NULL, &small_cfg, &small_shape, NULL, 0));
    if (small) {
        REJECTS(ngpt_context_train_step(small, &opt, d, 1, 1, 4, &loss, NULL, NULL), NGPT_ERR_BAD_TOKEN);
        REJECTS(ngpt_context_evaluate(small, d, 1, 1, 1, 4, &loss), NGPT_ERR_BAD_TOKEN);
        uint64_t small_steps = 1;
        CHECK(ngpt_context_step_count(small, &small_steps) == NGPT_OK && small_steps == 0,
              "a rejected step counts nothing");
    }
    ngpt_context_free(small);

    /* training checkpoints */
    ngpt_train_state ts = {.seed = 1, .batch = 1, .seq = 4, .opt = opt, .best_eval_loss = INFINITY};
    REJECTS(ngpt_context_save_train(NULL, path, &ts), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_save_train(train, NULL, &ts), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_save_train(train, path, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_save_train(infer, path, &ts), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_save_train(train, "/nonexistent/dir/t.ngpt", &ts), NGPT_ERR_IO);
    ngpt_train_state bad_ts = ts;
    bad_ts.reserved[0] = 1;
    REJECTS(ngpt_context_save_train(train, path, &bad_ts), NGPT_ERR_BAD_ARG);
    bad_ts = ts, bad_ts.opt.lr = NAN;
    REJECTS(ngpt_context_save_train(train, path, &bad_ts), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_optim_reset(NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_optim_reset(infer), NGPT_ERR_WRONG_MODE);
    o = opt, o.reserved[15] = 2; REJECTS(ngpt_optim_config_validate(&o), NGPT_ERR_BAD_ARG);
    CHECK_HASH(phash(train), before);
    ngpt_data_free(d);
}


/* Sessions: bad slots, modes, paths, buffers and files; each refused
 * call leaves slot 0 as it was. path holds some text (not a session). */
static void session_functions(ngpt_context *infer, ngpt_context *train, const char *path)
{
    int32_t len = 0, tok[4] = {1, 2, 3, 4};
    unsigned char buf[64] = {0};
    size_t size = 0;
    CHECK_OK(ngpt_context_cache_clear(infer, -1));
    CHECK_OK(ngpt_context_cache_prefill_slot(infer, 0, tok, 4));
    REJECTS(ngpt_context_cache_truncate(NULL, 0, 0), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_truncate(train, 0, 0), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_truncate(infer, 1, 0), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_truncate(infer, 0, 5), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_truncate(infer, 0, -1), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_save(NULL, 0, path), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_save(infer, 0, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_save(infer, -1, path), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_save(train, 0, path), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_save(infer, 0, "/nonexistent/dir/s.sess"), NGPT_ERR_IO);
    REJECTS(ngpt_context_cache_save_mem(NULL, 0, buf, sizeof buf, &size), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_save_mem(infer, 0, buf, sizeof buf, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_save_mem(infer, 1, buf, sizeof buf, &size), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_save_mem(train, 0, buf, sizeof buf, &size), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_save_mem(infer, 0, buf, sizeof buf, &size), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_load(NULL, 0, path), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_load(infer, 0, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_load(infer, 1, path), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_load(train, 0, path), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_load(infer, 0, "/nonexistent/dir/s.sess"), NGPT_ERR_IO);
    REJECTS(ngpt_context_cache_load(infer, 0, path), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_context_cache_load_mem(NULL, 0, buf, sizeof buf), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_load_mem(infer, 0, NULL, 8), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_load_mem(infer, 5, buf, sizeof buf), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_load_mem(train, 0, buf, sizeof buf), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_load_mem(infer, 0, buf, 0), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_context_cache_load_mem(infer, 0, buf, sizeof buf), NGPT_ERR_BAD_FORMAT);
    CHECK_OK(ngpt_context_cache_len(infer, 0, &len));
    CHECK(len == 4, "refused session calls changed slot 0 (%d tokens)", (int)len);
    CHECK_OK(ngpt_context_cache_clear(infer, -1));
}

static void generation_functions(ngpt_context *infer, ngpt_context *train)
{
    int32_t len, t, tok[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, bad[2] = {5, 300};
    const int32_t *tokens;
    REJECTS(ngpt_context_cache_clear(NULL, 0), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_clear(train, 0), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_clear(infer, 1), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_clear(infer, -2), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_len(NULL, 0, &len), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_len(infer, 0, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_len(infer, 1, &len), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_len(train, 0, &len), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_tokens(NULL, 0, &tokens, &len), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_tokens(infer, 0, NULL, &len), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_tokens(infer, 0, &tokens, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_tokens(infer, -1, &tokens, &len), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_copy(NULL, 0, 0), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_copy(infer, 0, 1), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_copy(infer, -1, 0), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_copy(train, 0, 0), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_shift(NULL, 0, 0), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_shift(train, 0, 0), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_shift(infer, 1, 0), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_shift(infer, 0, -1), NGPT_ERR_BAD_ARG);
    CHECK_OK(ngpt_context_cache_clear(infer, -1));
    REJECTS(ngpt_context_cache_prefill(NULL, tok, 1, 2), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_prefill(infer, NULL, 1, 2), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_prefill(train, tok, 1, 2), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_cache_prefill(infer, tok, 0, 2), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_prefill(infer, tok, 2, 2), NGPT_ERR_EXCEEDS_PLAN);
    REJECTS(ngpt_context_cache_prefill(infer, tok, 1, 0), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_prefill(infer, tok, 1, -3), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_prefill(infer, tok, 1, 9), NGPT_ERR_TOO_LONG);
    REJECTS(ngpt_context_cache_prefill(infer, bad, 1, 2), NGPT_ERR_BAD_TOKEN);
    REJECTS(ngpt_context_cache_prefill_slot(NULL, 0, tok, 2), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_prefill_slot(infer, 0, NULL, 2), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_prefill_slot(infer, 1, tok, 2), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_prefill_slot(infer, 0, tok, 0), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_prefill_slot(infer, 0, bad, 2), NGPT_ERR_BAD_TOKEN);
    CHECK_OK(ngpt_context_cache_len(infer, 0, &len));
    CHECK(len == 0, "rejected prefills left the cache empty (%d)", (int)len);
    CHECK_OK(ngpt_context_cache_prefill_slot(infer, 0, tok, 8));
    REJECTS(ngpt_context_cache_prefill_slot(infer, 0, tok, 1), NGPT_ERR_TOO_LONG);        /* T=8 is full */
    REJECTS(ngpt_context_cache_shift(infer, 0, 9), NGPT_ERR_BAD_ARG);       /* more than it holds */
    REJECTS(ngpt_context_cache_decode(infer, tok, 1), NGPT_ERR_TOO_LONG);
    CHECK_OK(ngpt_context_cache_clear(infer, 0));
    REJECTS(ngpt_context_cache_decode(NULL, tok, 1), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_decode(infer, NULL, 1), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_cache_decode(infer, tok, 0), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_cache_decode(infer, tok, 2), NGPT_ERR_EXCEEDS_PLAN);
    REJECTS(ngpt_context_cache_decode(infer, bad + 1, 1), NGPT_ERR_BAD_TOKEN);
    REJECTS(ngpt_context_cache_decode(train, tok, 1), NGPT_ERR_WRONG_MODE);

    /* sampler */
    ngpt_sampler s = ngpt_sampler_default(), b;
    float logits[256] = {0}, bias[256] = {0};
    int32_t banned[2] = {3, 256};
    REJECTS(ngpt_sampler_validate(NULL, 256), NGPT_ERR_NULL_ARG);
    b = s, b.temperature = -1.0f; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.temperature = NAN; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.top_k = -1; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.top_p = 0.0f; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.top_p = 1.5f; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.min_p = -0.5f; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.repeat_penalty = 0.0f; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.repeat_window = -1; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.n_banned = 2; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.n_banned = -1, b.banned = banned; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.n_banned = 2, b.banned = banned; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_TOKEN);
    bias[7] = INFINITY;
    b = s, b.logit_bias = bias; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    b = s, b.reserved[2] = 1; REJECTS(ngpt_sampler_validate(&b, 256), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_sample(NULL, &s, logits, NULL, 0, 0, 0, &t), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_sample(infer, NULL, logits, NULL, 0, 0, 0, &t), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_sample(infer, &s, NULL, NULL, 0, 0, 0, &t), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_sample(infer, &s, logits, NULL, 0, 0, 0, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_sample(train, &s, logits, NULL, 0, 0, 0, &t), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_sample(infer, &s, logits, NULL, 3, 0, 0, &t), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_sample(infer, &s, logits, tok, -1, 0, 0, &t), NGPT_ERR_BAD_ARG);
    b = s, b.repeat_penalty = 1.3f;     /* recent tokens are read only with a penalty */
    REJECTS(ngpt_context_sample(infer, &b, logits, bad, 2, 0, 0, &t), NGPT_ERR_BAD_TOKEN);
    b = s, b.top_p = 2.0f; REJECTS(ngpt_context_sample(infer, &b, logits, NULL, 0, 0, 0, &t), NGPT_ERR_BAD_ARG);
    logits[5] = NAN;
    REJECTS(ngpt_context_sample(infer, &s, logits, NULL, 0, 0, 0, &t), NGPT_ERR_NUMERIC);
    logits[5] = 0.0f;

    /* generate */
    ngpt_generate_config gc = ngpt_generate_config_default(), g;
    int32_t out[300];
    const char *stops[2] = {"ab", NULL};
    gc.max_tokens = 4;
    REJECTS(ngpt_context_generate(NULL, &gc, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_generate(infer, NULL, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_generate(infer, &gc, NULL, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_generate(train, &gc, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_WRONG_MODE);
    REJECTS(ngpt_context_generate(infer, &gc, tok, 0, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_generate(infer, &gc, tok, -1, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_generate(infer, &gc, bad, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_TOKEN);
    REJECTS(ngpt_context_generate(infer, &gc, tok, 2, out, 3, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_context_generate(infer, &gc, tok, 2, out, -1, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.max_tokens = 0; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    const int32_t ends[NGPT_END_TOKENS_MAX + 1] = {7, 256};
    g = gc, g.end_tokens = ends, g.n_end_tokens = 2; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_TOKEN);
    g = gc, g.n_end_tokens = 1; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.end_tokens = ends, g.n_end_tokens = -1; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.end_tokens = ends, g.n_end_tokens = NGPT_END_TOKENS_MAX + 1; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.reserved[0] = 1; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.sampler.reserved[0] = 1; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.n_stop = 1; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.n_stop = -1, g.stop = stops; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.n_stop = 2, g.stop = stops; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    stops[1] = "";
    g = gc, g.n_stop = 2, g.stop = stops; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    stops[1] = "123456789";     /* longer than T = 8 */
    g = gc, g.n_stop = 2, g.stop = stops; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.beam_width = 2; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_EXCEEDS_PLAN);
    g = gc, g.beam_width = -1; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.length_penalty = NAN, g.beam_width = 1;
    REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.context_mode = (ngpt_context_mode)2; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.context_mode = NGPT_CONTEXT_SHIFT, g.no_cache = true;
    REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    g = gc, g.sampler.temperature = -2.0f; REJECTS(ngpt_context_generate(infer, &g, tok, 2, out, 300, NULL, NULL, NULL), NGPT_ERR_BAD_ARG);
    ngpt_generate_result r;
    CHECK_OK(ngpt_context_generate(infer, &gc, tok, 2, NULL, 0, NULL, NULL, &r));   /* out may be NULL */
    CHECK(r.n_tokens == 4, "4 tokens without an output array (%d)", (int)r.n_tokens);
    CHECK_OK(ngpt_context_generate(infer, &gc, tok, 10, out, 300, NULL, NULL, &r));  /* > T = 8 */
    CHECK(r.prompt_tokens == 8 && r.prompt_dropped == 2, "a 10-token prompt keeps its last 8 "
          "(%d kept, %d dropped)", (int)r.prompt_tokens, (int)r.prompt_dropped);
}

/* ---- the tokenizer */

static void grammar_functions(ngpt_context *infer)
{
    ngpt_grammar *g = NULL;
    const char *text;
    size_t len;
    REJECTS(ngpt_grammar_parse(NULL, NULL, "root ::= \"a\"", 12), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_grammar_parse(&g, NULL, NULL, 4), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_grammar_parse(&g, NULL, "root ::= (", 10), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_grammar_parse(&g, NULL, "root ::= x", 10), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_grammar_from_json_schema(NULL, NULL, "{}", 2), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_grammar_from_json_schema(&g, NULL, NULL, 0), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_grammar_from_json_schema(&g, NULL, "{\"type\":", 8), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_grammar_from_json_schema(&g, NULL, "{\"not\":{}}", 10), NGPT_ERR_UNSUPPORTED);
    REJECTS(ngpt_grammar_text(NULL, &text, &len), NGPT_ERR_NULL_ARG);
    ngpt_grammar_free(NULL);
    CHECK_OK(ngpt_grammar_from_json_schema(&g, NULL, "{\"type\":\"integer\"}", 18));
    REJECTS(ngpt_grammar_text(g, NULL, &len), NGPT_ERR_NULL_ARG);
    CHECK_OK(ngpt_grammar_text(g, &text, &len));
    CHECK(len > 0 && strlen(text) == len && !strncmp(text, "root ::= ", 9), "text: %s", text);
    /* a grammar of another vocabulary than the context's */
    ngpt_tokenizer_train_config tc = ngpt_tokenizer_train_config_default();
    tc.vocab_size = 300;
    static const char corpus[] = "some text to learn a few merges from, some text again";
    const void *texts[1] = {corpus};
    size_t sizes[1] = {sizeof corpus - 1};
    ngpt_tokenizer *tok = NULL;
    ngpt_grammar *other = NULL;
    CHECK_OK(ngpt_tokenizer_train(&tok, &tc, texts, sizes, 1));
    CHECK_OK(ngpt_grammar_parse(&other, tok, "root ::= \"a\"", 12));
    int32_t prompt[1] = {1}, out[4];
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = 4;
    gc.grammar = other;
    REJECTS(ngpt_context_generate(infer, &gc, prompt, 1, out, 4, NULL, NULL, NULL),
            NGPT_ERR_CONFIG_MISMATCH);
    gc.grammar = g;
    CHECK_OK(ngpt_context_generate(infer, &gc, prompt, 1, out, 4, NULL, NULL, NULL));
    ngpt_grammar_free(other);
    ngpt_grammar_free(g);
    ngpt_tokenizer_free(tok);
}

static void tokenizer_functions(const char *path)
{
    ngpt_tokenizer_train_config cfg = ngpt_tokenizer_train_config_default(), c;
    static const char text[] = "the cat and the hat, the bat and the rat";
    const void *texts[2] = {text, NULL};
    size_t sizes[2] = {sizeof text - 1, 4};
    ngpt_tokenizer *tok = (ngpt_tokenizer *)&cfg;   /* must be overwritten with NULL on failure */
    REJECTS(ngpt_tokenizer_train(NULL, &cfg, texts, sizes, 1), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_train(&tok, NULL, texts, sizes, 1), NGPT_ERR_NULL_ARG);
    CHECK(tok == NULL, "no tokenizer on failure");
    REJECTS(ngpt_tokenizer_train(&tok, &cfg, NULL, sizes, 1), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_train(&tok, &cfg, texts, NULL, 1), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_train(&tok, &cfg, texts, sizes, 2), NGPT_ERR_NULL_ARG);   /* texts[1] NULL */
    REJECTS(ngpt_tokenizer_train(&tok, &cfg, texts, sizes, -1), NGPT_ERR_BAD_ARG);
    c = cfg, c.vocab_size = 257; REJECTS(ngpt_tokenizer_train(&tok, &c, texts, sizes, 1), NGPT_ERR_BAD_ARG);
    c = cfg, c.vocab_size = (1 << 20) + 1; REJECTS(ngpt_tokenizer_train(&tok, &c, texts, sizes, 1), NGPT_ERR_BAD_ARG);
    c = cfg, c.pretok = (ngpt_pretokenizer)9; REJECTS(ngpt_tokenizer_train(&tok, &c, texts, sizes, 1), NGPT_ERR_BAD_ARG);
    c = cfg, c.min_count = 0; REJECTS(ngpt_tokenizer_train(&tok, &c, texts, sizes, 1), NGPT_ERR_BAD_ARG);
    c = cfg, c.reserved[0] = 1; REJECTS(ngpt_tokenizer_train(&tok, &c, texts, sizes, 1), NGPT_ERR_BAD_ARG);
    CHECK(tok == NULL, "no tokenizer on failure");
    c = cfg, c.vocab_size = 300;
    CHECK_OK(ngpt_tokenizer_train(&tok, &c, texts, sizes, 1));
    if (!tok) return;

    ngpt_tokenizer *t2 = (ngpt_tokenizer *)&cfg;
    REJECTS(ngpt_tokenizer_load(NULL, path), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load(&t2, NULL), NGPT_ERR_NULL_ARG);
    CHECK(t2 == NULL, "no tokenizer on failure");
    REJECTS(ngpt_tokenizer_load(&t2, "/nonexistent/ngpt.tok"), NGPT_ERR_IO);
    REJECTS(ngpt_tokenizer_load(&t2, "/"), NGPT_ERR_IO);                   /* a directory */
    REJECTS(ngpt_tokenizer_load(&t2, path), NGPT_ERR_BAD_FORMAT);          /* a text file */
    REJECTS(ngpt_tokenizer_load_mem(NULL, text, 10), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_mem(&t2, NULL, 10), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_mem(&t2, text, 0), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_tokenizer_load_mem(&t2, text, sizeof text), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_tokenizer_load_gpt2(NULL, path, path), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_gpt2(&t2, NULL, path), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_gpt2(&t2, path, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_gpt2(&t2, "/nonexistent/encoder.json", path), NGPT_ERR_IO);
    REJECTS(ngpt_tokenizer_load_gpt2(&t2, path, "/nonexistent/vocab.bpe"), NGPT_ERR_IO);
    REJECTS(ngpt_tokenizer_load_gpt2(&t2, path, path), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_tokenizer_load_gpt2_mem(NULL, "{}", 2, "", 0), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_gpt2_mem(&t2, NULL, 2, "", 0), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_gpt2_mem(&t2, "{}", 2, NULL, 0), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_gpt2_mem(&t2, "{\"a\": 0}", 8, "", 0), NGPT_ERR_BAD_FORMAT);
    CHECK(t2 == NULL, "no tokenizer on failure");

    size_t size = 0;
    char small[16];
    REJECTS(ngpt_tokenizer_save(NULL, path), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_save(tok, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_save(tok, "/nonexistent/dir/t.tok"), NGPT_ERR_IO);
    REJECTS(ngpt_tokenizer_save_mem(NULL, small, sizeof small, &size), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_save_mem(tok, small, sizeof small, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_save_mem(tok, small, sizeof small, &size), NGPT_ERR_BAD_ARG);
    CHECK(size > sizeof small, "save_mem says the size it needs (%zu)", size);
    ngpt_tokenizer_free(NULL);

    ngpt_tokenizer_info info;
    const uint8_t *bytes;
    size_t len, n;
    int32_t ids[64] = {0};
    REJECTS(ngpt_tokenizer_describe(NULL, &info), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_describe(tok, NULL), NGPT_ERR_NULL_ARG);
    const int32_t *end_ids;
    int32_t n_end;
    REJECTS(ngpt_tokenizer_end_tokens(NULL, &end_ids, &n_end), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_end_tokens(tok, NULL, &n_end), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_end_tokens(tok, &end_ids, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_token(NULL, 0, &bytes, &len), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_token(tok, 0, NULL, &len), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_token(tok, 0, &bytes, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_token(tok, -1, &bytes, &len), NGPT_ERR_BAD_TOKEN);
    REJECTS(ngpt_tokenizer_token(tok, 300, &bytes, &len), NGPT_ERR_BAD_TOKEN);
    ngpt_tokenizer *hf = NULL;
    REJECTS(ngpt_tokenizer_load_hf(NULL, "tokenizer.json"), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_hf(&hf, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_hf(&hf, "/nonexistent/tokenizer.json"), NGPT_ERR_IO);
    REJECTS(ngpt_tokenizer_load_hf_mem(NULL, "{}", 2), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_hf_mem(&hf, NULL, 2), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_load_hf_mem(&hf, "[1, 2]", 6), NGPT_ERR_BAD_FORMAT);
    CHECK(hf == NULL && strstr(ngpt_last_error(), "ngpt_tokenizer_load_hf_mem: "), "%s",
          ngpt_last_error());
    int32_t sid = -1;
    CHECK(ngpt_tokenizer_describe(tok, &info) == NGPT_OK, "describe: %s", ngpt_last_error());
    REJECTS(ngpt_tokenizer_special(NULL, 0, &sid), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_special(tok, 0, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_special(tok, -1, &sid), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_tokenizer_special(tok, info.n_special, &sid), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_tokenizer_special_id(NULL, "<|pad|>", &sid), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_special_id(tok, NULL, &sid), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_special_id(tok, "<|pad|>", NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_special_id(tok, "<|im_end|>", &sid), NGPT_ERR_BAD_ARG);
    CHECK(strstr(ngpt_last_error(), "ngpt_tokenizer_special_id: ") &&
          strstr(ngpt_last_error(), "<|im_end|>"), "names the function and the name: %s",
          ngpt_last_error());
    REJECTS(ngpt_tokenizer_encode(NULL, text, 4, ids, 64, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_encode(tok, NULL, 4, ids, 64, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_encode(tok, text, 4, ids, 64, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_encode(tok, text, sizeof text - 1, ids, 1, &n), NGPT_ERR_TOO_LONG);
    REJECTS(ngpt_tokenizer_decode(NULL, ids, 1, small, sizeof small, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_decode(tok, NULL, 1, small, sizeof small, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_decode(tok, ids, 1, small, sizeof small, NULL), NGPT_ERR_NULL_ARG);
    ids[1] = 300;
    REJECTS(ngpt_tokenizer_decode(tok, ids, 2, small, sizeof small, &n), NGPT_ERR_BAD_TOKEN);
    ids[1] = -7;
    REJECTS(ngpt_tokenizer_decode(tok, ids, 2, small, sizeof small, &n), NGPT_ERR_BAD_TOKEN);
    ids[0] = ids[1] = 'x';
    REJECTS(ngpt_tokenizer_decode(tok, ids, 2, small, 1, &n), NGPT_ERR_TOO_LONG);

    /* ChatML: a trained tokenizer has no <|im_start|> (test_chat: one that has) */
    int32_t start;
    REJECTS(ngpt_tokenizer_chatml_specials(NULL, &start, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_chatml_specials(tok, &start, NULL), NGPT_ERR_UNSUPPORTED);
    REJECTS(ngpt_tokenizer_chatml_turn(NULL, "user", text, 4, false, ids, 64, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_chatml_turn(tok, NULL, text, 4, false, ids, 64, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_chatml_turn(tok, "user", NULL, 4, false, ids, 64, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_chatml_turn(tok, "user", text, 4, false, ids, 64, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_tokenizer_chatml_turn(tok, "", text, 4, false, ids, 64, &n), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_tokenizer_chatml_turn(tok, "a\nb", text, 4, false, ids, 64, &n), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_tokenizer_chatml_turn(tok, "user", text, 4, true, ids, 64, &n), NGPT_ERR_UNSUPPORTED);
    ngpt_tokenizer_free(tok);
}

/* ---- a model's tokenizer, token data */

static void model_tokenizer_functions(ngpt_context *infer)
{
    ngpt_tokenizer_train_config tc = ngpt_tokenizer_train_config_default();
    tc.vocab_size = 300;
    static const char text[] = "the cat sat on the mat, the cat ate the rat; the rat ran at the "
                               "cat, and the cat sat on the rat's hat at the end of the day";
    const void *texts[1] = {text};
    const size_t sizes[1] = {sizeof text - 1};
    ngpt_tokenizer *tok = NULL;
    CHECK_OK(ngpt_tokenizer_train(&tok, &tc, texts, sizes, 1));
    if (!tok) return;
    const ngpt_tokenizer *got = tok;
    REJECTS(ngpt_context_tokenizer_set(NULL, tok), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_tokenizer_set(infer, tok), NGPT_ERR_CONFIG_MISMATCH);   /* V = 256 */
    REJECTS(ngpt_context_tokenizer(NULL, &got), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_context_tokenizer(infer, NULL), NGPT_ERR_NULL_ARG);
    CHECK(ngpt_context_tokenizer(infer, &got) == NGPT_OK && got == NULL, "a refused tokenizer "
          "is not attached");

    ngpt_data *d = NULL;
    const uint8_t *bytes;
    size_t a, b;
    uint64_t n;
    CHECK_OK(ngpt_data_open_mem(&d, text, sizeof text - 1, 0.3f, 4));
    if (d) {
        REJECTS(ngpt_data_tokenize(NULL, tok, 4), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_tokenize(d, NULL, 4), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_tokenize(d, tok, 0), NGPT_ERR_BAD_ARG);
        REJECTS(ngpt_data_tokenize(d, tok, 60), NGPT_ERR_BAD_ARG);   /* splits shorter than a window */
        CHECK(ngpt_data_token_counts(d, &a, &b) == NGPT_OK && a + b == sizeof text - 1,
              "a refused tokenization leaves bytes (%zu + %zu)", a, b);
        REJECTS(ngpt_data_tokenize_chat(NULL, tok, NULL, NULL, 4), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_tokenize_chat(d, NULL, NULL, NULL, 4), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_tokenize_chat(d, tok, NULL, NULL, 0), NGPT_ERR_BAD_ARG);
        ngpt_template *tp = NULL;
        ngpt_template_options to = ngpt_template_options_default();
        to.reserved[0] = 1;     /* a field of a newer header */
        CHECK_OK(ngpt_template_parse(&tp, "x", 1));
        if (tp) REJECTS(ngpt_data_tokenize_chat(d, tok, tp, &to, 4), NGPT_ERR_BAD_ARG);
        ngpt_template_free(tp);
        CHECK_OK(ngpt_data_tokenize(d, tok, 4));
        REJECTS(ngpt_data_tokenize(d, tok, 4), NGPT_ERR_BAD_ARG);    /* already tokens */
        REJECTS(ngpt_data_tokenize_chat(d, tok, NULL, NULL, 4), NGPT_ERR_BAD_ARG);
        REJECTS(ngpt_data_text(NULL, NGPT_SPLIT_TRAIN, &bytes, &a), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_text(d, NGPT_SPLIT_TRAIN, NULL, &a), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_text(d, NGPT_SPLIT_TRAIN, &bytes, NULL), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_text(d, (ngpt_split)2, &bytes, &a), NGPT_ERR_BAD_ARG);
        REJECTS(ngpt_data_token_counts(NULL, &a, &b), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_token_counts(d, NULL, &b), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_token_counts(d, &a, NULL), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_batch_bytes(NULL, NGPT_SPLIT_TRAIN, 1, 0, 1, 4, &n), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_batch_bytes(d, NGPT_SPLIT_TRAIN, 1, 0, 1, 4, NULL), NGPT_ERR_NULL_ARG);
        REJECTS(ngpt_data_batch_bytes(d, (ngpt_split)-1, 1, 0, 1, 4, &n), NGPT_ERR_BAD_ARG);
        REJECTS(ngpt_data_batch_bytes(d, NGPT_SPLIT_TRAIN, 1, 0, 0, 4, &n), NGPT_ERR_BAD_ARG);
        REJECTS(ngpt_data_batch_bytes(d, NGPT_SPLIT_EVAL, 1, 0, 1, 100, &n), NGPT_ERR_BAD_ARG);
    }
    ngpt_data_free(d);
    ngpt_tokenizer_free(tok);
}

/* ---- the abort hook */

static int hook_calls, hook_line;
static const char *hook_file, *hook_msg;
/* The importer: NULL paths and options, missing and malformed files, bad
 * store values; nothing is written. */
static void import_functions(const char *path)
{
    char out[300];
    snprintf(out, sizeof out, "%s.import.ngpt", path);
    ngpt_import_options o = ngpt_import_options_default(), b = o;
    const char *none[1] = {NULL}, *json[1] = {"/nonexistent/model.safetensors.index.json"};
    ngpt_config cfg = ngpt_config_default();
    REJECTS(ngpt_import_hf("/tmp", NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_hf(NULL, NULL, out), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_hf("/nonexistent", NULL, out), NGPT_ERR_IO);
    REJECTS(ngpt_import_hf("/nonexistent", &o, out), NGPT_ERR_IO);
    b.store = (ngpt_weights)7;
    REJECTS(ngpt_import_hf("/nonexistent", &b, out), NGPT_ERR_BAD_ARG);
    b = o, b.reserved[1] = 1;
    REJECTS(ngpt_import_hf("/nonexistent", &b, out), NGPT_ERR_BAD_ARG);
    b = o, b.config = path;                         /* a text file, not JSON */
    REJECTS(ngpt_import_hf("/nonexistent", &b, out), NGPT_ERR_BAD_FORMAT);
    b = o, b.weights = none, b.n_weights = 0;
    REJECTS(ngpt_import_hf("/nonexistent", &b, out), NGPT_ERR_IO);   /* config.json first */
    b = o, b.tokenizer_json = path, b.vocab = path;
    REJECTS(ngpt_import_hf(NULL, &b, out), NGPT_ERR_NULL_ARG);       /* no config named */
    b = o, b.weights = json, b.n_weights = 1;
    REJECTS(ngpt_import_hf(NULL, &b, out), NGPT_ERR_NULL_ARG);
    CHECK(access(out, F_OK) != 0, "a refused import writes nothing");
    REJECTS(ngpt_import_hf_config(NULL, &cfg), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_hf_config(path, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_hf_config("/nonexistent/config.json", &cfg), NGPT_ERR_IO);
    REJECTS(ngpt_import_hf_config(path, &cfg), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_import_hf_config_mem(NULL, 2, &cfg), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_hf_config_mem("{}", 2, NULL), NGPT_ERR_NULL_ARG);
    ngpt_hf_tokenizer_config tc;
    REJECTS(ngpt_import_hf_tokenizer_config(NULL, &tc), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_hf_tokenizer_config(path, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_hf_tokenizer_config("/nonexistent/tokenizer_config.json", &tc), NGPT_ERR_IO);
    REJECTS(ngpt_import_hf_tokenizer_config(path, &tc), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_import_llama2c(NULL, path, NULL, out), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_llama2c(path, NULL, NULL, out), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_llama2c(path, path, NULL, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_llama2c("/nonexistent/model.bin", path, NULL, out), NGPT_ERR_IO);
    b = o, b.store = (ngpt_weights)7;
    REJECTS(ngpt_import_llama2c(path, path, &b, out), NGPT_ERR_BAD_ARG);
    CHECK(access(out, F_OK) != 0, "a refused llama2.c import writes nothing");
    REJECTS(ngpt_import_llama2c_config(NULL, &cfg), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_llama2c_config(path, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_import_llama2c_config("/nonexistent/model.bin", &cfg), NGPT_ERR_IO);
    REJECTS(ngpt_import_hf_config_mem("{}", 2, &cfg), NGPT_ERR_BAD_FORMAT);
    const char *bert = "{\"model_type\": \"bert\"}", *heads = "{\"model_type\": \"gpt2\", \"n_head\": 5}";
    REJECTS(ngpt_import_hf_config_mem(bert, strlen(bert), &cfg), NGPT_ERR_UNSUPPORTED);
    REJECTS(ngpt_import_hf_config_mem(heads, strlen(heads), &cfg), NGPT_ERR_BAD_CONFIG);
    CHECK(cfg.d_model == ngpt_config_default().d_model, "a refused config leaves *cfg as it was");
}

/* LoRA: the config's checks, adapters from nothing, and contexts that
 * cannot apply them (test_lora.c tests the rest). */
static void lora_functions(ngpt_context *infer, ngpt_context *train)
{
    ngpt_lora_config lc = ngpt_lora_config_default();
    CHECK_STATUS(ngpt_lora_config_validate(NULL), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_lora_config_set(NULL, "r=4"), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_lora_config_set(&lc, "r=4x"), NGPT_ERR_BAD_ARG);
    ngpt_adapter *ad = (ngpt_adapter *)&lc;
    CHECK_STATUS(ngpt_adapter_create(&ad, NULL, &lc, 1), NGPT_ERR_NULL_ARG);
    CHECK(ad == NULL, "a failed create clears *ad");
    CHECK_STATUS(ngpt_adapter_create(NULL, NULL, &lc, 1), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_adapter_open(&ad, "/nonexistent/x.lora"), NGPT_ERR_IO);
    CHECK_STATUS(ngpt_adapter_open_mem(&ad, "NGPTCKPT", 8), NGPT_ERR_BAD_FORMAT);
    CHECK_STATUS(ngpt_adapter_open_mem(NULL, "NGPTCKPT", 8), NGPT_ERR_NULL_ARG);
    CHECK_OK(ngpt_adapter_close(NULL));
    CHECK_STATUS(ngpt_adapter_lora_config(NULL, &lc), NGPT_ERR_NULL_ARG);
    ngpt_train_state ts;
    CHECK_STATUS(ngpt_adapter_train_state(NULL, &ts), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_adapter_save(NULL, "/tmp/x.lora"), NGPT_ERR_NULL_ARG);
    ngpt_adapter_info info;
    CHECK_STATUS(ngpt_adapter_describe(NULL, &info), NGPT_ERR_NULL_ARG);
    char text[8] = "x";
    ngpt_lora_config_format(NULL, text, sizeof text);
    CHECK(text[0] == '\0', "a NULL config formats as the empty string");
    ngpt_lora_config_format(&lc, NULL, 0);      /* no buffer: nothing written, no crash */
    ngpt_lora_config_format(&lc, text, sizeof text);
    CHECK(strlen(text) == sizeof text - 1, "a short buffer is filled and NUL-terminated: %s", text);
    const float one = 1.0f;
    CHECK_STATUS(ngpt_context_adapters_set(NULL, NULL, NULL, 0), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_context_adapters_set(infer, NULL, &one, 1), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_context_adapters_set(infer, NULL, NULL, -1), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_adapters_set(train, NULL, NULL, 0), NGPT_ERR_WRONG_MODE);
    CHECK_OK(ngpt_context_adapters_set(infer, NULL, NULL, 0));
    CHECK_STATUS(ngpt_context_adapters_merge(NULL, NULL, NULL, 0), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_context_adapters_merge(infer, NULL, &one, 1), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_context_adapters_merge(infer, NULL, NULL, NGPT_ADAPTERS_MAX + 1),
                 NGPT_ERR_BAD_ARG);
    const ngpt_adapter *none[1] = {NULL};
    CHECK_STATUS(ngpt_context_adapters_merge(train, none, &one, 1), NGPT_ERR_NULL_ARG);
    CHECK_OK(ngpt_context_adapters_merge(infer, NULL, NULL, 0));     /* nothing merged */
    ad = (ngpt_adapter *)&lc;
    CHECK_STATUS(ngpt_import_peft(&ad, NULL, "/tmp"), NGPT_ERR_NULL_ARG);
    CHECK(ad == NULL, "a failed import clears *ad");
    CHECK_STATUS(ngpt_import_peft(NULL, NULL, "/tmp"), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_adapter_export_peft(NULL, NULL, "/tmp/x"), NGPT_ERR_NULL_ARG);
}

static void *hook_user;

static void hook(const char *file, int line, const char *message, void *user)
{
    hook_calls++, hook_file = file, hook_line = line, hook_msg = message, hook_user = user;
}

static void abort_callback(ngpt_context *ctx)
{
    int token = 0;
    ngpt_abort_callback_set(hook, &token);
    /* ordinary bad input is an error, not a broken invariant: no call */
    REJECTS(ngpt_context_forward(ctx, NULL, 1, 1, NULL, NULL), NGPT_ERR_NULL_ARG);
    CHECK(hook_calls == 0, "the hook is not called for bad input");
    int line = __LINE__ + 1;
    ngpt_status st = ngpt_internal_fail(__FILE__, line, "a == b");
    CHECK(st == NGPT_ERR_INTERNAL, "internal failure status: %s", ngpt_status_string(st));
    CHECK(hook_calls == 1 && hook_line == line && hook_file && strstr(hook_file, "test_public_api") &&
              hook_msg && !strcmp(hook_msg, "a == b") && hook_user == &token,
          "hook got file, line, message and user (%d calls)", hook_calls);
    CHECK(strstr(ngpt_last_error(), "a == b") != NULL, "message names the invariant: %s", ngpt_last_error());
    /* the macro form returns from the function with NGPT_ERR_INTERNAL */
    ngpt_abort_callback_set(NULL, NULL);
    ngpt_progress_callback_set(NULL, NULL);     /* no bad input: NULL removes it */
    st = ngpt_internal_fail("x.c", 1, "removed");
    CHECK(st == NGPT_ERR_INTERNAL && hook_calls == 1, "no hook after removing it");
}

/* ---- structs that grow (ngpt.h): their sizes are fixed on each platform */

static void struct_sizes(void)
{
    const bool lp64 = sizeof(void *) == 8;
    const struct { const char *name; size_t size, want64, want32; } s[] = {
        {"ngpt_config", sizeof(ngpt_config), 256, 256},
        {"ngpt_shape", sizeof(ngpt_shape), 64, 64},
        {"ngpt_tensor_info", sizeof(ngpt_tensor_info), 64, 48},
        {"ngpt_optim_config", sizeof(ngpt_optim_config), 128, 128},
        {"ngpt_train_state", sizeof(ngpt_train_state), 256, 256},
        {"ngpt_sampler", sizeof(ngpt_sampler), 128, 120},
        {"ngpt_generate_config", sizeof(ngpt_generate_config), 320, 288},
        {"ngpt_generate_result", sizeof(ngpt_generate_result), 64, 64},
        {"ngpt_tokenizer_train_config", sizeof(ngpt_tokenizer_train_config), 64, 64},
        {"ngpt_tokenizer_info", sizeof(ngpt_tokenizer_info), 128, 128},
        {"ngpt_import_options", sizeof(ngpt_import_options), 128, 100},
        {"ngpt_hf_tokenizer_config", sizeof(ngpt_hf_tokenizer_config), 576, 576},
        {"ngpt_lora_config", sizeof(ngpt_lora_config), 96, 96},
        {"ngpt_adapter_info", sizeof(ngpt_adapter_info), 320, 320},
        {"ngpt_chat_message", sizeof(ngpt_chat_message), 64, 64},
        {"ngpt_template_options", sizeof(ngpt_template_options), 112, 112},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        CHECK(s[i].size == (lp64 ? s[i].want64 : s[i].want32),
              "sizeof(%s) is %zu, not %zu: a new field takes its reserved bytes, and the size "
              "stays (a built app passes the old size)", s[i].name, s[i].size,
              lp64 ? s[i].want64 : s[i].want32);
}

/* ---- names by receiver (ngpt.h, "Names say their receiver") */

/* The receiver type of a declaration: "ngpt_x" of a struct returned by
 * value (`ngpt_x ngpt_x_default(...)`), else of the first parameter
 * (`[const] ngpt_x *`, `ngpt_x **`, an enum `ngpt_x v`), or "" for none. */
static void receiver_of(const char *ret, const char *first, char *out, size_t cap)
{
    out[0] = '\0';
    const char *t = strstr(first, "ngpt_");
    const char *r = strstr(ret, "ngpt_");
    const bool made = r && !strchr(ret, '*') && strncmp(r, "ngpt_status", 11) != 0;
    const char *src = made ? r : t;     /* a struct returned by value: its _default() */
    if (!src) return;
    size_t n = strspn(src, "abcdefghijklmnopqrstuvwxyz0123456789_");
    if (n >= cap) n = cap - 1;
    memcpy(out, src, n);
    out[n] = '\0';
}

static void naming_by_receiver(void)
{
    FILE *h = fopen("include/ngpt.h", "r");
    CHECK(h != NULL, "run from the source tree: cannot open include/ngpt.h");
    if (!h) return;
    /* no receiver by design: the library's own state, bytes, foreign files;
     * ngpt_context_arena_size sizes the context ngpt_context_init would make */
    static const char *const free_fns[] = {"ngpt_last_error", "ngpt_build_info",
                                           "ngpt_abort_callback_set", "ngpt_progress_callback_set",
                                           "ngpt_checksum_bytes", "ngpt_context_arena_size"};
    char decl[2048] = "", line[1024];
    int checked = 0;
    while (fgets(line, sizeof line, h)) {
        if (!decl[0] && (line[0] == ' ' || line[0] == '/' || line[0] == '*' || line[0] == '#' ||
                         line[0] == '\n' || line[0] == '}' || strstr(line, "typedef") ||
                         !strchr(line, '(')))
            continue;
        if (strlen(decl) + strlen(line) < sizeof decl) strcat(decl, line);
        if (!strchr(decl, ';')) continue;
        char *paren = strchr(decl, '('), *name = paren;
        while (name > decl && (name[-1] == '_' || (name[-1] >= 'a' && name[-1] <= 'z') ||
                               (name[-1] >= '0' && name[-1] <= '9')))
            name--;
        char fn[128] = "", ret[128] = "", first[256] = "", recv[64];
        snprintf(fn, sizeof fn, "%.*s", (int)(paren - name), name);
        snprintf(ret, sizeof ret, "%.*s", (int)(name - decl), decl);
        snprintf(first, sizeof first, "%.*s", (int)strcspn(paren + 1, ",)"), paren + 1);
        decl[0] = '\0';
        if (strncmp(fn, "ngpt_", 5) != 0) continue;
        bool exempt = !strncmp(fn, "ngpt_import_", 12);     /* foreign files into models */
        for (size_t i = 0; i < sizeof free_fns / sizeof free_fns[0]; i++)
            exempt |= !strcmp(fn, free_fns[i]);
        receiver_of(ret, first, recv, sizeof recv);
        checked++;
        if (exempt) continue;
        const size_t k = strlen(recv);
        CHECK(k > 0 && !strncmp(fn, recv, k) && fn[k] == '_',
              "%s is not named after its receiver (%s): a function on an %s is %s_<verb>", fn,
              k ? recv : "none found", k ? recv : "object", k ? recv : "ngpt_<receiver>");
    }
    fclose(h);
    CHECK(checked > 50, "naming: read %d declarations", checked);
}

/* ---- chat templates (test_template: what they render) */

static void template_functions(ngpt_context *infer)
{
    ngpt_template *t = NULL;
    static const char text[] = "{{ messages[0].content }}";
    const ngpt_chat_message m[1] = {{.role = "user", .content = "hi", .content_len = 2}};
    ngpt_chat_message bad = {.role = "user", .reserved[0] = 1}, *read = NULL;
    ngpt_template_options o = ngpt_template_options_default();
    char out[8];
    size_t n = 0;
    int32_t ids[8];
    const ngpt_tokenizer *none = NULL;
    ngpt_context_tokenizer(infer, &none);       /* a context made from a config: no tokenizer */
    REJECTS(ngpt_template_parse(NULL, text, sizeof text - 1), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_template_parse(&t, NULL, 3), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_template_parse(&t, "{% raw %}", 9), NGPT_ERR_UNSUPPORTED);
    CHECK(t == NULL, "a failed parse makes no template");
    CHECK_OK(ngpt_template_parse(&t, text, sizeof text - 1));
    REJECTS(ngpt_template_parse_config(NULL, "{}", 2), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_template_parse_config(&(ngpt_template *){NULL}, "{}", 2), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_model_template(NULL, &(ngpt_template *){NULL}), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_template_render(NULL, m, 1, NULL, out, sizeof out, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_template_render(t, NULL, 1, NULL, out, sizeof out, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_template_render(t, m, 1, NULL, out, sizeof out, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_template_render(t, &bad, 1, NULL, out, sizeof out, &n), NGPT_ERR_BAD_ARG);
    o.reserved[0] = 1;
    REJECTS(ngpt_template_render(t, m, 1, &o, out, sizeof out, &n), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_template_render(t, m, 1, NULL, out, 1, &n), NGPT_ERR_TOO_LONG);
    REJECTS(ngpt_template_render_tokens(t, none, m, 1, NULL, NULL, 0, ids, 8, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_template_render_tokens(NULL, none, m, 1, NULL, NULL, 0, ids, 8, &n), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_chat_message_read_json(&read, &n, NULL, 2), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_chat_message_read_json(&read, &n, "{}", 2), NGPT_ERR_BAD_FORMAT);
    REJECTS(ngpt_chat_message_read_json(&read, &n, "[{\"role\": \"user\", \"tools\": 1}]", 30),
            NGPT_ERR_UNSUPPORTED);
    REJECTS(ngpt_chat_message_write_json(m, 1, out, sizeof out, NULL), NGPT_ERR_NULL_ARG);
    REJECTS(ngpt_chat_message_write_json(&bad, 1, out, sizeof out, &n), NGPT_ERR_BAD_ARG);
    REJECTS(ngpt_chat_message_write_json(m, 1, out, sizeof out, &n), NGPT_ERR_TOO_LONG);
    ngpt_chat_message_free(NULL);
    ngpt_template_free(t);
}

/* ---- every declared function is called above */

static void coverage_of_header(void)
{
    static public_decls decls;
    FILE *self = fopen(__FILE__, "r");
    if (!public_decls_read(&decls) || !self) {
        CHECK(false, "run from the source tree: cannot open include/ngpt.h or %s", __FILE__);
        if (self) fclose(self);
        return;
    }
    static char src[200000];
    size_t n = fread(src, 1, sizeof src - 1, self);
    src[n] = '\0';
    fclose(self);
    for (int i = 0; i < decls.count; i++)
        CHECK(public_decls_called_in(src, decls.name[i]),
              "%s() is declared in ngpt.h but has no bad-input test here", decls.name[i]);
    CHECK(decls.count > 50, "found %d declarations", decls.count);
    printf("public API: %d functions declared, each called with bad input\n", decls.count);
}

int main(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/ngpt-public-api-%d.ngpt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    status_and_info();
    config_functions();
    planning();
    ngpt_context *infer = make(NGPT_MODE_INFER, 1), *train = make(NGPT_MODE_TRAIN, 2);
    if (infer && train) {
        context_functions(infer);
        forward_functions(infer);
        checkpoint_functions(infer, path);
        FILE *f = fopen(path, "w");
        fputs("some training text, long enough for a few windows of four bytes", f);
        fclose(f);
        training_functions(train, infer, path);
        lora_functions(infer, train);
        generation_functions(infer, train);
        grammar_functions(infer);
        session_functions(infer, train, path);
        abort_callback(infer);
    }
    tokenizer_functions(path);
    import_functions(path);
    if (infer) model_tokenizer_functions(infer);
    if (infer) template_functions(infer);
    coverage_of_header();
    naming_by_receiver();
    struct_sizes();
    ngpt_context_free(infer);
    ngpt_context_free(train);
    unlink(path);
    return test_summary("test_public_api");
}
