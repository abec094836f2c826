/* test_config.c — config defaults, validation of every field, key=value
 * parsing, and size overflow (also where size_t is 32 bits). */
#include <math.h>

#include "runtime/config.h"   /* ngpt_config_compare */
#include "test.h"

static void defaults(void)
{
    ngpt_config c = ngpt_config_default();
    CHECK(c.vocab_size == 256 && c.context_len == 256 && c.d_model == 256 && c.n_layers == 4 &&
              c.n_heads == 4 && c.d_ff == 1024 && c.dropout == 0.1f && c.rope_theta == 10000.0f,
          "defaults differ from docs/DESIGN.md §1");
    CHECK_OK(ngpt_config_validate(&c));
    size_t n;
    CHECK_OK(ngpt_config_param_count(&c, &n));
    /* V*C + L*(4C + 3C^2 + C^2 + 2*C*F + F + C) + 2C */
    CHECK(n == 256u * 256 + 4u * (4 * 256 + 4 * 256 * 256 + 2 * 256 * 1024 + 1024 + 256) + 512,
          "param count %zu", n);
}

/* Each "key=value" of bad is refused and leaves the config as it was. */
static void check_refused(const ngpt_config *d, const char *const *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ngpt_config before = *d, t = *d;
        CHECK_STATUS(ngpt_config_set(&t, bad[i]), NGPT_ERR_BAD_CONFIG);
        CHECK(!memcmp(&t, &before, sizeof t), "%s changed the config", bad[i]);
    }
}

/* The message must name the field the user has to fix. */
static void expect_bad(ngpt_config c, ngpt_status want, const char *field)
{
    ngpt_status st = ngpt_config_validate(&c);
    CHECK(st == want, "want %s got %s (%s)", ngpt_status_string(want), ngpt_status_string(st),
          ngpt_last_error());
    CHECK(strstr(ngpt_last_error(), field) != NULL, "message \"%s\" should name %s",
          ngpt_last_error(), field);
}

static void validation(void)
{
    ngpt_config d = ngpt_config_default(), c;
    c = d, c.vocab_size = 0, expect_bad(c, NGPT_ERR_BAD_CONFIG, "V");
    c = d, c.context_len = -1, expect_bad(c, NGPT_ERR_BAD_CONFIG, "T");
    c = d, c.d_model = 0, expect_bad(c, NGPT_ERR_BAD_CONFIG, "C");
    c = d, c.n_layers = 0, expect_bad(c, NGPT_ERR_BAD_CONFIG, "L");
    c = d, c.n_heads = 0, expect_bad(c, NGPT_ERR_BAD_CONFIG, "H");
    c = d, c.d_ff = -5, expect_bad(c, NGPT_ERR_BAD_CONFIG, "d_ff");
    c = d, c.n_heads = 3, expect_bad(c, NGPT_ERR_BAD_CONFIG, "divisible");
    c = d, c.d_model = 12, c.n_heads = 4, expect_bad(c, NGPT_ERR_BAD_CONFIG, "even");
    c = d, c.dropout = 1.0f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "dropout");
    c = d, c.dropout = -0.1f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "dropout");
    c = d, c.dropout = NAN, expect_bad(c, NGPT_ERR_BAD_CONFIG, "dropout");
    c = d, c.rope_theta = 0.0f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "rope_theta");
    c = d, c.rope_theta = INFINITY, expect_bad(c, NGPT_ERR_BAD_CONFIG, "rope_theta");
    c = d, c.norm = (ngpt_norm_placement)3, expect_bad(c, NGPT_ERR_BAD_CONFIG, "norm");
    c = d, c.pos = (ngpt_pos_encoding)9, expect_bad(c, NGPT_ERR_BAD_CONFIG, "pos");
    c = d, c.gelu = (ngpt_gelu)2, expect_bad(c, NGPT_ERR_BAD_CONFIG, "gelu");
    /* the variants are valid; the head size only needs to be even for RoPE,
     * C for the sinusoid's sin/cos pairs */
    c = d, c.qkv_bias = true, c.tie_lm_head = false, c.final_norm = false;
    c.norm = NGPT_NORM_POST, c.pos = NGPT_POS_LEARNED, c.proj_bias = true, c.gelu = NGPT_GELU_TANH;
    CHECK_OK(ngpt_config_validate(&c));
    c = d, c.d_model = 12, c.n_heads = 4, c.pos = NGPT_POS_SINUSOIDAL;
    CHECK_OK(ngpt_config_validate(&c));
    c = d, c.d_model = 9, c.n_heads = 3, c.pos = NGPT_POS_LEARNED;
    CHECK_OK(ngpt_config_validate(&c));
    c = d, c.d_model = 9, c.n_heads = 3, c.pos = NGPT_POS_SINUSOIDAL;
    expect_bad(c, NGPT_ERR_BAD_CONFIG, "sinusoidal");
    CHECK_STATUS(ngpt_config_validate(NULL), NGPT_ERR_NULL_ARG);
    c = d, c.context_len = 65536, expect_bad(c, NGPT_ERR_OVERFLOW, "T*T");
}

