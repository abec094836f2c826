/* test_q8.c — 8-bit models (ngpt_config.weights = q8): made the same way by
 * ngpt_context_params_init and by a q8 context made from the float32 original; files round-trip
 * byte for byte; cached prefill and decode equal the full forward bit for
 * bit; a dirty arena with 3 threads and every job split computes what a
 * clean single thread does; the logits stay near the float32 model's; the
 * API refuses what an 8-bit model cannot do; a damaged 8-bit tensor is
 * refused by name; and golden checksums of the inference scenario
 * (scenario.h) that every build reproduces. On the tiny config, its
 * variants, a config whose Linears have rows past their last panel and
 * inputs past their last whole group, and one whose attention (H*D) is
 * wider than d_model and d_ff (the quantizer's rows are the widest input's). */
#include "quant_model.h"

static const ngpt_weights WEIGHTS = NGPT_WEIGHTS_Q8;   /* quant_model.h's tests take it */

/* What an 8-bit model is not for, and its tensor table. */
static void test_api(void)
{
    ngpt_config c = quant_config(WEIGHTS, ""), f = c;
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

static void test_damaged(void)
{
    size_t n;
    unsigned char *file = saved_model(WEIGHTS, "V=125 C=24 d_ff=40", &n);
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
    unsigned char *file = saved_model(WEIGHTS, "V=2000 C=64 H=4 L=2 d_ff=200", &n);
    unsigned char *b = malloc(n ? n : 1);
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

int main(void)
{
    quant_paths("test_q8");
    static const char *const configs[] = {
        "", "V=125 C=24 d_ff=40", "qkv_bias=1 tie_lm_head=0 norm=post final_norm=0 pos=learned",
        "pos=sinusoidal tie_lm_head=0", "pos=learned qkv_bias=1 proj_bias=1 gelu=tanh",
        "V=125 C=24 H=3 head_dim=12 d_ff=16 norm_type=rms mlp=swiglu mlp_bias=0 kv_heads=1",
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        test_made_and_saved(WEIGHTS, configs[i]);
        test_cached_equals_full(WEIGHTS, configs[i], 0.05);
        test_scenario(WEIGHTS, configs[i]);
    }
    test_api();
    test_damaged();
    test_damaged_across_chunks();
    test_golden(WEIGHTS, "", 0x5aa3b8b609a1f066);
    test_golden(WEIGHTS, "V=125 C=24 d_ff=40 qkv_bias=1 tie_lm_head=0 norm=post pos=learned",
                0x8601edf6543a3190);
    test_golden(WEIGHTS, "V=125 C=24 d_ff=40 pos=learned qkv_bias=1 proj_bias=1 gelu=tanh",
                0xf6da38c9fa8e3bfb);
    unlink(path);
    unlink(path2);
    return test_summary("test_q8");
}
