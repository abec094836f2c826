/* test_checkpoint.c — the .ngpt format: round trips through a file and a
 * memory buffer (a model opened from either: ngpt_model_open and _mem), and
 * every kind of bad file gets its own clear error, no model and no context. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/checkpoint.h"
#include "runtime/config.h"   /* ngpt_config_compare */
#include "test.h"

static char path[256], path2[256];

static ngpt_context *make(ngpt_config cfg, uint64_t seed)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, seed));
    return ctx;
}

static uint64_t params_hash(ngpt_context *ctx)
{
    uint64_t h = 0;
    ngpt_context_params_checksum(ctx, &h);
    return h;
}

/* The parameters' checksum of the model file at path (or the size bytes at
 * data), read by a context made from it; 0 when it does not open. */
static uint64_t model_hash(const char *file, const void *data, size_t size, ngpt_config *cfg)
{
    ngpt_model *m = NULL;
    ngpt_context *ctx = NULL;
    uint64_t h = 0;
    CHECK_OK(file ? ngpt_model_open(&m, file) : ngpt_model_open_mem(&m, data, size));
    if (m && cfg) CHECK_OK(ngpt_model_config(m, cfg));
    if (m) CHECK_OK(ngpt_context_init(&ctx, m, NULL, NULL, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    ngpt_context_free(ctx);
    CHECK_OK(ngpt_model_close(m));
    return h;
}

/* Re-seals a modified image so that only the field under test is wrong. */
static void reseal(unsigned char *b, size_t n)
{
    uint64_t h = XXH3_64bits(b, n - 8);
    memcpy(b + n - 8, &h, 8);
}

static void round_trip(void)
{
    ngpt_context *a = make(test_config_tiny(), 42), *b = make(test_config_tiny(), 7);
    if (!a || !b) return;
    CHECK(params_hash(a) != params_hash(b), "different seeds");
    CHECK_OK(ngpt_context_save(a, path));
    ngpt_config cfg;
    CHECK_HASH(model_hash(path, NULL, 0, &cfg), params_hash(a));
    CHECK(ngpt_config_compare(&cfg, &(ngpt_config){0}) != NGPT_OK && cfg.d_model == 32 && cfg.n_layers == 2,
          "config read back");
    /* The file is the canonical bytes: a model's context saves it again identically. */
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_model_open(&m, path));
    ngpt_context_free(b);
    b = NULL;
    if (m) CHECK_OK(ngpt_context_init(&b, m, &cfg, NULL, NULL, 0));   /* a copy it owns */
    if (b) CHECK_OK(ngpt_context_save(b, path2));
    size_t n1, n2;
    unsigned char *f1 = test_read_file(path, &n1), *f2 = test_read_file(path2, &n2);
    CHECK(f1 && f2 && n1 == n2 && !memcmp(f1, f2, n1), "save is deterministic");
    CHECK(n1 % 64 == 8, "data area is 64-aligned, then 8 checksum bytes (%zu)", n1);
    /* From memory, also at an odd address. */
    unsigned char *odd = malloc(n1 + 1);
    memcpy(odd + 1, f1, n1);
    CHECK_HASH(model_hash(NULL, odd + 1, n1, NULL), params_hash(a));
    /* No temporary file is left beside the checkpoint. */
    char tmpl[300];
    snprintf(tmpl, sizeof tmpl, "ls %s.tmp.* >/dev/null 2>&1", path);
    CHECK(system(tmpl) != 0, "no leftover temporary files");
    free(odd);
    free(f1);
    free(f2);
    ngpt_context_free(a);
    ngpt_context_free(b);
    ngpt_model_close(m);
}

/* A Llama-like model (every switch of the family) saves and loads, and its
 * config reads back from the header. */
static void llama_round_trip(void)
{
    ngpt_config cfg = test_config_tiny();
    const char *set[] = {"norm_type=rms", "norm_eps=1e-6", "mlp=swiglu", "mlp_bias=0",
                         "kv_heads=2", "head_dim=6", "rope_pairs=halves", "tie_lm_head=0"};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) CHECK_OK(ngpt_config_set(&cfg, set[i]));
    ngpt_context *a = make(cfg, 42);
    if (!a) return;
    CHECK_OK(ngpt_context_save(a, path));
    ngpt_config back;
    CHECK_HASH(model_hash(path, NULL, 0, &back), params_hash(a));
    CHECK(ngpt_config_compare(&back, &cfg) == NGPT_OK && back.norm_eps == 1e-6f &&
              back.n_kv_heads == 2 && back.head_dim == 6, "%s", ngpt_last_error());
    ngpt_context_free(a);
}