static void overflow(void)
{
    /* 2^31-1 rows of 2^30 columns overflow 64-bit sizes: an error, never a wrap. */
    ngpt_config c = ngpt_config_default();
    c.vocab_size = INT32_MAX, c.d_model = 1 << 30, c.n_heads = 1 << 29;
    expect_bad(c, NGPT_ERR_OVERFLOW, "overflow");
    size_t bytes;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &(ngpt_shape){.batch = 1, .threads = 1}, &bytes), NGPT_ERR_OVERFLOW);

    /* Sizes that fit 64 bits but not 32: parameters alone are 2^33 floats. */
    c = ngpt_config_default();
    c.d_model = 1 << 16, c.n_heads = 1 << 10, c.vocab_size = 1 << 17;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.seq = 1;
    ngpt_status st = ngpt_context_arena_size(NULL, &c, &s, &bytes);
    if (SIZE_MAX <= UINT32_MAX)
        CHECK(st == NGPT_ERR_OVERFLOW, "32-bit: want overflow, got %s", ngpt_status_string(st));
    else
        CHECK(st == NGPT_OK && (double)bytes > 0x1p35, "64-bit: %s %zu", ngpt_status_string(st), bytes);
    /* The training arena at a huge batch (batch*seq just under 2^31 rows, the
     * kernels' int limit): ~2^41 bytes, only a 64-bit size holds it. */
    c = ngpt_config_default();
    ngpt_shape t = ngpt_shape_default(NGPT_MODE_TRAIN);
    t.batch = INT32_MAX / c.context_len;
    st = ngpt_context_arena_size(NULL, &c, &t, &bytes);
    if (SIZE_MAX <= UINT32_MAX)
        CHECK(st == NGPT_ERR_OVERFLOW, "32-bit: want overflow, got %s", ngpt_status_string(st));
    else
        CHECK(st == NGPT_OK && (double)bytes > 0x1p40, "64-bit: %s %zu", ngpt_status_string(st), bytes);
    t.batch = INT32_MAX;        /* 2^39 rows: more than an int counts, on every build */
    CHECK_STATUS(ngpt_context_arena_size(NULL, &c, &t, &bytes), NGPT_ERR_OVERFLOW);
}

