/* test_q8.c — 8-bit models (ngpt_config.weights = q8): made the same way by
 * ngpt_context_params_init and by a q8 context made from the float32 original;
 * files round-trip byte for byte; cached prefill and decode equal the full forward bit for
 * bit; a dirty arena with 3 threads and every job split computes what a
 * clean single thread does; the logits stay near the float32 model's; the
 * API refuses what an 8-bit model cannot do; a damaged 8-bit tensor is
 * refused by name; and golden checksums of the inference scenario
 * (scenario.h) that every build reproduces. On the tiny config, its
 * variants, a config whose Linears have rows past their last panel and
 * inputs past their last whole group, and one whose attention (H*D) is
 * wider than d_model and d_ff (the quantizer's rows are the widest input's). */
#include <math.h>
#include <unistd.h>

#include "io/checkpoint.h"      /* the container, to damage an 8-bit tensor */
#include "scenario.h"

static char path[256], path2[256];

static ngpt_config q8_config(const char *sw)
{
    ngpt_config c = test_config_tiny();
    CHECK(test_config_apply(&c, sw), "config %s: %s", sw, ngpt_last_error());
    c.weights = NGPT_WEIGHTS_Q8;
    return c;
}

static ngpt_context *make(const ngpt_config *c, int batch, int seq, uint64_t seed)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.batch = batch, s.seq = seq;
    s.logits_rows = NGPT_LOGITS_ALL;    /* every position's logits, compared whole */
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, c, &s, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, seed));
    return ctx;
}

static uint64_t params_hash(const ngpt_context *ctx)
{
    uint64_t h = 0;
    CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    return h;
}

static void tokens(int32_t *tok, int n, int V)
{
    for (int i = 0; i < n; i++) tok[i] = (unsigned char)TEXT[(i * 7) % (sizeof TEXT - 1)] % V;
}

/* Logits of a full forward over (b, t) tokens, copied into out. */
static void full(ngpt_context *ctx, const int32_t *tok, int b, int t, int V, float *out)
{
    CHECK_OK(ngpt_context_forward(ctx, tok, b, t, NULL, NULL));
    const float *lg = NULL;
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    if (lg) memcpy(out, lg, sizeof(float) * (size_t)b * t * V);
}

/* init quantizes the float32 draw; a q8 context made from the float32
 * file quantizes it; a q8 file's contexts (sharing its weights, or a copy)
 * hold the same weights and save the same bytes. */
