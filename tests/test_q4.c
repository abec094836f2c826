/* test_q4.c — 4-bit models (ngpt_config.weights = q4): the blocks' Linears
 * 4-bit, the lm_head 8-bit (lm_head_q4: 4-bit too); made the same way by ngpt_context_params_init and by
 * a q4 context made from the float32 original; files round-trip byte for byte; cached
 * prefill and decode equal the full forward bit for bit; a dirty arena
 * with 3 threads and every job split computes what a clean single thread
 * does; the logits stay near the float32 model's; a q8 file does not
 * become q4; a damaged 4-bit tensor is refused by name; and golden
 * checksums of the inference scenario (scenario.h) that every build
 * reproduces. On the tiny config, its variants, and a config whose
 * Linears have rows past their last panel and inputs past their last
 * whole group. */
#include "q4.h"
#include "quant_model.h"

static const ngpt_weights WEIGHTS = NGPT_WEIGHTS_Q4;   /* quant_model.h's tests take it */

/* A q4 model is not a q8 one: their weights differ, and neither context
 * loads the other's file. */
static void test_not_q8(const char *sw)
{
    ngpt_config c = quant_config(WEIGHTS, sw), q8 = c;
    q8.weights = NGPT_WEIGHTS_Q8, q8.lm_head_q4 = false;
    ngpt_context *a = make(&c, 1, 0, 5), *e = make(&q8, 1, 0, 5);
    if (!a || !e) goto out;
    CHECK(params_hash(a) != params_hash(e), "[%s] q4 and q8 give one model", sw);
    ngpt_model *m = NULL;
    ngpt_context *q = NULL;
    CHECK_OK(ngpt_context_save(a, path));
    CHECK_OK(ngpt_model_open(&m, path));
    CHECK_STATUS(ngpt_context_init(&q, m, &q8, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    test_context_close(q, m);
    CHECK_OK(ngpt_context_save(e, path2));
    CHECK_OK(ngpt_model_open(&m, path2));
    CHECK_STATUS(ngpt_context_init(&q, m, &c, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    CHECK(strstr(ngpt_last_error(), "ngpt_context_init: ") && strstr(ngpt_last_error(), "8-bit") &&
          strstr(ngpt_last_error(), "float32 original"), "%s", ngpt_last_error());
    test_context_close(q, m);
out:
    ngpt_context_free(a);
    ngpt_context_free(e);
}

/* What a 4-bit model is not for, and its tensor table. */
static void test_api(void)
{
    ngpt_config c = quant_config(WEIGHTS, "");
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

/* lm_head_q4: the lm_head (tied: the embedding) 4-bit; q4 only; a q4 file
 * with an 8-bit head does not become one, nor the other way round. */
static void test_head4(void)
{
    ngpt_config c = quant_config(WEIGHTS, "lm_head_q4=1"), q4 = c, bad = c;
    q4.lm_head_q4 = false;
    CHECK(c.lm_head_q4, "lm_head_q4=1 sets it");
    char buf[256];
    ngpt_config_format(&c, buf, sizeof buf);
    CHECK(strstr(buf, " weights=q4 lm_head_q4=1") != NULL, "%s", buf);
    bad.weights = NGPT_WEIGHTS_Q8;
    CHECK_STATUS(ngpt_config_validate(&bad), NGPT_ERR_BAD_CONFIG);
    CHECK(strstr(ngpt_last_error(), "lm_head_q4 needs weights=q4") != NULL, "%s", ngpt_last_error());
    size_t b4 = 0, bh = 0;
    ngpt_shape si = ngpt_shape_default(NGPT_MODE_INFER);
    CHECK_OK(ngpt_context_arena_size(NULL, &q4, &si, &b4));
    CHECK_OK(ngpt_context_arena_size(NULL, &c, &si, &bh));
    const size_t saved = ngpt_q8_packed_bytes(c.vocab_size, c.d_model) -
                         ngpt_q4_packed_bytes(c.vocab_size, c.d_model);
    CHECK(b4 - bh == saved, "a 4-bit head saves %zu bytes, not %zu", b4 - bh, saved);
    ngpt_context *a = make(&c, 1, 4, 5), *e = make(&q4, 1, 4, 5), *q = NULL;
    ngpt_model *m = NULL;
    if (!a || !e) goto out;
    ngpt_tensor_info ti;
    CHECK_OK(ngpt_context_tensor_find(a, "tok_emb.weight", &ti));
    CHECK(ti.dtype == NGPT_DTYPE_Q4, "the tied embedding is 4-bit");
    CHECK(params_hash(a) != params_hash(e), "a 4-bit head changes nothing");
    CHECK_OK(ngpt_context_save(a, path));
    const ngpt_config fc = test_file_config(path);
    CHECK(fc.weights == NGPT_WEIGHTS_Q4 && fc.lm_head_q4, "the file's config is not q4 lm_head_q4");
    size_t n;
    unsigned char *file = test_read_file(path, &n);
    CHECK(file && n > 69 && file[69] == 3, "byte 69 of a q4 lm_head_q4 file is not 3");
    free(file);
    CHECK_OK(ngpt_model_open(&m, path));
    CHECK_STATUS(ngpt_context_init(&q, m, &q4, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    CHECK(strstr(ngpt_last_error(), "lm_head_q4=1 in the model") != NULL, "%s", ngpt_last_error());
    test_context_close(q, m);
    CHECK_OK(ngpt_context_save(e, path2));
    CHECK_OK(ngpt_model_open(&m, path2));
    CHECK_STATUS(ngpt_context_init(&q, m, &c, NULL, NULL, 0), NGPT_ERR_CONFIG_MISMATCH);
    CHECK(strstr(ngpt_last_error(), "8-bit lm_head") && strstr(ngpt_last_error(), "float32 original"),
          "%s", ngpt_last_error());
    test_context_close(q, m);
out:
    ngpt_context_free(a);
    ngpt_context_free(e);
}

static void test_damaged(void)
{
    size_t n;
    unsigned char *file = saved_model(WEIGHTS, "V=125 C=24 d_ff=40", &n);
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

int main(void)
{
    quant_paths("test_q4");
    static const char *const configs[] = {
        "", "V=125 C=24 d_ff=40", "qkv_bias=1 tie_lm_head=0 norm=post final_norm=0 pos=learned",
        "pos=sinusoidal tie_lm_head=0", "pos=learned qkv_bias=1 proj_bias=1 gelu=tanh",
        "lm_head_q4=1", "V=125 C=24 d_ff=40 lm_head_q4=1", "tie_lm_head=0 lm_head_q4=1",
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        test_made_and_saved(WEIGHTS, configs[i]);
        test_not_q8(configs[i]);
        test_cached_equals_full(WEIGHTS, configs[i], 0.2);
        test_scenario(WEIGHTS, configs[i]);
    }
    test_api();
    test_head4();
    test_damaged();
    test_golden(WEIGHTS, "", 0x444f11b9a282dce4);
    test_golden(WEIGHTS, "V=125 C=24 d_ff=40 qkv_bias=1 tie_lm_head=0 norm=post pos=learned",
                0x46d078cf70f114be);
    test_golden(WEIGHTS, "V=125 C=24 d_ff=40 pos=learned qkv_bias=1 proj_bias=1 gelu=tanh",
                0xa132e14043898f9f);
    test_golden(WEIGHTS, "lm_head_q4=1", 0x517d8745d8492c12);
    test_golden(WEIGHTS, "V=125 C=24 d_ff=40 tie_lm_head=0 lm_head_q4=1", 0x56ed92d6114bc044);
    unlink(path);
    unlink(path2);
    return test_summary("test_q4");
}
