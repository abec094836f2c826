/* test_regressions.c — one test per bug found by fuzzing or by a bad-input
 * audit of the public functions, stated directly through the public API. The
 * crashing inputs themselves are replayed by test_fuzz_replay
 * (fuzz/regressions/). */
#include <stdlib.h>
#include <unistd.h>

#include "io/checkpoint.h"
#include "test.h"

/* fuzz_checkpoint_mem: a stored config with L = 687865857 passed validation
 * (its parameters fit in 64-bit sizes), then 1 + 10*L + 2 overflowed the int
 * tensor count. Now both this and 3*C (the widest kernel dimension) are
 * checked by validation. */
static void huge_layer_count(void)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = 2, c.d_model = 2, c.n_heads = 1, c.d_ff = 1, c.context_len = 1;
    c.n_layers = 687865857;
    CHECK_STATUS(ngpt_config_validate(&c), NGPT_ERR_OVERFLOW);
    CHECK(strstr(ngpt_last_error(), "L (n_layers") != NULL, "names L: %s", ngpt_last_error());
    c.n_layers = (INT32_MAX - 3) / 10 + 1;
    CHECK_STATUS(ngpt_config_validate(&c), NGPT_ERR_OVERFLOW);
    size_t n;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &(ngpt_shape){.batch = 1, .threads = 1}, &n), NGPT_ERR_OVERFLOW);
    c.n_layers = 1;
    c.d_model = INT32_MAX / 3 + 1 + 1, c.n_heads = 1;     /* even, so D is even */
    CHECK_STATUS(ngpt_config_validate(&c), NGPT_ERR_OVERFLOW);
    CHECK(strstr(ngpt_last_error(), "3*C") != NULL, "names 3*C: %s", ngpt_last_error());
}

/* fuzz_config: ngpt_config_format printed rope_theta=5000006 as
 * "5.00001e+06", so `ngpt info`'s config line given back to --config made a
 * different model. The format now round-trips every float. */
static void format_round_trip(void)
{
    ngpt_config c = ngpt_config_default(), back = ngpt_config_default();
    CHECK_OK(ngpt_config_set(&c, "rope_theta=5000006"));
    CHECK_OK(ngpt_config_set(&c, "dropout=0.123456789"));
    char buf[512];
    ngpt_config_format(&c, buf, sizeof buf);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) CHECK_OK(ngpt_config_set(&back, tok));
    CHECK(back.rope_theta == c.rope_theta && back.dropout == c.dropout, "round trip: %.9g %.9g",
          (double)back.rope_theta, (double)back.dropout);
    /* the defaults still print short */
    ngpt_config_format(&(ngpt_config){ngpt_config_default().vocab_size, 256, 256, 4, 4, 1024, 0.1f,
                                      10000.0f, false, false, true, true, NGPT_NORM_PRE,
                                      NGPT_POS_ROPE, NGPT_GELU_EXACT, NGPT_NORM_LAYER, 1e-5f,
                                      NGPT_MLP_GELU, true, 0, 0, NGPT_ROPE_INTERLEAVED,
                                      NGPT_WEIGHTS_F32, false, NGPT_ROPE_SCALING_NONE, 0, 0, 0,
                                      0, false, 0, 0, 0, 0, 0, 0, false, {0}},
                       buf, sizeof buf);
    CHECK(strstr(buf, "dropout=0.1 rope_theta=10000 ") != NULL, "%s", buf);
}

/* Found with the one above: a config mismatch in rope_theta said "is
 * 5.00001e+06 in the checkpoint but 5.00001e+06 in the context". */
static void mismatch_message_tells_floats_apart(void)
{
    ngpt_config a = ngpt_config_default(), b;
    a.vocab_size = 16, a.context_len = 4, a.d_model = 8, a.n_layers = 1, a.n_heads = 2, a.d_ff = 8;
    b = a;
    a.rope_theta = 5000006.0f, b.rope_theta = 5000005.0f;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_context *ca = NULL, *cb = NULL;
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_context_init(&ca, NULL, &a, &s, NULL, 0));
    char path[256];
    snprintf(path, sizeof path, "%s/ngpt-regress-%d.ngpt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    if (ca) {
        CHECK_OK(ngpt_context_save(ca, path));
        CHECK_OK(ngpt_model_open(&m, path));
        /* a copy of the model under a config that differs in rope_theta only */
        if (m) CHECK_STATUS(ngpt_context_init(&cb, m, &b, &s, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
        CHECK(strstr(ngpt_last_error(), "5000006") && strstr(ngpt_last_error(), "5000005"),
              "names both values: %s", ngpt_last_error());
    }
    unlink(path);
    ngpt_context_free(ca);
    ngpt_context_free(cb);
    ngpt_model_close(m);
}

/* Size audit (32-bit): the writer computed 128 + 128*nt + 64*nm unchecked, so
 * on 32-bit a training checkpoint of a model with 33.5M tensors wrapped the
 * header size and wrote an unreadable file over the old one. Now refused
 * before any file is touched, on every build. */
static const float one_float = 1.0f;
static void one_tensor(void *user, size_t i, ngpt_ckpt_tensor *out)
{
    (void)user, (void)i;
    ngpt_ckpt_tensor t = {.name = "x", .ndim = 1, .shape = {1}, .data = &one_float};
    *out = t;
}

static void writer_table_overflow(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/ngpt-regress-w-%d.ngpt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    const ngpt_config c = ngpt_config_default();
    unsigned char block[NGPT_CKPT_MODEL_BYTES];
    ngpt_ckpt_config_encode(&c, block);
    const size_t counts[] = {(size_t)40 * 1000 * 1000, SIZE_MAX / 64, SIZE_MAX};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        CHECK_STATUS(ngpt_ckpt_write(path, block, counts[i], one_tensor, NULL, NULL, 0), NGPT_ERR_OVERFLOW);
        CHECK(access(path, F_OK) != 0, "no file written for %zu tensors", counts[i]);
    }
    ngpt_ckpt_meta m = {"k", NGPT_META_U64, {.u = 1}};
    CHECK_STATUS(ngpt_ckpt_write(path, block, 1, one_tensor, NULL, &m, SIZE_MAX / 32), NGPT_ERR_OVERFLOW);
}

/* Size audit: batch*seq rows are counted in int by the kernels; a shape
 * whose batch*seq passes 2^31-1 planned fine on 64-bit. */
static void rows_overflow(void)
{
    ngpt_config c = ngpt_config_default();      /* T = 256 */
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = INT32_MAX / 256 + 1;
    size_t bytes;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &s, &bytes), NGPT_ERR_OVERFLOW);
    CHECK(strstr(ngpt_last_error(), "batch*seq") != NULL, "names batch*seq: %s", ngpt_last_error());
    s.batch = INT32_MAX / 256;
    ngpt_status st = ngpt_context_arena_size(NULL, &c, &s, &bytes);
    CHECK(st == (SIZE_MAX > UINT32_MAX ? NGPT_OK : NGPT_ERR_OVERFLOW), "just below: %s",
          ngpt_status_string(st));
}

int main(void)
{
    writer_table_overflow();
    rows_overflow();
    mismatch_message_tells_floats_apart();
    huge_layer_count();
    format_round_trip();
    return test_summary("test_regressions");
}