static void test_made_and_saved(const char *sw)
{
    ngpt_config c = q8_config(sw), f = c;
    f.weights = NGPT_WEIGHTS_F32;
    ngpt_context *fl = make(&f, 1, 0, 5), *a = make(&c, 1, 0, 5), *b = make(&c, 1, 0, 9), *q;
    ngpt_model *m = NULL;
    if (!fl || !a || !b) goto out;
    CHECK_OK(ngpt_context_save(fl, path));
    CHECK(params_hash(a) != params_hash(b), "[%s] seeds 5 and 9 give one model", sw);
    q = test_context_open(&m, path, &c, NULL);
    if (q) CHECK_HASH(params_hash(q), params_hash(a));
    test_context_close(q, m);
    CHECK_OK(ngpt_context_save(a, path));
    CHECK(test_file_config(path).weights == NGPT_WEIGHTS_Q8, "[%s] the file's config says f32", sw);
    test_file_round_trip(path, &c, params_hash(a), path2, sw);
    /* a float32 context of the 8-bit file is refused */
    CHECK_OK(ngpt_model_open(&m, path));
    q = NULL;
    CHECK_STATUS(ngpt_context_init(&q, m, &f, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    CHECK(strstr(ngpt_last_error(), "weights is q8") != NULL, "%s", ngpt_last_error());
    test_context_close(q, m);
out:
    ngpt_context_free(fl);
    ngpt_context_free(a);
    ngpt_context_free(b);
}

/* Prefill then decode, one token at a time and in batches, equal the full
 * forward's rows bit for bit; and the logits are near the float32 model's. */
static void test_cached_equals_full(const char *sw)
{
    ngpt_config c = q8_config(sw), f = c;
    f.weights = NGPT_WEIGHTS_F32;
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
    CHECK(err <= 0.05 * mag, "[%s] q8 logits differ from f32 by %g (largest %g)", sw, err, mag);
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
static void test_scenario(const char *sw)
{
    ngpt_config c = q8_config(sw);
    results clean = {0}, r = {0};
    char why[256];
    scenario_infer(&c, 3, c.context_len, (variant){1, false, false}, &clean);
    scenario_infer(&c, 3, c.context_len, (variant){3, true, true}, &r);
    CHECK(!memcmp(&clean, &r, sizeof r), "[%s] dirty arena, 3 threads: %s", sw,
          scenario_diff(&r, &clean, why, sizeof why));
}

/* What an 8-bit model is not for, and its tensor table. */
static void test_api(void)
{
    ngpt_config c = q8_config(""), f = c;
    f.weights = NGPT_WEIGHTS_F32;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    ngpt_context *ctx = NULL;
    size_t bytes;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &s, &bytes), NGPT_ERR_WRONG_MODE);
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0), NGPT_ERR_WRONG_MODE);
    CHECK(strstr(ngpt_last_error(), "ngpt_context_init: a model with 8-bit weights") != NULL &&
          strstr(ngpt_last_error(), "ngpt quantize") != NULL, "%s", ngpt_last_error());
    ngpt_config bad = c;
    CHECK_STATUS(ngpt_config_set(&bad, "weights=q2"), NGPT_ERR_BAD_CONFIG);
    bad.weights = (ngpt_weights)7;
    CHECK_STATUS(ngpt_config_validate(&bad), NGPT_ERR_BAD_CONFIG);
    char buf[256];
    ngpt_config_format(&c, buf, sizeof buf);
    CHECK(strstr(buf, " weights=q8") != NULL, "%s", buf);
    ngpt_config_format(&f, buf, sizeof buf);
    CHECK(strstr(buf, "weights") == NULL, "%s", buf);
    size_t nq = 0, nf = 0;
    CHECK_OK(ngpt_config_param_count(&c, &nq));
    CHECK_OK(ngpt_config_param_count(&f, &nf));
    CHECK(nq == nf, "parameter counts %zu and %zu", nq, nf);
    ctx = make(&c, 1, 4, 1);
    if (!ctx) return;
    ngpt_tensor_info ti;
    CHECK_OK(ngpt_context_tensor_find(ctx, "blocks.0.mlp.fc1.weight", &ti));
    CHECK(ti.dtype == NGPT_DTYPE_Q8 && ti.count == 64 * 32, "fc1 is 8-bit");
    CHECK_OK(ngpt_context_tensor_find(ctx, "tok_emb.weight", &ti));
    CHECK(ti.dtype == NGPT_DTYPE_Q8, "the tied embedding is 8-bit");
    CHECK_OK(ngpt_context_tensor_find(ctx, "blocks.1.ln2.bias", &ti));
    CHECK(ti.dtype == NGPT_DTYPE_F32, "a LayerNorm is float32");
    /* the float array holds the float32 tensors only: LayerNorms, fc biases */
    float *p;
    size_t n;
    CHECK_OK(ngpt_context_params(ctx, &p, &n));
    const size_t C = 32, F = 64;
    CHECK(n == 2 * (4 * C + F + C) + 2 * C, "%zu float parameters", n);
    /* they are what the model reads: a write changes the logits */
    int32_t tok[4] = {1, 2, 3, 4};
    uint64_t h0, h1;
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, 4, NULL, NULL));
    CHECK_OK(ngpt_context_logits_checksum(ctx, &h0));
    CHECK_OK(ngpt_context_tensor_find(ctx, "ln_f.bias", &ti));
    p[ti.offset] += 0.5f;
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, 4, NULL, NULL));
    CHECK_OK(ngpt_context_logits_checksum(ctx, &h1));
    CHECK(h0 != h1, "a write to ln_f.bias changes nothing");
    ngpt_context_free(ctx);
}

/* Rewrites byte `at` of an 8-bit tensor's data in a copy of the file,
 * reseals it and expects an open to refuse it, naming the tensor. */