static void parse(void)
{
    ngpt_config c = ngpt_config_default();
    CHECK_OK(ngpt_config_set(&c, "C=64"));
    CHECK_OK(ngpt_config_set(&c, "n_layers=2"));
    CHECK_OK(ngpt_config_set(&c, "dropout=0.25"));
    CHECK_OK(ngpt_config_set(&c, "rope_theta=500"));
    CHECK_OK(ngpt_config_set(&c, "d_ff=128"));
    CHECK_OK(ngpt_config_set(&c, "qkv_bias=false"));
    CHECK_OK(ngpt_config_set(&c, "norm=pre"));
    CHECK_OK(ngpt_config_set(&c, "pos=rope"));
    CHECK(c.d_model == 64 && c.n_layers == 2 && c.dropout == 0.25f && c.rope_theta == 500.0f &&
              c.d_ff == 128, "values not applied");
    /* the variants, and tied_head as tie_lm_head's alias; the format reads back */
    ngpt_config v = c, back = ngpt_config_default();
    CHECK_OK(ngpt_config_set(&v, "qkv_bias=1"));
    CHECK_OK(ngpt_config_set(&v, "tied_head=0"));
    CHECK_OK(ngpt_config_set(&v, "final_norm=no"));
    CHECK_OK(ngpt_config_set(&v, "norm=post"));
    CHECK_OK(ngpt_config_set(&v, "pos=sinusoidal"));
    CHECK(v.qkv_bias && !v.tie_lm_head && !v.final_norm && v.norm == NGPT_NORM_POST &&
              v.pos == NGPT_POS_SINUSOIDAL, "variant values not applied");
    CHECK_OK(ngpt_config_set(&v, "tie_lm_head=1"));
    CHECK_OK(ngpt_config_set(&v, "pos=learned"));
    CHECK(v.tie_lm_head && v.pos == NGPT_POS_LEARNED, "tie_lm_head/pos=learned not applied");
    /* the later switches: printed at the end, only when set */
    char line[256];
    ngpt_config_format(&v, line, sizeof line);
    CHECK(!strstr(line, "proj_bias") && !strstr(line, "gelu"), "defaults print nothing: %s", line);
    CHECK_OK(ngpt_config_set(&v, "proj_bias=1"));
    CHECK_OK(ngpt_config_set(&v, "gelu=tanh"));
    CHECK(v.proj_bias && v.gelu == NGPT_GELU_TANH, "proj_bias/gelu not applied");
    ngpt_config_format(&v, line, sizeof line);
    CHECK(strstr(line, "pos=learned proj_bias=1 gelu=tanh") != NULL, "format: %s", line);
    CHECK(test_config_apply(&back, line), "%s: %s", line, ngpt_last_error());
    CHECK(ngpt_config_compare(&back, &v) == NGPT_OK, "the variant's format does not read back");
    ngpt_config before = c;
    const char *bad[] = {"X=1", "C", "=5", "C=", "C=abc", "C=12x", "C=99999999999", "dropout=x",
                         "dropout=inf", "qkv_bias=maybe", "norm=side", "pos=alibi",
                         "proj_bias=2", "gelu=fast", "gelu=",
                         "a_very_long_key_name_that_is_not_known=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(ngpt_config_set(&c, bad[i]), NGPT_ERR_BAD_CONFIG);
        CHECK(ngpt_config_compare(&c, &before) == NGPT_OK, "config changed by bad input %s", bad[i]);
    }
    CHECK(strstr((ngpt_config_set(&c, "X=1"), ngpt_last_error()), "unknown key") != NULL,
          "message: %s", ngpt_last_error());
    char buf[256];
    ngpt_config_format(&c, buf, sizeof buf);
    CHECK(strstr(buf, "C=64") && strstr(buf, "L=2"), "format: %s", buf);
    /* Formatting then parsing each field gives the same config back. */
    ngpt_config round = ngpt_config_default();
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) CHECK_OK(ngpt_config_set(&round, tok));
    CHECK(ngpt_config_compare(&round, &c) == NGPT_OK, "format/parse round trip: %s", ngpt_last_error());
}

/* The Llama family's switches: parsed, validated, sized, printed only when
 * set, read back from their printed form. */