/* ngpt_config_file_size is the size ngpt_context_save writes, for float32
 * and 8-bit weights and the variants that add or drop tensors. */
static void file_sizes(void)
{
    for (int v = 0; v < 4; v++) {
        ngpt_config cfg = test_config_tiny();
        if (v == 1) cfg.weights = NGPT_WEIGHTS_Q8;
        if (v == 2) cfg.pos = NGPT_POS_LEARNED, cfg.qkv_bias = true, cfg.tie_lm_head = false;
        if (v == 3) cfg.weights = NGPT_WEIGHTS_Q8, cfg.final_norm = false, cfg.tie_lm_head = false;
        ngpt_context *ctx = make(cfg, 3);
        size_t want = 0;
        struct stat sb;
        CHECK_OK(ngpt_config_file_size(&cfg, NULL, &want));
        if (ctx && !ngpt_context_save(ctx, path) && stat(path, &sb) == 0)
            CHECK((size_t)sb.st_size == want, "variant %d: ngpt_config_file_size %zu, the file %lld",
                  v, want, (long long)sb.st_size);
        ngpt_context_free(ctx);
    }
    ngpt_config bad = test_config_tiny();
    size_t n;
    bad.n_heads = 5;
    CHECK_STATUS(ngpt_config_file_size(&bad, NULL, &n), NGPT_ERR_BAD_CONFIG);
}

/* Opens a damaged image; expects `want`, no model, and that the message
 * names the function called. */
static void expect_rejected(const unsigned char *img, size_t n, ngpt_status want, const char *what)
{
    ngpt_model *m = (ngpt_model *)&m;
    ngpt_status st = ngpt_model_open_mem(&m, img, n);
    CHECK(st == want && !strncmp(ngpt_last_error(), "ngpt_model_open_mem: ", 21),
          "%s: got %s want %s (%s)", what, ngpt_status_string(st), ngpt_status_string(want),
          ngpt_last_error());
    CHECK(m == NULL, "%s: no model", what);
    if (st == NGPT_OK) ngpt_model_close(m);
}

