/* test_q4.c — 4-bit models (ngpt_config.weights = q4): the blocks' Linears
 * 4-bit, the lm_head 8-bit; made the same way by ngpt_context_params_init and by
 * a q4 context made from the float32 original; files round-trip byte for byte; cached
 * prefill and decode equal the full forward bit for bit; a dirty arena
 * with 3 threads and every job split computes what a clean single thread
 * does; the logits stay near the float32 model's; a q8 file does not
 * become q4; a damaged 4-bit tensor is refused by name; and golden
 * checksums of the inference scenario (scenario.h) that every build
 * reproduces. On the tiny config, its variants, and a config whose
 * Linears have rows past their last panel and inputs past their last
 * whole group. */
#include <math.h>
#include <unistd.h>

#include "io/checkpoint.h"      /* the container, to damage a 4-bit tensor */
#include "scenario.h"

static char path[256], path2[256];

static ngpt_config q4_config(const char *sw)
{
    ngpt_config c = test_config_tiny();
    CHECK(test_config_apply(&c, sw), "config %s: %s", sw, ngpt_last_error());
    c.weights = NGPT_WEIGHTS_Q4;
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

static void full(ngpt_context *ctx, const int32_t *tok, int b, int t, int V, float *out)
{
    CHECK_OK(ngpt_context_forward(ctx, tok, b, t, NULL, NULL));
    const float *lg = NULL;
    CHECK_OK(ngpt_context_logits(ctx, &lg));
    if (lg) memcpy(out, lg, sizeof(float) * (size_t)b * t * V);
}

/* init quantizes the float32 draw; a q4 context made from the float32
 * file quantizes it; a q4 file's contexts (sharing its weights, or a copy)
 * hold the same weights and save the same bytes; f32 and q8 contexts of it
 * are refused, and a q4 context of a q8 file. */
static void test_made_and_saved(const char *sw)
{
    ngpt_config c = q4_config(sw), f = c, q8 = c;
    f.weights = NGPT_WEIGHTS_F32, q8.weights = NGPT_WEIGHTS_Q8;
    ngpt_context *fl = make(&f, 1, 0, 5), *a = make(&c, 1, 0, 5), *b = make(&c, 1, 0, 9);
    ngpt_context *e = make(&q8, 1, 0, 5), *q;
    ngpt_model *m = NULL;
    if (!fl || !a || !b || !e) goto out;
    CHECK_OK(ngpt_context_save(fl, path));
    CHECK(params_hash(a) != params_hash(b), "[%s] seeds 5 and 9 give one model", sw);
    CHECK(params_hash(a) != params_hash(e), "[%s] q4 and q8 give one model", sw);
    q = test_context_open(&m, path, &c, NULL);
    if (q) CHECK_HASH(params_hash(q), params_hash(a));
    test_context_close(q, m);
    CHECK_OK(ngpt_context_save(a, path));
    CHECK(test_file_config(path).weights == NGPT_WEIGHTS_Q4, "[%s] the file's config is not q4",
          sw);
    test_file_round_trip(path, &c, params_hash(a), path2, sw);
    CHECK_OK(ngpt_model_open(&m, path));
    q = NULL;
    CHECK_STATUS(ngpt_context_init(&q, m, &f, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    CHECK(strstr(ngpt_last_error(), "weights is q4") != NULL, "%s", ngpt_last_error());
    CHECK_STATUS(ngpt_context_init(&q, m, &q8, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    test_context_close(q, m);
    CHECK_OK(ngpt_context_save(e, path2));
    CHECK_OK(ngpt_model_open(&m, path2));
    CHECK_STATUS(ngpt_context_init(&q, m, &c, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    CHECK(strstr(ngpt_last_error(), "ngpt_context_init: ") && strstr(ngpt_last_error(), "8-bit") &&
          strstr(ngpt_last_error(), "float32 original"), "%s", ngpt_last_error());
    test_context_close(q, m);
out:
    ngpt_context_free(fl);
    ngpt_context_free(a);
    ngpt_context_free(b);
    ngpt_context_free(e);
}

/* Prefill then decode equal the full forward's rows bit for bit; the
 * logits are near the float32 model's. */
static void test_cached_equals_full(const char *sw)
{
    ngpt_config c = q4_config(sw), f = c;
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
    CHECK(err <= 0.2 * mag, "[%s] q4 logits differ from f32 by %g (largest %g)", sw, err, mag);
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

static void test_scenario(const char *sw)
{
    ngpt_config c = q4_config(sw);
    results clean = {0}, r = {0};
    char why[256];
    scenario_infer(&c, 3, c.context_len, (variant){1, false, false}, &clean);
    scenario_infer(&c, 3, c.context_len, (variant){3, true, true}, &r);
    CHECK(!memcmp(&clean, &r, sizeof r), "[%s] dirty arena, 3 threads: %s", sw,
          scenario_diff(&r, &clean, why, sizeof why));
}

/* What a 4-bit model is not for, and its tensor table. */
static void test_api(void)
{
    ngpt_config c = q4_config("");
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    ngpt_context *ctx = NULL;
    size_t bytes;
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0), NGPT_ERR_WRONG_MODE);
    CHECK(strstr(ngpt_last_error(), "ngpt_context_init: a model with 4-bit weights (weights=q4)") != NULL &&
          strstr(ngpt_last_error(), "ngpt quantize") != NULL, "%s", ngpt_last_error());
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &s, &bytes), NGPT_ERR_WRONG_MODE);
    ngpt_config set = test_config_tiny();
    CHECK_OK(ngpt_config_set(&set, "weights=q4"));
    CHECK(set.weights == NGPT_WEIGHTS_Q4, "weights=q4 sets q4");
    char buf[256];
    ngpt_config_format(&c, buf, sizeof buf);
    CHECK(strstr(buf, " weights=q4") != NULL, "%s", buf);
    /* the quantized bytes: 4-bit blocks, the head 8-bit */
    size_t b4 = 0, b8 = 0;
    ngpt_shape si = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_config q8 = c;
    q8.weights = NGPT_WEIGHTS_Q8;
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &si, &b4));
    CHECK_OK(ngpt_context_arena_size(NULL, &q8, &si, &b8));
    CHECK(b4 < b8, "a q4 arena (%zu) is not smaller than a q8 one (%zu)", b4, b8);
    ctx = make(&c, 1, 4, 1);
    if (!ctx) return;
    ngpt_tensor_info ti;
    CHECK_OK(ngpt_context_tensor_find(ctx, "blocks.0.mlp.fc1.weight", &ti));
    CHECK(ti.dtype == NGPT_DTYPE_Q4 && ti.count == 64 * 32, "fc1 is 4-bit");
    CHECK_OK(ngpt_context_tensor_find(ctx, "blocks.1.attn.qkv.weight", &ti));
    CHECK(ti.dtype == NGPT_DTYPE_Q4, "qkv is 4-bit");
    CHECK_OK(ngpt_context_tensor_find(ctx, "tok_emb.weight", &ti));
    CHECK(ti.dtype == NGPT_DTYPE_Q8, "the tied embedding is 8-bit");
    CHECK_OK(ngpt_context_tensor_find(ctx, "blocks.1.ln2.bias", &ti));
    CHECK(ti.dtype == NGPT_DTYPE_F32, "a LayerNorm is float32");
    ngpt_context_free(ctx);
}

/* Rewrites bytes of a tensor's data in a copy of the file, reseals it and
 * expects an open to refuse it, naming the tensor. */
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

static void test_damaged(void)
{
    ngpt_config c = q4_config("V=125 C=24 d_ff=40");
    ngpt_context *ctx = make(&c, 1, 4, 3);
    if (!ctx) return;
    CHECK_OK(ngpt_context_save(ctx, path));
    ngpt_context_free(ctx);
    size_t n;
    unsigned char *file = test_read_file(path, &n);
    if (!file) return;
    const uint8_t one = 1, high = 0x10;
    const float subnormal = 0x1p-130f, inf = INFINITY, fone = 1.0f;
    const char *fc2 = "blocks.0.mlp.fc2.weight";       /* (24, 40): rows 16..23 of 32, k to 64 */
    expect_damaged(file, n, fc2, 0, &subnormal, 4, "subnormal");
    expect_damaged(file, n, fc2, 8, &inf, 4, "infinite");
    expect_damaged(file, n, fc2, 2 * 320 + 4 * 9, &fone, 4, "past its rows");  /* scale of row 25 */
    /* row 0, group 1 (inputs 32..63): input 40 is byte 64 + 2*64 + 0, low nibble */
    expect_damaged(file, n, fc2, 320 + 64 + 2 * 64, &one, 1, "past its rows or inputs");
    /* row 0, group 1: input 48 (high nibble of quad 0) */
    expect_damaged(file, n, fc2, 320 + 64, &high, 1, "past its rows or inputs");
    /* proj (24, 24): row 24 (panel 1, row 8) is past its rows */
    expect_damaged(file, n, "blocks.0.attn.proj.weight", 320 + 64 + 8 * 4, &one, 1, "past its rows");
    free(file);
}

/* Golden: the hash of the inference scenario of a 4-bit model; every
 * build must give the same. */
static void test_golden(const char *sw, uint64_t want)
{
    ngpt_config c = q4_config(sw);
    results r = {0};
    scenario_infer(&c, 3, c.context_len, (variant){1, false, false}, &r);
    uint64_t h = ngpt_checksum_bytes(&r, sizeof r);
    CHECK(h == want, "[%s] golden %016" PRIx64 " want %016" PRIx64, sw, h, want);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/ngpt_test_q4_%d.ngpt", (int)getpid());
    snprintf(path2, sizeof path2, "/tmp/ngpt_test_q4_%d_b.ngpt", (int)getpid());
    static const char *const configs[] = {
        "", "V=125 C=24 d_ff=40", "qkv_bias=1 tie_lm_head=0 norm=post final_norm=0 pos=learned",
        "pos=sinusoidal tie_lm_head=0", "pos=learned qkv_bias=1 proj_bias=1 gelu=tanh",
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        test_made_and_saved(configs[i]);
        test_cached_equals_full(configs[i]);
        test_scenario(configs[i]);
    }
    test_api();
    test_damaged();
    test_golden("", 0x444f11b9a282dce4);
    test_golden("V=125 C=24 d_ff=40 qkv_bias=1 tie_lm_head=0 norm=post pos=learned",
                0x46d078cf70f114be);
    test_golden("V=125 C=24 d_ff=40 pos=learned qkv_bias=1 proj_bias=1 gelu=tanh", 0xa132e14043898f9f);
    unlink(path);
    unlink(path2);
    return test_summary("test_q4");
}