static void llama_switches(void)
{
    ngpt_config d = ngpt_config_default(), c = d;
    char line[512];
    ngpt_config_format(&d, line, sizeof line);
    CHECK(!strstr(line, "norm_type") && !strstr(line, "norm_eps") && !strstr(line, "mlp") &&
              !strstr(line, "kv_heads") && !strstr(line, "head_dim") && !strstr(line, "rope_pairs"),
          "a default config prints no Llama switch: %s", line);
    const char *set[] = {"norm_type=rms", "norm_eps=1e-6", "mlp=swiglu", "mlp_bias=0",
                         "n_kv_heads=2", "head_dim=48", "rope_pairs=halves"};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) CHECK_OK(ngpt_config_set(&c, set[i]));
    CHECK(c.norm_type == NGPT_NORM_RMS && c.norm_eps == 1e-6f && c.mlp == NGPT_MLP_SWIGLU &&
              !c.mlp_bias && c.n_kv_heads == 2 && c.head_dim == 48 &&
              c.rope_pairs == NGPT_ROPE_HALVES, "Llama switches not applied");
    CHECK_OK(ngpt_config_validate(&c));
    ngpt_config_format(&c, line, sizeof line);
    CHECK(strstr(line, " norm_type=rms norm_eps=1e-06 mlp=swiglu mlp_bias=0 kv_heads=2 "
                       "head_dim=48 rope_pairs=halves") != NULL, "%s", line);
    ngpt_config back = ngpt_config_default();
    CHECK(test_config_apply(&back, line), "%s: %s", line, ngpt_last_error());
    CHECK(ngpt_config_compare(&back, &c) == NGPT_OK, "the Llama format does not read back: %s",
          ngpt_last_error());
    /* kv_heads=H and head_dim=C/H are the defaults spelled out; eps 0 is 1e-5 */
    ngpt_config same = d;
    same.n_kv_heads = d.n_heads, same.head_dim = d.d_model / d.n_heads, same.norm_eps = 0.0f;
    CHECK(ngpt_config_compare(&same, &d) == NGPT_OK, "%s", ngpt_last_error());
    /* sizes: V C + L (2C [RMS] + (H+2KV) D C + C H D + 2F C + C F) + C [ln_f] (+ V C untied) */
    size_t n;
    CHECK_OK(ngpt_config_param_count(&c, &n));
    CHECK(n == 256u * 256 + 4u * (2 * 256 + 8 * 48 * 256 + 256 * 4 * 48 + 3 * 1024 * 256) + 256,
          "Llama-like param count %zu", n);
    /* SmolLM2-135M and -360M have their published parameter counts */
    const char *smol[2] = {"V=49152 T=2048 C=576 L=30 H=9 kv_heads=3 d_ff=1536",
                           "V=49152 T=2048 C=960 L=32 H=15 kv_heads=5 d_ff=2560"};
    const size_t published[2] = {134515008u, 361821120u};
    for (int k = 0; k < 2; k++) {
        ngpt_config m = ngpt_config_default();
        CHECK(test_config_apply(&m, smol[k]) &&
                  test_config_apply(&m, "norm_type=rms mlp=swiglu mlp_bias=0 rope_pairs=halves"),
              "%s", ngpt_last_error());
        CHECK_OK(ngpt_config_param_count(&m, &n));
        CHECK(n == published[k], "[%s] %zu parameters, published %zu", smol[k], n, published[k]);
    }
    /* errors name the field */
    c = d, c.n_kv_heads = 3, expect_bad(c, NGPT_ERR_BAD_CONFIG, "kv_heads");
    c = d, c.n_kv_heads = -1, expect_bad(c, NGPT_ERR_BAD_CONFIG, "kv_heads");
    c = d, c.head_dim = -2, expect_bad(c, NGPT_ERR_BAD_CONFIG, "head_dim");
    c = d, c.head_dim = 7, expect_bad(c, NGPT_ERR_BAD_CONFIG, "head_dim");
    c = d, c.n_heads = 3, c.head_dim = 64;       /* C/H need not be whole with head_dim */
    CHECK_OK(ngpt_config_validate(&c));
    c = d, c.norm_eps = -1e-5f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "norm_eps");
    c = d, c.norm_eps = NAN, expect_bad(c, NGPT_ERR_BAD_CONFIG, "norm_eps");
    c = d, c.norm_type = (ngpt_norm_type)2, expect_bad(c, NGPT_ERR_BAD_CONFIG, "norm_type");
    c = d, c.mlp = (ngpt_mlp)3, expect_bad(c, NGPT_ERR_BAD_CONFIG, "mlp");
    c = d, c.rope_pairs = (ngpt_rope_pairs)2, expect_bad(c, NGPT_ERR_BAD_CONFIG, "rope_pairs");
    const char *bad[] = {"norm_type=batch", "mlp=relu", "mlp_bias=2", "rope_pairs=odd",
                         "kv_heads=x", "norm_eps=inf"};
    check_refused(&d, bad, sizeof bad / sizeof bad[0]);
}