static void bad_files(void)
{
    ngpt_context *src = make(test_config_tiny(), 42);
    if (!src) return;
    CHECK_OK(ngpt_context_save(src, path));
    size_t n;
    unsigned char *good = test_read_file(path, &n), *b = malloc(n);
    uint32_t nt;
    memcpy(&nt, good + 24, 4);
    const size_t T0 = NGPT_CKPT_HEADER;            /* first tensor entry */
    uint32_t header;
    memcpy(&header, good + 12, 4);

    /* truncation at many lengths, including inside the header and the data */
    size_t cuts[] = {0, 7, 8, 100, 135, 136, T0 + 50, header, header + 13, n / 2, n - 9, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_rejected(good, cuts[i], NGPT_ERR_BAD_FORMAT, "truncated");
    /* any flipped bit anywhere: checksum (or magic) */
    size_t flips[] = {13, 40, T0 + 3, header + 5, n - 20, n - 3};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        memcpy(b, good, n);
        b[flips[i]] ^= 0x10;
        expect_rejected(b, n, NGPT_ERR_CHECKSUM, "flipped bit");
    }
    memcpy(b, good, n), b[0] = 'X';
    expect_rejected(b, n, NGPT_ERR_BAD_FORMAT, "bad magic");
    /* a file with one extra byte appended */
    unsigned char *longer = malloc(n + 1);
    memcpy(longer, good, n), longer[n] = 0;
    expect_rejected(longer, n + 1, NGPT_ERR_BAD_FORMAT, "trailing byte");
    free(longer);

    /* Well-sealed files whose fields lie: each is caught by validation. */
    struct { size_t off; uint64_t value; int width; ngpt_status want; const char *what; } lies[] = {
        {8, 3, 4, NGPT_ERR_VERSION, "future version"},
        {12, 65, 4, NGPT_ERR_BAD_FORMAT, "header size not 64-aligned"},
        {12, 64, 4, NGPT_ERR_BAD_FORMAT, "tables larger than the header"},
        {24, 1000000, 4, NGPT_ERR_BAD_FORMAT, "tensor count beyond the file"},
        {28, 0xffffffffu, 4, NGPT_ERR_BAD_FORMAT, "metadata count overflowing"},
        {32, 0, 4, NGPT_ERR_BAD_FORMAT, "V = 0 in the config"},
        {48, 3, 4, NGPT_ERR_BAD_FORMAT, "H does not divide C"},
        {64, 2, 1, NGPT_ERR_BAD_FORMAT, "flag byte not 0/1"},
        {70, 2, 1, NGPT_ERR_BAD_FORMAT, "proj_bias byte not 0/1"},
        {70, 1, 1, NGPT_ERR_BAD_FORMAT, "proj_bias without its tensors"},
        {71, 2, 1, NGPT_ERR_BAD_FORMAT, "unknown gelu"},
        {72, 1, 1, NGPT_ERR_BAD_FORMAT, "first reserved byte set"},
        {100, 1, 1, NGPT_ERR_BAD_FORMAT, "reserved byte set"},
        {T0 + 64, 1, 4, NGPT_ERR_BAD_FORMAT, "unknown dtype"},
        {T0 + 68, 5, 4, NGPT_ERR_BAD_FORMAT, "ndim 5"},
        {T0 + 72, 255, 4, NGPT_ERR_BAD_FORMAT, "shape disagrees with bytes"},
        {T0 + 80, 1, 4, NGPT_ERR_BAD_FORMAT, "unused dim set"},
        {T0 + 88, 8, 8, NGPT_ERR_BAD_FORMAT, "data offset inside the header"},
        {T0 + 88, 0xffffffffffffffc0ull, 8, NGPT_ERR_BAD_FORMAT, "data offset overflowing"},
        {T0 + 96, 0xfffffffffffffffcull, 8, NGPT_ERR_BAD_FORMAT, "data bytes overflowing"},
        {T0 + 128 + 88, 0, 8, NGPT_ERR_BAD_FORMAT, "offset not 64-aligned (0 < header)"},
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        memcpy(b, good, n);
        memcpy(b + lies[i].off, &lies[i].value, (size_t)lies[i].width);
        reseal(b, n);
        expect_rejected(b, n, lies[i].want, lies[i].what);
    }
    /* names: unterminated, renamed to an unknown tensor, duplicated, missing */
    memcpy(b, good, n), memset(b + T0, 'a', 64), reseal(b, n);
    expect_rejected(b, n, NGPT_ERR_BAD_FORMAT, "unterminated name");
    memcpy(b, good, n), memcpy(b + T0, "tok_emb.weighX", 14), reseal(b, n);
    expect_rejected(b, n, NGPT_ERR_BAD_FORMAT, "unknown tensor name");
    CHECK(strstr(ngpt_last_error(), "tok_emb.weight") != NULL, "names the tensor: %s", ngpt_last_error());
    memcpy(b, good, n), memcpy(b + T0 + 128, b + T0, 64), reseal(b, n);
    expect_rejected(b, n, NGPT_ERR_BAD_FORMAT, "duplicate name");
    memcpy(b, good, n), memcpy(b + 24, &(uint32_t){nt - 1}, 4), reseal(b, n);
    expect_rejected(b, n, NGPT_ERR_BAD_FORMAT, "missing tensor (ln_f.bias)");
    CHECK(strstr(ngpt_last_error(), "ln_f.bias") != NULL, "names it: %s", ngpt_last_error());
    /* optim.* tensors must mirror a model tensor's shape */
    memcpy(b, good, n), memcpy(b + T0, "optim.m.ln_f.bias\0", 18), reseal(b, n);
    expect_rejected(b, n, NGPT_ERR_BAD_FORMAT, "optim tensor shaped unlike its parameter");

    /* a valid file under another config: config mismatch naming the field,
     * no context */
    ngpt_config other = test_config_tiny();
    other.d_ff = 128;
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_model_open(&m, path));
    ngpt_context *ctx = (ngpt_context *)&ctx;
    if (m) {
        CHECK_STATUS(ngpt_context_init(&ctx, m, &other, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
        CHECK(strstr(ngpt_last_error(), "d_ff") != NULL, "names the field: %s", ngpt_last_error());
        CHECK(ctx == NULL, "no context on a mismatch");
        CHECK_OK(ngpt_model_close(m));
    }
    free(good);
    free(b);
    ngpt_context_free(src);
}

static ssize_t short_write(int fd, const void *buf, size_t n)
{
    static int calls;
    if (++calls % 3 == 0) {     /* every third write hits a full disk */
        errno = ENOSPC;
        return -1;
    }
    return write(fd, buf, n > 100 ? 100 : n);
}

static void io_errors(void)
{
    ngpt_context *a = make(test_config_tiny(), 42), *b = make(test_config_tiny(), 3);
    if (!a || !b) return;
    ngpt_model *m = NULL;
    CHECK_STATUS(ngpt_model_open(&m, "/nonexistent/dir/model.ngpt"), NGPT_ERR_IO);
    CHECK(strstr(ngpt_last_error(), "/nonexistent/dir/model.ngpt") != NULL, "names the path: %s",
          ngpt_last_error());
    CHECK_STATUS(ngpt_model_open(&m, "/"), NGPT_ERR_IO);
    CHECK_STATUS(ngpt_context_save(a, "/nonexistent/dir/model.ngpt"), NGPT_ERR_IO);
    FILE *f = fopen(path2, "wb");
    fputs("not a checkpoint", f);
    fclose(f);
    CHECK_STATUS(ngpt_model_open(&m, path2), NGPT_ERR_BAD_FORMAT);
    f = fopen(path2, "wb");
    fclose(f);
    CHECK_STATUS(ngpt_model_open(&m, path2), NGPT_ERR_BAD_FORMAT);

    /* A failed save (disk full mid-write) reports it and keeps the old file. */
    CHECK_OK(ngpt_context_save(a, path));
    size_t n_old, n_new;
    unsigned char *old = test_read_file(path, &n_old);
    ngpt_ckpt_write_hook = short_write;
    CHECK_STATUS(ngpt_context_save(b, path), NGPT_ERR_IO);
    CHECK(strstr(ngpt_last_error(), "unchanged") != NULL, "says the old file is kept: %s", ngpt_last_error());
    ngpt_ckpt_write_hook = write;
    unsigned char *now = test_read_file(path, &n_new);
    CHECK(old && now && n_old == n_new && !memcmp(old, now, n_old), "previous checkpoint intact");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls %s.tmp.* >/dev/null 2>&1", path);
    CHECK(system(cmd) != 0, "the temporary file was removed");
    CHECK_HASH(model_hash(path, NULL, 0, NULL), params_hash(a));
    CHECK_STATUS(ngpt_context_save(NULL, path), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_context_save(a, NULL), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_model_open_mem(&m, NULL, 10), NGPT_ERR_NULL_ARG);
    free(old);
    free(now);
    ngpt_context_free(a);
    ngpt_context_free(b);
}

int main(void)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/ngpt-test-ckpt-%d.ngpt", dir, (int)getpid());
    snprintf(path2, sizeof path2, "%s/ngpt-test-ckpt2-%d.ngpt", dir, (int)getpid());
    round_trip();
    llama_round_trip();
    bad_files();
    io_errors();
    file_sizes();
    unlink(path);
    unlink(path2);
    return test_summary("test_checkpoint");
}