static void expect_damaged(const unsigned char *file, size_t n, const char *tensor, size_t at,
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

/* The bytes of an 8-bit model of config sw (seed 3) saved to path, or NULL. */
static unsigned char *saved_model(const char *sw, size_t *n)
{
    ngpt_config c = q8_config(sw);
    ngpt_context *ctx = make(&c, 1, 4, 3);
    if (!ctx) return NULL;
    CHECK_OK(ngpt_context_save(ctx, path));
    ngpt_context_free(ctx);
    return test_read_file(path, n);
}

static void test_damaged(void)
{
    size_t n;
    unsigned char *file = saved_model("V=125 C=24 d_ff=40", &n);
    if (!file) return;
    const int8_t minus128 = -128, one = 1;
    const float subnormal = 0x1p-130f, negative = -1.0f, inf = INFINITY, fone = 1.0f;
    const char *fc2 = "blocks.0.mlp.fc2.weight";       /* (24, 40): rows 16..23 of 32, k to 64 */
    expect_damaged(file, n, fc2, 64 + 5, &minus128, 1, "-128");
    expect_damaged(file, n, fc2, 0, &subnormal, 4, "subnormal");
    expect_damaged(file, n, fc2, 4, &negative, 4, "negative");
    expect_damaged(file, n, fc2, 8, &inf, 4, "infinite");
    expect_damaged(file, n, fc2, 2 * 576 + 4 * 9, &fone, 4, "past its rows");  /* scale of row 25 */
    expect_damaged(file, n, fc2, 576 + 64 + 3 * 64 + 2 * 4, &one, 1, "past its rows or inputs");
    expect_damaged(file, n, "tok_emb.weight", 7 * 576 + 64 + 63, &one, 1, "past its rows");
    free(file);
}

/* A model over several of the chunks (NGPT_CKPT_HASH_CHUNK) in which an open hashes and
 * checks a file: -128 written into the first block, the last block and
 * every block that straddles a chunk boundary, of every 8-bit tensor, is
 * found and named; not resealed, the same damage is a corrupted file. */
static void test_damaged_across_chunks(void)
{
    size_t n = 0;
    unsigned char *file = saved_model("V=2000 C=64 H=4 L=2 d_ff=200", &n), *b = malloc(n ? n : 1);
    CHECK(file && n > 3 * NGPT_CKPT_HASH_CHUNK, "the model file is %zu bytes, under three chunks", n);
    if (!file || !b) goto out;
    ngpt_ckpt_reader r;
    CHECK_OK(ngpt_ckpt_open_mem(&r, file, n));
    int tensors = 0, tried = 0, straddling = 0;
    for (uint32_t i = 0; i < r.n_tensors; i++) {
        if (ngpt_ckpt_tensor_dtype(&r, i) != NGPT_CKPT_Q8) continue;
        tensors++;
        size_t bytes;
        const size_t off = (size_t)(ngpt_ckpt_tensor_data(&r, i, &bytes) - file);
        const size_t blocks = bytes / NGPT_Q8_BLOCK;
        for (size_t k = 0; k < blocks; k++) {
            const size_t at = off + k * NGPT_Q8_BLOCK, end = at + NGPT_Q8_BLOCK;
            const bool straddles = at / NGPT_CKPT_HASH_CHUNK != (end - 1) / NGPT_CKPT_HASH_CHUNK;
            if (k != 0 && k != blocks - 1 && !straddles) continue;
            straddling += straddles;
            tried++;
            memcpy(b, file, n);
            b[end - 1] = 0x80;      /* -128, the last value of the block */
            uint64_t h = ngpt_checksum_bytes(b, n - 8);
            memcpy(b + n - 8, &h, 8);
            ngpt_model *m = NULL;
            CHECK_STATUS(ngpt_model_open_mem(&m, b, n), NGPT_ERR_BAD_FORMAT);
            CHECK(strstr(ngpt_last_error(), ngpt_ckpt_tensor_name(&r, i)) &&
                  strstr(ngpt_last_error(), "-128"), "block %zu of %s: %s", k,
                  ngpt_ckpt_tensor_name(&r, i), ngpt_last_error());
            ngpt_model_close(m);
            memcpy(b + n - 8, file + n - 8, 8);     /* the old seal */
            CHECK_STATUS(ngpt_model_open_mem(&m, b, n), NGPT_ERR_CHECKSUM);
            ngpt_model_close(m);
        }
    }
    CHECK(straddling >= 2, "only %d blocks straddle a chunk boundary", straddling);
    CHECK(tensors >= 9 && tried >= 2 * tensors + straddling, "%d blocks of %d tensors tried",
          tried, tensors);
    ngpt_ckpt_close(&r);
out:
    free(file);
    free(b);
}

/* Golden: the hash of the inference scenario of an 8-bit model, computed
 * by the scalar reference build; every build must give the same. */
static void test_golden(const char *sw, uint64_t want)
{
    ngpt_config c = q8_config(sw);
    results r = {0};
    scenario_infer(&c, 3, c.context_len, (variant){1, false, false}, &r);
    uint64_t h = ngpt_checksum_bytes(&r, sizeof r);
    CHECK(h == want, "[%s] golden %016" PRIx64 " want %016" PRIx64, sw, h, want);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/ngpt_test_q8_%d.ngpt", (int)getpid());
    snprintf(path2, sizeof path2, "/tmp/ngpt_test_q8_%d_b.ngpt", (int)getpid());
    static const char *const configs[] = {
        "", "V=125 C=24 d_ff=40", "qkv_bias=1 tie_lm_head=0 norm=post final_norm=0 pos=learned",
        "pos=sinusoidal tie_lm_head=0", "pos=learned qkv_bias=1 proj_bias=1 gelu=tanh",
        "V=125 C=24 H=3 head_dim=12 d_ff=16 norm_type=rms mlp=swiglu mlp_bias=0 kv_heads=1",
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        test_made_and_saved(configs[i]);
        test_cached_equals_full(configs[i]);
        test_scenario(configs[i]);
    }
    test_api();
    test_damaged();
    test_damaged_across_chunks();
    test_golden("", 0x5aa3b8b609a1f066);
    test_golden("V=125 C=24 d_ff=40 qkv_bias=1 tie_lm_head=0 norm=post pos=learned",
                0x8601edf6543a3190);
    test_golden("V=125 C=24 d_ff=40 pos=learned qkv_bias=1 proj_bias=1 gelu=tanh", 0xf6da38c9fa8e3bfb);
    unlink(path);
    unlink(path2);
    return test_summary("test_q8");
}