/* A published shape (its family's switches on top) has the published
 * parameter count. */
static void check_published(const char *shape, const char *switches, size_t published)
{
    ngpt_config m = ngpt_config_default();
    size_t n = 0;
    CHECK(test_config_apply(&m, shape) && test_config_apply(&m, switches), "%s",
          ngpt_last_error());
    CHECK_OK(ngpt_config_param_count(&m, &n));
    CHECK(n == published, "[%s] %zu parameters, published %zu", shape, n, published);
}

/* Qwen's and Llama 3's switches: parsed, validated, printed only when
 * set, read back; the Qwen and Llama 3.2 shapes have their published
 * parameter counts. */
static void qwen_switches(void)
{
    ngpt_config d = ngpt_config_default(), c = d;
    char line[512];
    ngpt_config_format(&d, line, sizeof line);
    CHECK(!strstr(line, "qk_norm") && !strstr(line, "rope_scaling"), "default: %s", line);
    CHECK(test_config_apply(&c, "qk_norm=1 rope_scaling=llama3 rope_factor=32 "
                                "rope_low_freq_factor=1 rope_high_freq_factor=4 "
                                "rope_original_context=8192"), "%s", ngpt_last_error());
    CHECK_OK(ngpt_config_validate(&c));
    ngpt_config_format(&c, line, sizeof line);
    CHECK(strstr(line, " qk_norm=1 rope_scaling=llama3 rope_factor=32 rope_low_freq_factor=1 "
                       "rope_high_freq_factor=4 rope_original_context=8192") != NULL, "%s", line);
    ngpt_config back = ngpt_config_default();
    CHECK(test_config_apply(&back, line), "%s: %s", line, ngpt_last_error());
    CHECK(ngpt_config_compare(&back, &c) == NGPT_OK, "%s", ngpt_last_error());
    ngpt_config other = c;
    other.rope_factor = 8.0f;
    CHECK_STATUS(ngpt_config_compare(&other, &c), NGPT_ERR_CONFIG_MISMATCH);
    CHECK(strstr(ngpt_last_error(), "rope_factor") != NULL, "%s", ngpt_last_error());
    /* the longest line still fits 512 bytes */
    ngpt_config big = c;
    CHECK(test_config_apply(&big, "V=2000000000 T=40000 C=2000000000 L=2000000 H=2000000000 "
                                  "d_ff=1000000000 dropout=0.123456789 rope_theta=123456.789 "
                                  "norm_type=rms norm_eps=1.23456789e-7 mlp=swiglu mlp_bias=0 "
                                  "kv_heads=1000000000 head_dim=1000000000 rope_pairs=halves "
                                  "rope_factor=1.23456789 rope_low_freq_factor=1.23456789e-30 "
                                  "rope_high_freq_factor=1.23456789e30 "
                                  "rope_original_context=2000000000 weights=q4 proj_bias=1 "
                                  "gelu=tanh"), "%s", ngpt_last_error());
    char longest[1024];
    ngpt_config_format(&big, longest, sizeof longest);
    CHECK(strlen(longest) < 512, "%zu bytes: %s", strlen(longest), longest);
    /* errors name the field; nothing is changed by a refused value */
    c = d, c.rope_factor = 2.0f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "rope_factor");
    c = d, c.rope_scaling = (ngpt_rope_scaling)2, expect_bad(c, NGPT_ERR_BAD_CONFIG, "rope_scaling");
    ngpt_config l3 = d;
    CHECK(test_config_apply(&l3, "rope_scaling=llama3 rope_factor=8 rope_low_freq_factor=1 "
                                 "rope_high_freq_factor=4 rope_original_context=8192"), "l3");
    c = l3, c.rope_factor = 0.5f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "rope_factor");
    c = l3, c.rope_high_freq_factor = 1.0f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "rope_high_freq_factor");
    c = l3, c.rope_low_freq_factor = 0.0f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "rope_low_freq_factor");
    c = l3, c.rope_original_context = 0, expect_bad(c, NGPT_ERR_BAD_CONFIG, "rope_original_context");
    c = l3, c.pos = NGPT_POS_LEARNED, expect_bad(c, NGPT_ERR_BAD_CONFIG, "pos=rope");
    const char *bad[] = {"qk_norm=2", "rope_scaling=yarn", "rope_factor=x",
                         "rope_original_context=1.5"};
    check_refused(&d, bad, sizeof bad / sizeof bad[0]);
    /* the published counts: Qwen2.5-0.5B and -1.5B (q, k, v biased), Qwen3-0.6B
     * (qk_norm, head_dim 128), Llama-3.2-1B; all tied */
    const char *shapes[4] = {
        "V=151936 T=4096 C=896 L=24 H=14 kv_heads=2 d_ff=4864 qkv_bias=1",
        "V=151936 T=4096 C=1536 L=28 H=12 kv_heads=2 d_ff=8960 qkv_bias=1",
        "V=151936 T=4096 C=1024 L=28 H=16 kv_heads=8 head_dim=128 d_ff=3072 qk_norm=1",
        ("V=128256 T=4096 C=2048 L=16 H=32 kv_heads=8 d_ff=8192 rope_scaling=llama3 "
         "rope_factor=32 rope_low_freq_factor=1 rope_high_freq_factor=4 rope_original_context=8192"),
    };
    const size_t published[4] = {494032768u, 1543714304u, 596049920u, 1235814400u};
    for (int k = 0; k < 4; k++)
        check_published(shapes[k], "norm_type=rms mlp=swiglu mlp_bias=0 rope_pairs=halves",
                        published[k]);
}

/* Gemma 3's switches: parsed, validated, printed only when set, read back,
 * refused by name; the longest line fits 768 bytes (ngpt.h); Gemma-3-270M's
 * and -1B's shapes have their published parameter counts. */
static void gemma_switches(void)
{
    ngpt_config d = ngpt_config_default(), c = d;
    char line[512];
    const char *gemma = "norm_type=rms norm_offset=1 norm=sandwich mlp=geglu gelu=tanh "
                        "sliding_window=512 sliding_pattern=6 rope_local_theta=10000 "
                        "attn_scalar=256 logit_softcap=30 emb_scale=25.25";
    CHECK(test_config_apply(&c, gemma), "%s", ngpt_last_error());
    CHECK_OK(ngpt_config_validate(&c));
    ngpt_config_format(&c, line, sizeof line);
    CHECK(strstr(line, " norm=sandwich ") && strstr(line, " mlp=geglu") &&
              strstr(line, " norm_offset=1 sliding_window=512 sliding_pattern=6 "
                           "rope_local_theta=10000 attn_scalar=256 logit_softcap=30 "
                           "emb_scale=25.25") != NULL, "%s", line);
    ngpt_config back = ngpt_config_default();
    CHECK(test_config_apply(&back, line), "%s: %s", line, ngpt_last_error());
    CHECK(ngpt_config_compare(&back, &c) == NGPT_OK, "%s", ngpt_last_error());
    const char *fields[] = {"sliding_pattern=3", "attn_scalar=64", "emb_scale=2"};
    const char *names[] = {"sliding_pattern", "attn_scalar", "emb_scale"};
    for (int i = 0; i < 3; i++) {
        ngpt_config other = c;
        CHECK(test_config_apply(&other, fields[i]), "%s", fields[i]);
        CHECK_STATUS(ngpt_config_compare(&other, &c), NGPT_ERR_CONFIG_MISMATCH);
        CHECK(strstr(ngpt_last_error(), names[i]) != NULL, "%s", ngpt_last_error());
    }
    ngpt_config big = c;
    CHECK(test_config_apply(&big, "V=2000000000 T=40000 C=2000000000 L=2000000 H=2000000000 "
                                  "d_ff=1000000000 dropout=0.123456789 rope_theta=123456.789 "
                                  "norm_eps=1.23456789e-7 mlp_bias=0 "
                                  "kv_heads=1000000000 head_dim=1000000000 rope_pairs=halves "
                                  "qk_norm=1 rope_scaling=llama3 "
                                  "rope_factor=1.23456789 rope_low_freq_factor=1.23456789e-30 "
                                  "rope_high_freq_factor=1.23456789e30 "
                                  "rope_original_context=2000000000 weights=q4 proj_bias=1 "
                                  "sliding_window=2000000000 sliding_pattern=255 "
                                  "rope_local_theta=1.23456789e30 attn_scalar=1.23456789e30 "
                                  "logit_softcap=1.23456789e30 emb_scale=1.23456789e30"),
          "%s", ngpt_last_error());
    char longest[1024];
    ngpt_config_format(&big, longest, sizeof longest);
    CHECK(strlen(longest) < 768, "%zu bytes: %s", strlen(longest), longest);
    /* errors name the field; nothing is changed by a refused value */
    c = d, c.norm_offset = true, expect_bad(c, NGPT_ERR_BAD_CONFIG, "norm_offset");
    c = d, c.sliding_window = -1, expect_bad(c, NGPT_ERR_BAD_CONFIG, "sliding_window");
    c = d, c.sliding_window = 8, c.sliding_pattern = 256,
    expect_bad(c, NGPT_ERR_BAD_CONFIG, "sliding_pattern");
    c = d, c.sliding_pattern = 2, expect_bad(c, NGPT_ERR_BAD_CONFIG, "sliding_window");
    c = d, c.rope_local_theta = 5.0f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "sliding_window");
    c = d, c.attn_scalar = -1.0f, expect_bad(c, NGPT_ERR_BAD_CONFIG, "attn_scalar");
    c = d, c.logit_softcap = INFINITY, expect_bad(c, NGPT_ERR_BAD_CONFIG, "logit_softcap");
    c = d, c.emb_scale = NAN, expect_bad(c, NGPT_ERR_BAD_CONFIG, "emb_scale");
    c = d, c.norm = (ngpt_norm_placement)3, expect_bad(c, NGPT_ERR_BAD_CONFIG, "norm");
    const char *bad[] = {"norm=both", "mlp=reglu", "norm_offset=2", "sliding_window=x",
                         "attn_scalar=y"};
    check_refused(&d, bad, sizeof bad / sizeof bad[0]);
    /* the published counts (huggingface.co/google/gemma-3-270m, gemma-3-1b-pt):
     * four norms of C and q/k norms of head_dim 256 per layer, tied */
    const char *shapes[2] = {
        "V=262144 T=4096 C=640 L=18 H=4 kv_heads=1 head_dim=256 d_ff=2048",
        "V=262144 T=4096 C=1152 L=26 H=4 kv_heads=1 head_dim=256 d_ff=6912",
    };
    const size_t published[2] = {268098176u, 999885952u};
    for (int k = 0; k < 2; k++)
        check_published(shapes[k], "norm_type=rms mlp=geglu gelu=tanh mlp_bias=0 "
                                    "rope_pairs=halves qk_norm=1 norm=sandwich norm_offset=1 "
                                    "sliding_window=512 sliding_pattern=6", published[k]);
}

int main(void)
{
    defaults();
    qwen_switches();
    gemma_switches();
    validation();
    overflow();
    parse();
    llama_switches();
    return test_summary("test_config");
}
